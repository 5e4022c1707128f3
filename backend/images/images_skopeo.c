/* skopeo, run from a helper (images_skopeo.h). */
#define _GNU_SOURCE
#include "images/images_skopeo.h"

#include "lib/base64.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/text.h"
#include "lib/write_all.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define SKOPEO "/usr/bin/skopeo"
#define MAX_OUT (8u << 20)
#define MAX_ERR 8192

int images_skopeo_auth(const char *host, const char *username, const char *password)
{
	size_t plain_len = strlen(username) + 1 + strlen(password);
	char *plain = malloc(plain_len + 1);
	char *b64 = malloc(base64_encoded_len(plain_len) + 1);
	int fd = plain && b64 ? memfd_create("auth.json", MFD_CLOEXEC) : -1;
	int rc = -1;
	if (fd >= 0) {
		sprintf(plain, "%s:%s", username, password);
		base64_encode((const uint8_t *)plain, plain_len, b64);
		b64[base64_encoded_len(plain_len)] = '\0';
		char *json = text_printf("{\"auths\":{\"%s\":{\"auth\":\"%s\"}}}", host, b64);
		rc = json && write_all(fd, json, strlen(json)) == 0 && lseek(fd, 0, SEEK_SET) == 0 ? 0 : -1;
		if (json)
			explicit_bzero(json, strlen(json));
		free(json);
	}
	int e = errno;
	if (plain)
		explicit_bzero(plain, plain_len);
	if (b64)
		explicit_bzero(b64, base64_encoded_len(plain_len));
	free(plain);
	free(b64);
	if (rc != 0 && fd >= 0) {
		close(fd);
		fd = -1;
	}
	errno = e;
	return fd;
}

/* In the child: its descriptors (0 /dev/null, 1 and 2 the pipes, 3 the
 * auth file), its environment, then skopeo. */
__attribute__((noreturn)) static void exec_skopeo(const struct images_skopeo *how, const char *const *args,
	int out, int err)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	/* fd 3 is the helper's result pipe until the auth file takes its place. */
	if (how->auth_fd == 3               ? fcntl(3, F_SETFD, 0) != 0
			: how->auth_fd >= 0 ? dup2(how->auth_fd, 3) < 0
					    : close(3) != 0 && errno != EBADF)
		_exit(126);
	char home[4200], tmp[4200], conf[4200];
	snprintf(home, sizeof home, "HOME=%s", how->home);
	snprintf(tmp, sizeof tmp, "TMPDIR=%s", how->home);
	snprintf(conf, sizeof conf, "CONTAINERS_REGISTRIES_CONF=%s/registries.conf", how->home);
	char *env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", home, tmp, conf, "LC_ALL=C", NULL};
	char *argv[64] = {"skopeo"};
	size_t n = 1;
	for (; args[n - 1] && n < 63; n++)
		argv[n] = strdup(args[n - 1]); /* execve's argv is not const */
	argv[n] = NULL;
	execve(SKOPEO, argv, env);
	dprintf(2, "msg=\"cannot run " SKOPEO ": %s\"\n", strerror(errno));
	_exit(127);
}

/* The message of skopeo's last log line: the text of msg="..." unquoted,
 * else the line itself. */
static void message(const char *log, struct err *err)
{
	if (!err)
		return;
	char *msg = err->msg; /* written in place */
	const char *m = NULL;
	for (const char *p = strstr(log, "msg=\""); p; p = strstr(p + 1, "msg=\""))
		m = p + 5;
	size_t w = 0;
	if (m) {
		for (; *m && *m != '"' && w + 1 < sizeof err->msg; m++) {
			if (*m == '\\' && m[1])
				m++;
			msg[w++] = *m;
		}
	} else {
		size_t n = strlen(log);
		while (n && (log[n - 1] == '\n' || log[n - 1] == ' '))
			n--;
		const char *line = log + n;
		while (line > log && line[-1] != '\n')
			line--;
		for (; line < log + n && w + 1 < sizeof err->msg; line++)
			msg[w++] = *line;
	}
	msg[w] = '\0';
	err->status = 0;
	if (!w)
		err_set(err, 0, "skopeo failed without a message");
}

struct sink {
	int fd;
	char *buf;
	size_t len, cap, max;
};

/* 1 at EOF, 0 for more, -1 for too much. */
static int drain(struct sink *s)
{
	if (s->cap - s->len < 4096) {
		size_t cap = s->cap ? s->cap * 2 : 8192;
		char *b = cap <= 2 * s->max + 8192 ? realloc(s->buf, cap + 1) : NULL;
		if (!b)
			return -1;
		s->buf = b;
		s->cap = cap;
	}
	ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0)
		return 1;
	s->len += (size_t)n;
	s->buf[s->len] = '\0';
	return s->len > s->max ? -1 : 0;
}

int images_skopeo_run(const struct images_skopeo *how, const char *const *args, char **out, struct err *err)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	*out = NULL;
	if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
		err_set(err, errno, "cannot run skopeo: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0)
		exec_skopeo(how, args, po[1], pe[1]);
	close(po[1]);
	close(pe[1]);
	struct sink s[2] = {{.fd = po[0], .max = MAX_OUT}, {.fd = pe[0], .max = MAX_ERR}};
	bool open_[2] = {true, true}, too_much = false, late = false;
	int64_t deadline = clock_now_ms() + (int64_t)how->timeout_s * 1000;
	while (pid > 0 && (open_[0] || open_[1]) && !too_much && !late) {
		struct pollfd p[3] = {{.fd = open_[0] ? s[0].fd : -1, .events = POLLIN},
			{.fd = open_[1] ? s[1].fd : -1, .events = POLLIN},
			{.fd = how->on_watch ? how->watch_fd : -1, .events = POLLIN}};
		int64_t left = deadline - clock_now_ms();
		int r = left <= 0 ? 0 : poll(p, 3, left > 60000 ? 60000 : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		late = left <= 0;
		if (r > 0 && p[2].revents)
			how->on_watch(how->watch_ctx);
		for (int i = 0; i < 2 && r > 0; i++) {
			if (!p[i].revents)
				continue;
			int d = drain(&s[i]);
			open_[i] = d == 0;
			too_much |= d < 0 && i == 0;
		}
	}
	int status = -1;
	if (pid > 0 && (late || too_much))
		kill(pid, SIGKILL);
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	close(po[0]);
	close(pe[0]);
	int rc = -1;
	if (pid < 0)
		err_set(err, errno, "cannot run skopeo: %s", strerror(errno));
	else if (late)
		err_set(err, 0, "the registry did not answer within %d s", how->timeout_s);
	else if (too_much)
		err_set(err, 0, "the registry's answer is too large");
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		message(s[1].buf ? s[1].buf : "", err);
	else
		rc = 0;
	free(s[1].buf);
	if (rc == 0)
		*out = s[0].buf ? s[0].buf : strdup("");
	else
		free(s[0].buf);
	return rc == 0 && !*out ? -1 : rc;
}
