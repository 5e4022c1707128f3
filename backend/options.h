/* Command-line options and the loopback-only listening policy. */
#ifndef E2B_BACKEND_OPTIONS_H
#define E2B_BACKEND_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "sandbox_runtime.h"

struct listen_addr {
	char host[64];  /* literal address, brackets removed ("::1") */
	uint16_t port;  /* 0 = ephemeral */
};

struct backend_options {
	struct listen_addr api;
	struct listen_addr envd;
	const char *api_key;   /* points into argv; never printed */
	const char *state_dir; /* NULL: a mkdtemp dir the backend owns */
	bool allow_remote;
	bool connect_extend_only;
	enum isolation isolation;  /* default ISOLATION_AUTO */
	const char *templates_dir; /* NULL: <dir of the binary>/../templates */
};

enum options_result {
	OPTIONS_OK,
	OPTIONS_EXIT_OK,    /* --help was printed */
	OPTIONS_EXIT_USAGE  /* a message was printed; exit status 2 */
};

enum options_result options_parse(int argc, char **argv, struct backend_options *opt);

/* "http://127.0.0.1:8080", brackets added for IPv6. */
void listen_addr_url(const struct listen_addr *addr, uint16_t port, char *out, int cap);

#endif
