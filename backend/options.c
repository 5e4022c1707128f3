/* Parsing the command line. */
#include "options.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: e2b-local-backend --listen HOST:PORT --api-key KEY [--state-dir DIR]\n"
	"                         [--envd-listen HOST:PORT] [--allow-remote] [--connect-extend-only]\n"
	"                         [--isolation auto|full|none] [--templates DIR]\n"
	"\n"
	"A local E2B-compatible backend: the control-plane API and envd, on loopback.\n"
	"  --listen HOST:PORT       control-plane API address (port 0 = ephemeral)\n"
	"  --api-key KEY            the X-API-Key clients must send (required)\n"
	"  --state-dir DIR          where sandboxes/<id>/ directories live\n"
	"                           (default: a fresh dir under $TMPDIR, removed on exit)\n"
	"  --envd-listen HOST:PORT  envd address (default: the --listen host, port 0)\n"
	"  --allow-remote           permit non-loopback addresses\n"
	"  --connect-extend-only    connect never shortens a running sandbox's endAt\n"
	"                           (default: connect sets endAt = now + timeout, even if shorter)\n"
	"  --isolation MODE         full: namespaces, overlay root, cgroups per sandbox;\n"
	"                           none: commands run on the host; auto (default): full\n"
	"                           when the kernel allows it, else none\n"
	"  --templates DIR          template root filesystems, DIR/<name>/rootfs\n"
	"                           (default: ../templates beside the binary)\n"
	"When ready, prints one JSON line on stdout: api_url, sandbox_url, state_dir, pid.\n";

static enum options_result usage_error(const char *what, const char *detail)
{
	fprintf(stderr, "e2b-local-backend: %s%s\n\n%s", what, detail ? detail : "", usage);
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
		return IN6_IS_ADDR_LOOPBACK(&v6) ||
		       (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
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

enum options_result options_parse(int argc, char **argv, struct backend_options *opt)
{
	memset(opt, 0, sizeof *opt);
	const char *listen = NULL, *envd = NULL;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *v;
		if (is_flag(arg, "--help") || is_flag(arg, "-h")) {
			fputs(usage, stdout);
			return OPTIONS_EXIT_OK;
		} else if (is_flag(arg, "--allow-remote")) {
			opt->allow_remote = true;
		} else if (is_flag(arg, "--connect-extend-only")) {
			opt->connect_extend_only = true;
		} else if ((v = option_value(argc, argv, &i, "--listen"))) {
			listen = v;
		} else if ((v = option_value(argc, argv, &i, "--envd-listen"))) {
			envd = v;
		} else if ((v = option_value(argc, argv, &i, "--api-key"))) {
			opt->api_key = v;
		} else if ((v = option_value(argc, argv, &i, "--state-dir"))) {
			opt->state_dir = v;
		} else if ((v = option_value(argc, argv, &i, "--templates"))) {
			opt->templates_dir = v;
		} else if ((v = option_value(argc, argv, &i, "--isolation"))) {
			if (strcmp(v, "auto") == 0)
				opt->isolation = ISOLATION_AUTO;
			else if (strcmp(v, "full") == 0)
				opt->isolation = ISOLATION_FULL;
			else if (strcmp(v, "none") == 0)
				opt->isolation = ISOLATION_NONE;
			else
				return usage_error("--isolation must be auto, full or none, got ", v);
		} else if (strncmp(arg, "--", 2) == 0) {
			/* Echo only the option's name: a value could be a secret. */
			char name[40];
			snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
			return usage_error("unknown option or missing value: ", name);
		} else {
			return usage_error("unexpected argument", NULL);
		}
	}
	if (!opt->api_key || !*opt->api_key)
		return usage_error("--api-key is required", NULL);
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
			return usage_error("refusing a non-loopback --envd-listen address (use --allow-remote): ",
				opt->envd.host);
	}
	return OPTIONS_OK;
}

void listen_addr_url(const struct listen_addr *addr, uint16_t port, char *out, int cap)
{
	bool v6 = strchr(addr->host, ':') != NULL;
	snprintf(out, (size_t)cap, v6 ? "http://[%s]:%u" : "http://%s:%u", addr->host, port);
}
