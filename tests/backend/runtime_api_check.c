/* Checks the interface other parts of the backend build on
 * (backend/runtime/runtime.h) against two real sandboxes: sockets made in
 * each sandbox's network namespace, accounts read from each sandbox's own
 * /etc/passwd and /etc/group, and the root directory. Run by
 * tests/node/backend-runtime-api.test.mjs; needs root (isolation full).
 *
 *   runtime-api-check TEMPLATES_DIR      prints "ok" and exits 0, or names the failure */
#include "check_program.h"
#include "lib/err.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_users.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static struct sockaddr_in loopback_8000(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(8000)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int listen_8000(int s)
{
	struct sockaddr_in a = loopback_8000();
	if (bind(s, (struct sockaddr *)&a, sizeof a) != 0)
		return -1;
	return listen(s, 4);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: runtime-api-check TEMPLATES_DIR\n");
		return 2;
	}
	/* Its sandboxes' cgroups live under e2b-local/b<pid>, where any backend
	 * that starts removes the groups of owners that are no live
	 * e2b-local-backend (runtime_leftovers.c, by the process name): named
	 * so, this check is one, and a backend starting meanwhile leaves it be. */
	prctl(PR_SET_NAME, "e2b-local-backend");
	struct event_base *base = event_base_new();
	char state[] = "/tmp/runtime-api-check.XXXXXX";
	if (!base || !mkdtemp(state))
		return 1;
	if (runtime_init(base, ISOLATION_FULL, argv[1], state) != 0)
		return 1;
	char sandboxes[64];
	snprintf(sandboxes, sizeof sandboxes, "%s/sandboxes", state);
	mkdir(sandboxes, 0700);
	struct registry *reg = registry_new(base, sandboxes, "runtime-api-check");
	struct sandbox_spec spec = {.template_id = "base",
		.timeout_s = 60,
		.allow_internet_access = -1,
		.cpu_count = 1,
		.memory_mb = 256,
		.disk_size_mb = SANDBOX_DEFAULT_DISK_SIZE_MB};
	struct err err;
	struct sandbox *a = registry_create(reg, &spec, &err);
	struct sandbox *b = a ? registry_create(reg, &spec, &err) : NULL;
	if (!a || !b) {
		printf("FAIL: cannot create sandboxes: %s\n", err.msg);
		return 1;
	}

	/* Ports: both sandboxes listen on 8000; a connection made in a reaches a. */
	int la = runtime_socket(a, AF_INET, SOCK_STREAM, 0);
	int lb = runtime_socket(b, AF_INET, SOCK_STREAM, 0);
	CHECK(la >= 0 && lb >= 0, "runtime_socket: %s", strerror(errno));
	CHECK(listen_8000(la) == 0, "a listens on 8000: %s", strerror(errno));
	CHECK(listen_8000(lb) == 0, "b listens on 8000 as well: %s", strerror(errno));
	int ca = runtime_socket(a, AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in to = loopback_8000();
	CHECK(connect(ca, (struct sockaddr *)&to, sizeof to) == 0, "connect inside a: %s", strerror(errno));
	int accepted = accept(la, NULL, NULL);
	CHECK(accepted >= 0, "a's listener gets a's connection");
	/* The backend's own namespace is untouched: nothing listens on 8000 there
	 * (unless the host has something of its own on that port). */
	int host = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in any = loopback_8000();
	any.sin_port = 0;
	CHECK(bind(host, (struct sockaddr *)&any, sizeof any) == 0, "the backend's own sockets still work");

	/* Accounts from the sandbox's own files. */
	uid_t uid = 0;
	gid_t gid = 0;
	char home[64] = "", name[32] = "";
	CHECK(runtime_user_by_name(a, "user", &uid, &gid, home, sizeof home) == 0, "user exists");
	CHECK(uid == 1000 && gid == 1000 && strcmp(home, "/home/user") == 0, "user is %u:%u %s", uid, gid,
		home);
	CHECK(runtime_user_by_name(a, "root", &uid, &gid, home, sizeof home) == 0 && uid == 0 &&
			strcmp(home, "/root") == 0,
		"root is 0 with /root");
	CHECK(runtime_user_by_name(a, "nobody-here", &uid, &gid, home, sizeof home) == -1, "unknown user");
	CHECK(runtime_user_by_name(a, "user", &uid, &gid, home, 4) == -1,
		"a home that does not fit is an error");
	CHECK(runtime_user_name(a, 1000, name, sizeof name) == 0 && strcmp(name, "user") == 0,
		"uid 1000 is user");
	CHECK(runtime_user_name(a, 4242, name, sizeof name) == -1, "unknown uid");
	gid_t g = 0;
	CHECK(runtime_group_by_name(a, "sudo", &g) == 0 && g == 27, "group sudo is 27 (%u)", g);
	CHECK(runtime_group_name(a, 1000, name, sizeof name) == 0 && strcmp(name, "user") == 0,
		"gid 1000 is user");
	CHECK(runtime_group_by_name(a, "no-such-group", &g) == -1, "unknown group");

	/* The root directory is the overlay, and it is the sandbox's own. */
	const char *root = runtime_rootfs(a);
	char path[512];
	snprintf(path, sizeof path, "%s/etc/passwd", root);
	CHECK(access(path, R_OK) == 0, "%s is readable", path);
	CHECK(strcmp(root, runtime_rootfs(b)) != 0, "each sandbox has its own root");

	close(la);
	close(lb);
	close(ca);
	if (accepted >= 0)
		close(accepted);
	close(host);
	registry_free(reg);
	runtime_shutdown();
	rmdir(sandboxes);
	rmdir(state);
	event_base_free(base);
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
