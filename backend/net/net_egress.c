/* The egress proxy of transform rules and allowOut's domain names: its TLS
 * settings and resolver, and each sandbox's listener, redirect and trust
 * (net_egress.h). */
#define _GNU_SOURCE
#include "net/net_egress.h"

#include "egress/egress_ca.h"
#include "lib/err.h"
#include "net/net_egress_admit.h"
#include "net/net_egress_conn.h"
#include "net/net_policy.h"
#include "runtime/runtime_enter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <nftables/libnftables.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLE "e2b_egress"
#define BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define BUNDLE_MAX (8 << 20)

struct net_egress {
	struct net_egress_env env;
	struct evconnlistener *listener;
	struct event *resume; /* the listener's, after accept failed (out of descriptors) */
	int redirect;         /* what the sandbox's table sends here (enum redirect) */
};

static struct {
	struct event_base *base;
	struct egress_ca *ca;
	SSL_CTX *server_ctx, *client_ctx;
	net_egress_secret_fn secret;
	void *secret_ctx;
} g;

bool net_egress_available(void)
{
	return g.ca != NULL;
}

void net_egress_set_secrets(net_egress_secret_fn fn, void *ctx)
{
	g.secret = fn;
	g.secret_ctx = ctx;
}

/* The sandbox's client offered ALPN: only HTTP/1.1 can be rewritten, so
 * that is what it gets (a client offering only h2 gets no ALPN, and speaks
 * HTTP/1.1 as TLS without ALPN means). */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
	unsigned int inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	for (unsigned i = 0; i < inlen && i + 1 + in[i] <= inlen; i += 1u + in[i]) {
		if (in[i] == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
	}
	return SSL_TLSEXT_ERR_NOACK;
}

int net_egress_init(struct event_base *base, const char *ca_dir, const char *upstream_ca_file,
	struct err *err)
{
	g.base = base;
	g.ca = egress_ca_open(ca_dir, err);
	if (!g.ca)
		return -1;
	g.server_ctx = SSL_CTX_new(TLS_server_method());
	g.client_ctx = SSL_CTX_new(TLS_client_method());
	if (!g.server_ctx || !g.client_ctx ||
		SSL_CTX_set_min_proto_version(g.server_ctx, TLS1_2_VERSION) != 1 ||
		SSL_CTX_set_min_proto_version(g.client_ctx, TLS1_2_VERSION) != 1 ||
		SSL_CTX_set_default_verify_paths(g.client_ctx) != 1) {
		err_set(err, 0, "cannot set up TLS");
		net_egress_shutdown();
		return -1;
	}
	if (upstream_ca_file && SSL_CTX_load_verify_locations(g.client_ctx, upstream_ca_file, NULL) != 1) {
		err_set(err, 0, "cannot read --egress-ca-file %s", upstream_ca_file);
		net_egress_shutdown();
		return -1;
	}
	SSL_CTX_set_verify(g.client_ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_alpn_select_cb(g.server_ctx, select_alpn, NULL);
	/* Without a resolver, names in allowOut allow nothing (said at start). */
	if (net_egress_admit_init(base) != 0)
		fprintf(stderr,
			"e2b-local-backend: the egress proxy has no nameserver in /etc/resolv.conf: "
			"domain names in allowOut will allow nothing\n");
	return 0;
}

void net_egress_shutdown(void)
{
	net_egress_admit_shutdown();
	SSL_CTX_free(g.server_ctx);
	SSL_CTX_free(g.client_ctx);
	egress_ca_free(g.ca);
	g.server_ctx = g.client_ctx = NULL;
	g.ca = NULL;
}

/* --- one sandbox ---------------------------------------------------------------------- */

/* What the sandbox's own table sends to the listener: nothing, its ports 443
 * and 80, or all its TCP (a tunnel: egressProxy). */
enum redirect {
	REDIRECT_OFF,
	REDIRECT_WEB,
	REDIRECT_ALL
};

static enum redirect redirect_for(const struct net_policy *p)
{
	return p->tunnel.set ? REDIRECT_ALL : REDIRECT_WEB;
}

/* In the sandbox's namespace: its traffic to the listener, but for the
 * proxy's own (marked) and what goes to one of its own addresses. */
static int set_redirect(void *arg)
{
	enum redirect how = *(enum redirect *)arg;
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!nft)
		return -1;
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	char script[640];
	if (how != REDIRECT_OFF)
		snprintf(script, sizeof script,
			"add table ip " TABLE "\ndelete table ip " TABLE "\n"
			"table ip " TABLE " {\n"
			"  chain output {\n"
			"    type nat hook output priority -100; policy accept;\n"
			"    meta mark 0x%08x return\n"
			"    ip daddr 127.0.0.0/8 return\n"
			"    fib daddr type local return\n"
			"    %s dnat to " NET_EGRESS_ADDRESS ":%d\n"
			"  }\n"
			"}\n",
			NET_EGRESS_MARK, how == REDIRECT_ALL ? "meta l4proto tcp" : "tcp dport { 80, 443 }",
			NET_EGRESS_PORT);
	else
		snprintf(script, sizeof script, "add table ip " TABLE "\ndelete table ip " TABLE "\n");
	int rc = nft_run_cmd_from_buffer(nft, script);
	if (rc != 0)
		fprintf(stderr, "egress proxy: nftables in a sandbox: %s", nft_ctx_get_error_buffer(nft));
	nft_ctx_free(nft);
	return rc == 0 ? 0 : -1;
}

/* The CA joins the sandbox's trust store, once. */
static int trust_ca(struct sandbox *sb)
{
	const char *pem = egress_ca_pem(g.ca);
	int fd = runtime_open_in_root(sb, BUNDLE, O_RDWR | O_APPEND);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1; /* no bundle: nothing of the sandbox's to join */
	struct stat st;
	char *text = NULL;
	int rc = -1;
	if (fstat(fd, &st) == 0 && st.st_size < BUNDLE_MAX && (text = malloc((size_t)st.st_size + 1))) {
		ssize_t n = pread(fd, text, (size_t)st.st_size, 0);
		if (n >= 0) {
			text[n] = '\0';
			static const char mark[] = "\n# e2b-local-backend egress CA\n";
			if (strstr(text, pem))
				rc = 0;
			else if (write(fd, mark, sizeof mark - 1) == (ssize_t)(sizeof mark - 1) &&
				write(fd, pem, strlen(pem)) == (ssize_t)strlen(pem))
				rc = 0;
		}
	}
	free(text);
	close(fd);
	return rc;
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
	(void)l;
	(void)sa;
	(void)len;
	struct net_egress *e = arg;
	net_egress_conn_accept(&e->env, fd);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct net_egress *e = arg;
	evconnlistener_enable(e->listener);
}

/* accept failed (no descriptor left, most likely): the connection waits
 * in the backlog a second rather than the loop spinning on it. */
static void on_accept_error(struct evconnlistener *l, void *arg)
{
	struct net_egress *e = arg;
	fprintf(stderr, "egress proxy: accept: %s; pausing a second\n", strerror(errno));
	evconnlistener_disable(l);
	struct timeval second = {1, 0};
	if (e->resume)
		evtimer_add(e->resume, &second);
}

static int listen_in_sandbox(struct sandbox *sb)
{
	struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons(NET_EGRESS_PORT)};
	inet_pton(AF_INET, NET_EGRESS_ADDRESS, &at.sin_addr);
	int fd = runtime_socket(sb, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
		bind(fd, (struct sockaddr *)&at, sizeof at) != 0 || listen(fd, 64) != 0) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

bool net_egress_wanted(const struct net_policy *policy)
{
	return policy->rules.n > 0 || policy->n_domains > 0 || policy->tunnel.set;
}

struct net_egress *net_egress_start(struct sandbox *sb, int slot, const struct net_policy *policy,
	struct err *err)
{
	if (!g.ca) {
		err_set(err, 0, "the egress proxy is not running");
		return NULL;
	}
	struct net_egress *e = calloc(1, sizeof *e);
	if (!e) {
		err_set(err, 0, "out of memory");
		return NULL;
	}
	e->env = (struct net_egress_env){.base = g.base,
		.sb = sb,
		.slot = slot,
		.policy = policy,
		.ca = g.ca,
		.server_ctx = g.server_ctx,
		.client_ctx = g.client_ctx,
		.secret = g.secret,
		.secret_ctx = g.secret_ctx};
	int fd = listen_in_sandbox(sb);
	if (fd < 0) {
		err_set(err, errno, "cannot listen in the sandbox: %s", strerror(errno));
		free(e);
		return NULL;
	}
	e->listener = evconnlistener_new(g.base, on_accept, e, LEV_OPT_CLOSE_ON_FREE, -1, fd);
	e->resume = evtimer_new(g.base, on_resume, e);
	if (e->listener)
		evconnlistener_set_error_cb(e->listener, on_accept_error);
	else
		close(fd);
	enum redirect how = redirect_for(policy);
	e->redirect = how;
	if (!e->listener || !e->resume) {
		err_set(err, 0, "out of memory");
	} else if (trust_ca(sb) != 0) {
		err_set(err, errno, "cannot add the egress CA to %s: %s", BUNDLE, strerror(errno));
	} else if (runtime_in_netns(sb, set_redirect, &how) != 0) {
		err_set(err, 0, "cannot redirect the sandbox's HTTP and HTTPS to its egress proxy");
	} else {
		return e;
	}
	net_egress_stop(e, false);
	return NULL;
}

int net_egress_set_policy(struct net_egress *e, const struct net_policy *policy, struct err *err)
{
	e->env.policy = policy;
	enum redirect how = redirect_for(policy);
	if ((int)how == e->redirect)
		return 0;
	if (runtime_in_netns(e->env.sb, set_redirect, &how) != 0) {
		err_set(err, 0, "cannot change what the sandbox sends to its egress proxy");
		return -1;
	}
	e->redirect = how;
	return 0;
}

void net_egress_stop(struct net_egress *e, bool remove_redirect)
{
	if (!e)
		return;
	if (remove_redirect) {
		enum redirect off = REDIRECT_OFF;
		if (runtime_in_netns(e->env.sb, set_redirect, &off) != 0)
			fprintf(stderr,
				"egress proxy: a sandbox's redirect to its proxy could not be "
				"removed: its HTTPS now fails\n");
	}
	net_egress_conn_close_all(&e->env);
	if (e->resume)
		event_free(e->resume);
	if (e->listener)
		evconnlistener_free(e->listener);
	free(e);
}
