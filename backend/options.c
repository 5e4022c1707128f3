/* Parsing the command line. */
#include "options.h"

#include "images/images_ref.h"
#include "lib/err.h"
#include "metrics/metrics.h"

#include "net/net_pool.h"
#include "warm/warm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: E2B_LOCAL_API_KEY=KEY e2b-local-backend --listen HOST:PORT [options]\n"
	"       e2b-local-backend --listen HOST:PORT --api-key-file PATH [options]\n"
	"\n"
	"A local E2B-compatible backend: the control-plane API and envd, on loopback.\n"
	"The X-API-Key clients must send comes from $E2B_LOCAL_API_KEY or from the\n"
	"first line of --api-key-file, never from the command line (any process can\n"
	"read a command line).\n"
	"  --listen HOST:PORT       control-plane API address (port 0 = ephemeral)\n"
	"  --api-key-file PATH      read the key from PATH (instead of the environment)\n"
	"  --state-dir DIR          where sandboxes/<id>/ directories live\n"
	"                           (default: a fresh dir under $TMPDIR, removed on exit)\n"
	"  --envd-listen HOST:PORT  envd address (default: the --listen host, port 0)\n"
	"  --allow-remote           permit non-loopback addresses\n"
	"  --connect-may-shorten    connect sets endAt = now + timeout even when that is\n"
	"                           sooner (default: connect only ever extends, as E2B)\n"
	"  --max-sandboxes N        sandboxes alive at once, running or paused (default 256)\n"
	"  --max-connections N      open HTTP connections, both listeners (default 1024,\n"
	"                           or the descriptor limit minus 64 if that is smaller)\n"
	"  --request-timeout S      seconds a connection may take to send a whole request\n"
	"                           (headers and body), idle time included (default 30)\n"
	"  --max-upload-mb N        one POST /files body, after gzip (default 4096)\n"
	"  --max-sandbox-requests N requests in progress for one sandbox: streams,\n"
	"                           proxied connections, uploads (default 256)\n"
	"  --proxy-idle-timeout S   a proxied connection silent both ways this long is\n"
	"                           closed (default 600)\n"
	"  --max-watches N          inotify watches one sandbox's watchers may hold\n"
	"                           together, one per watched directory (default 8192)\n"
	"  --isolation MODE         full (root): namespaces, overlay root, cgroups and a\n"
	"                           host id range per sandbox; rootless (another user):\n"
	"                           the same in the user's own namespace, no limits;\n"
	"                           none: commands run on the host; auto (default): full\n"
	"                           as root, else rootless, and fails if that cannot be had\n"
	"  --id-range START:COUNT   host ids for the sandboxes, 65536 each (full isolation;\n"
	"                           default 1073741824:268435456)\n"
	"  --templates DIR          template root filesystems, DIR/<name>/rootfs\n"
	"                           (default: ../templates beside the binary)\n"
	"  --domain DOMAIN          sandboxes' domain: <port>-<id>.<DOMAIN> reaches a port\n"
	"                           through the envd listener (default: localhost:<its port>)\n"
	"  --sandbox-subnet CIDR    sandbox addresses (default 100.96.0.0/16); each backend\n"
	"                           claims a free block of it\n"
	"  --sandbox-conn-limit N   connections tracked per sandbox (default 4096)\n"
	"  --sandbox-network on|off off: sandboxes have loopback only (default on)\n"
	"  --egress-ca-file PATH    PEM certificates the egress proxy of transform rules\n"
	"                           trusts upstream besides the host's (e.g. a company CA)\n"
	"  --metrics-interval S     seconds between two samples of each running sandbox's\n"
	"                           CPU, memory and disk (getMetrics; default 5, 1..3600)\n"
	"  --registry-mirror URL    where Docker Hub images are pulled from first: http://HOST[:PORT]\n"
	"                           or https://HOST[:PORT] (repeatable, tried in order, at most 8)\n"
	"  --no-docker-hub          never pull from Docker Hub itself: its images come from the\n"
	"                           mirrors only\n"
	"  --max-image-mb N         an image's download and its layers unpacked (default 16384)\n"
	"  --warm-pool N            sandboxes of the default shape (base, default resources,\n"
	"                           no volumes) kept started ahead, so a create of that\n"
	"                           shape only claims one (default 3, 0..64; isolation only)\n"
	"  --warm-templates N       built templates that also get a pool of that size once\n"
	"                           created from (default 4, 0..16)\n"
	"  --warm-template-idle S   a template's pool nobody created from for S seconds is\n"
	"                           dropped (default 300)\n"
	"  --cgroup-favor-dynmods on|off\n"
	"                           on (default; full isolation): the kernel's\n"
	"                           favordynmods mode, so that moving a process into a\n"
	"                           sandbox's cgroups never waits for an RCU grace period\n"
	"                           (5-30 ms); costs a memory barrier per fork and exit\n"
	"                           on the machine. off leaves the kernel as it is\n"
	"When ready, prints one JSON line on stdout: api_url, sandbox_url, state_dir, pid,\n"
	"isolation, limits, seccomp, cgroup_favor_dynmods, domain.\n";

/* One line naming the mistake: the whole usage text would bury it. */
static enum options_result usage_error(const char *what, const char *detail)
{
	fprintf(stderr, "e2b-local-backend: %s%s; see --help\n", what, detail ? detail : "");
	return OPTIONS_EXIT_USAGE;
}

/* "HOST:PORT" or "[V6]:PORT"; "localhost" becomes 127.0.0.1 so that what we
 * bind is exactly what we checked. */
static int parse_addr(const char *text, struct listen_addr *addr)
{
	const char *host = text, *colon;
	size_t hlen;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close || close[1] != ':')
			return -1;
		host = text + 1;
		hlen = (size_t)(close - host);
		colon = close + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon)
			return -1;
		hlen = (size_t)(colon - text);
	}
	if (hlen == 0 || hlen >= sizeof addr->host)
		return -1;
	memcpy(addr->host, host, hlen);
	addr->host[hlen] = '\0';
	if (strcmp(addr->host, "localhost") == 0)
		strcpy(addr->host, "127.0.0.1");

	const char *port = colon + 1;
	char *end = NULL;
	long v = strtol(port, &end, 10);
	if (!*port || *end || v < 0 || v > 65535)
		return -1;
	addr->port = (uint16_t)v;
	return 0;
}

static bool is_loopback(const char *host)
{
	struct in_addr v4;
	struct in6_addr v6;
	if (inet_pton(AF_INET, host, &v4) == 1)
		return (ntohl(v4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &v6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
	return false; /* a name could resolve anywhere */
}

/* The value of "--name VALUE" or "--name=VALUE", advancing *i; NULL if none. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0' || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static bool is_flag(const char *arg, const char *name)
{
	return strcmp(arg, name) == 0;
}

/* A whole decimal number in [min, max]. */
static int parse_count(const char *text, long min, long max, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (!*text || *end || errno || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* The numeric options: name, range, and the field the value goes to. */
static const struct count_opt {
	const char *name;
	long min, max;
	size_t field;
} count_opts[] = {
	{"--max-sandboxes", 1, 100000, offsetof(struct backend_options, max_sandboxes)},
	{"--max-connections", 8, 1000000, offsetof(struct backend_options, max_connections)},
	{"--request-timeout", 1, 3600, offsetof(struct backend_options, request_timeout_s)},
	{"--max-upload-mb", 1, 1048576, offsetof(struct backend_options, max_upload_mb)},
	{"--max-sandbox-requests", 1, 100000, offsetof(struct backend_options, max_sandbox_requests)},
	{"--proxy-idle-timeout", 1, 86400, offsetof(struct backend_options, proxy_idle_timeout_s)},
	{"--max-watches", 1, 1000000, offsetof(struct backend_options, max_watches)},
	{"--max-image-mb", 1, 16777216, offsetof(struct backend_options, images.max_image_mb)},
	{"--warm-pool", 0, WARM_MAX_SIZE, offsetof(struct backend_options, warm_pool)},
	{"--warm-templates", 0, WARM_MAX_TEMPLATES, offsetof(struct backend_options, warm_templates)},
	{"--warm-template-idle", 1, WARM_MAX_TEMPLATE_IDLE_S,
		offsetof(struct backend_options, warm_template_idle_s)},
};

/* The numeric option at argv[*i] (its value in *v), or NULL. */
static const struct count_opt *count_option(int argc, char **argv, int *i, const char **v)
{
	for (size_t k = 0; k < sizeof count_opts / sizeof count_opts[0]; k++)
		if ((*v = option_value(argc, argv, i, count_opts[k].name)))
			return &count_opts[k];
	return NULL;
}

/* A domain for "<port>-<id>.<domain>" URLs: host name characters and at
 * most one ":PORT". */
static bool domain_ok(const char *d)
{
	size_t n = strlen(d), colons = 0;
	if (n == 0 || n > 200 || d[0] == '.' || d[0] == '-' || d[0] == ':')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = d[i];
		if (c == ':')
			colons++;
		else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
				 c == '.' || c == '-'))
			return false;
	}
	return colons <= 1;
}

/* Copies a key into opt->api_key; refuses what cannot go in a header. */
static int take_key(struct backend_options *opt, const char *key, size_t len)
{
	if (len == 0 || len >= sizeof opt->api_key)
		return -1;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)key[i] < 0x21 || key[i] == 0x7f)
			return -1;
	memcpy(opt->api_key, key, len);
	opt->api_key[len] = '\0';
	return 0;
}

/* The first line of path, without its line ending. */
static int read_key_file(struct backend_options *opt, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[sizeof opt->api_key + 2];
	bool got = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	size_t len = got ? strcspn(line, "\r\n") : 0;
	int rc = take_key(opt, line, len);
	memset(line, 0, sizeof line);
	return rc;
}

/* Takes the key out of the environment so that no process the backend
 * starts inherits it, and wipes it in place: /proc/<pid>/environ shows the
 * original environment block, which unsetenv() alone leaves intact. */
static int take_env_key(struct backend_options *opt, struct err *err)
{
	char *value = getenv(API_KEY_ENV);
	if (!value)
		return err_set(err, ENOENT, "no API key: set " API_KEY_ENV " or give --api-key-file");
	int rc = take_key(opt, value, strlen(value));
	/* The initial block holds "NAME=value" in one piece: blank all of it. */
	char *entry = value - strlen(API_KEY_ENV "=");
	bool whole = memcmp(entry, API_KEY_ENV "=", strlen(API_KEY_ENV "=")) == 0;
	size_t len = strlen(whole ? entry : value);
	unsetenv(API_KEY_ENV);
	memset(whole ? entry : value, 0, len);
	return rc == 0 ? 0 : err_set(err, EINVAL, API_KEY_ENV " must be 1 to 1023 printable characters");
}

enum options_result options_parse(int argc, char **argv, struct backend_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->max_sandboxes = OPTIONS_DEFAULT_MAX_SANDBOXES;
	opt->metrics_interval_s = METRICS_DEFAULT_INTERVAL_S;
	opt->warm_pool = WARM_DEFAULT_SIZE;
	opt->warm_templates = WARM_DEFAULT_TEMPLATES;
	opt->warm_template_idle_s = WARM_DEFAULT_TEMPLATE_IDLE_S;
	opt->request_timeout_s = OPTIONS_DEFAULT_REQUEST_TIMEOUT_S;
	opt->max_upload_mb = OPTIONS_DEFAULT_MAX_UPLOAD_MB;
	opt->max_sandbox_requests = OPTIONS_DEFAULT_MAX_SANDBOX_REQUESTS;
	opt->proxy_idle_timeout_s = OPTIONS_DEFAULT_PROXY_IDLE_TIMEOUT_S;
	opt->max_watches = OPTIONS_DEFAULT_MAX_WATCHES;
	opt->images.max_image_mb = IMAGES_DEFAULT_MAX_MB;
	opt->sandbox_conn_limit = OPTIONS_DEFAULT_SANDBOX_CONN_LIMIT;
	opt->sandbox_network = true;
	opt->cgroup_favor_dynmods = true;
	const char *listen = NULL, *envd = NULL, *key_file = NULL;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *v;
		const struct count_opt *count;
		if (is_flag(arg, "--help") || is_flag(arg, "-h")) {
			fputs(usage, stdout);
			return OPTIONS_EXIT_OK;
		} else if (is_flag(arg, "--allow-remote")) {
			opt->allow_remote = true;
		} else if (is_flag(arg, "--no-docker-hub")) {
			opt->images.no_docker_hub = true;
		} else if ((v = option_value(argc, argv, &i, "--registry-mirror"))) {
			char host[IMAGES_HOST_MAX];
			bool plain;
			if (images_mirror_parse(v, host, &plain) != 0)
				return usage_error(
					"--registry-mirror must be http://HOST[:PORT] or https://HOST[:PORT], got ",
					v);
			if (opt->images.mirror_count == IMAGES_MAX_MIRRORS)
				return usage_error("--registry-mirror: at most 8", NULL);
			opt->images.mirrors[opt->images.mirror_count++] = v;
		} else if (is_flag(arg, "--connect-may-shorten")) {
			opt->connect_may_shorten = true;
		} else if ((v = option_value(argc, argv, &i, "--listen"))) {
			listen = v;
		} else if ((v = option_value(argc, argv, &i, "--envd-listen"))) {
			envd = v;
		} else if ((v = option_value(argc, argv, &i, "--api-key-file"))) {
			key_file = v;
		} else if (strncmp(arg, "--api-key", 9) == 0 && (arg[9] == '\0' || arg[9] == '=')) {
			/* Refused, not merely discouraged: every local user and every
			 * sandbox command could read it in /proc/<pid>/cmdline. */
			unsetenv(API_KEY_ENV);
			return usage_error("--api-key is refused (a command line is readable by any "
					   "process): use " API_KEY_ENV " or --api-key-file",
				NULL);
		} else if ((count = count_option(argc, argv, &i, &v))) {
			if (parse_count(v, count->min, count->max, (long *)((char *)opt + count->field)) !=
				0) {
				char range[96];
				snprintf(range, sizeof range, " must be %ld..%ld, got ", count->min,
					count->max);
				fprintf(stderr, "e2b-local-backend: %s%s%s; see --help\n", count->name, range,
					v);
				return OPTIONS_EXIT_USAGE;
			}
		} else if ((v = option_value(argc, argv, &i, "--state-dir"))) {
			opt->state_dir = v;
		} else if ((v = option_value(argc, argv, &i, "--templates"))) {
			opt->templates_dir = v;
		} else if ((v = option_value(argc, argv, &i, "--domain"))) {
			if (!domain_ok(v))
				return usage_error(
					"--domain must be a host name, optionally with :PORT, got ", v);
			opt->domain = v;
		} else if ((v = option_value(argc, argv, &i, "--sandbox-subnet"))) {
			struct net_cidr subnet;
			if (net_pool_parse_subnet(v, &subnet) != 0)
				return usage_error("--sandbox-subnet must be an IPv4 CIDR of /8 to /30, got ",
					v);
			opt->sandbox_subnet = v;
		} else if ((v = option_value(argc, argv, &i, "--sandbox-network"))) {
			if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
				return usage_error("--sandbox-network must be on or off, got ", v);
			opt->sandbox_network = strcmp(v, "on") == 0;
		} else if ((v = option_value(argc, argv, &i, "--cgroup-favor-dynmods"))) {
			if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
				return usage_error("--cgroup-favor-dynmods must be on or off, got ", v);
			opt->cgroup_favor_dynmods = strcmp(v, "on") == 0;
		} else if ((v = option_value(argc, argv, &i, "--metrics-interval"))) {
			if (parse_count(v, 1, 3600, &opt->metrics_interval_s) != 0)
				return usage_error("--metrics-interval must be 1..3600 seconds, got ", v);
		} else if ((v = option_value(argc, argv, &i, "--egress-ca-file"))) {
			opt->egress_ca_file = v;
		} else if ((v = option_value(argc, argv, &i, "--sandbox-conn-limit"))) {
			if (parse_count(v, 1, 1000000, &opt->sandbox_conn_limit) != 0)
				return usage_error("--sandbox-conn-limit must be 1..1000000, got ", v);
		} else if ((v = option_value(argc, argv, &i, "--isolation"))) {
			if (strcmp(v, "auto") == 0)
				opt->isolation = ISOLATION_AUTO;
			else if (strcmp(v, "full") == 0)
				opt->isolation = ISOLATION_FULL;
			else if (strcmp(v, "rootless") == 0)
				opt->isolation = ISOLATION_ROOTLESS;
			else if (strcmp(v, "none") == 0)
				opt->isolation = ISOLATION_NONE;
			else
				return usage_error("--isolation must be auto, full, rootless or none, got ",
					v);
		} else if ((v = option_value(argc, argv, &i, "--id-range"))) {
			opt->id_range = v;
		} else if (strncmp(arg, "--", 2) == 0) {
			/* Echo only the option's name: a value could be a secret. */
			char name[40];
			snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
			return usage_error("unknown option or missing value: ", name);
		} else {
			return usage_error("unexpected argument", NULL);
		}
	}
	if (key_file) {
		unsetenv(API_KEY_ENV); /* the file wins; children get neither */
		if (read_key_file(opt, key_file) != 0)
			return usage_error("--api-key-file: cannot read a key (1 to 1023 printable "
					   "characters on the first line) from ",
				key_file);
	} else {
		struct err problem;
		if (take_env_key(opt, &problem) != 0)
			return usage_error(problem.msg, NULL);
	}
	if (!listen)
		return usage_error("--listen is required", NULL);
	if (parse_addr(listen, &opt->api) != 0)
		return usage_error("--listen must be HOST:PORT, got ", listen);
	if (envd && parse_addr(envd, &opt->envd) != 0)
		return usage_error("--envd-listen must be HOST:PORT, got ", envd);
	if (!envd) {
		opt->envd = opt->api;
		opt->envd.port = 0;
	}
	if (opt->state_dir && !*opt->state_dir)
		return usage_error("--state-dir must not be empty", NULL);
	if (!opt->allow_remote) {
		if (!is_loopback(opt->api.host))
			return usage_error("refusing a non-loopback --listen address (use --allow-remote): ",
				opt->api.host);
		if (!is_loopback(opt->envd.host))
			return usage_error(
				"refusing a non-loopback --envd-listen address (use --allow-remote): ",
				opt->envd.host);
	}
	return OPTIONS_OK;
}

char *options_templates_dir(const struct backend_options *opt)
{
	if (opt->templates_dir)
		return strdup(opt->templates_dir);
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 16);
	if (n <= 0)
		return strdup("templates");
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		strcpy(slash + 1, "templates");
	return strdup(exe);
}
