/* One evhttp per sandbox, so that closing it at kill also closes every
 * connection (and stream) that came in through the sandbox's port. */
#include "envd/envd_listener.h"

#include "envd/envd_routes.h"
#include "http/http_conns.h"
#include "http/http_server.h"
#include "registry/registry.h"

#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct envd_listeners {
	struct envd_ctx *envd;
	struct http_conns *conns;
	char host[64]; /* as --envd-listen gave it: a literal address */
};

struct envd_listener {
	struct envd_listeners *owner;
	struct evhttp *http;
	struct evconnlistener *listener;
	char id[SANDBOX_ID_LEN + 1];
};

static void dispatch(struct evhttp_request *req, void *arg)
{
	struct envd_listener *one = arg;
	envd_dispatch_sandbox(one->owner->envd, req, one->id);
}

static void verdict(const struct http_head *head, struct http_verdict *v, void *arg)
{
	struct envd_listener *one = arg;
	envd_verdict_sandbox(one->owner->envd, head, v, one->id);
}

static void close_one(struct envd_listeners *l, struct sandbox *sb)
{
	struct envd_listener *one = sb->envd_listener;
	if (!one)
		return;
	if (one->listener)
		http_conns_unwatch_listener(l->conns, one->listener);
	http_server_free(l->conns, one->http); /* the listener and its connections */
	free(one);
	sb->envd_listener = NULL;
	sb->envd_url[0] = '\0';
}

/* Without a port of its own the sandbox is still reachable through the
 * shared listener; it just reports no envdUrl. */
static void open_one(struct envd_listeners *l, struct sandbox *sb)
{
	struct envd_listener *one = calloc(1, sizeof *one);
	if (!one)
		return;
	one->owner = l;
	snprintf(one->id, sizeof one->id, "%s", sb->id);
	one->http = http_server_new(l->envd->base, l->conns, HTTP_POOL_ENVD, dispatch, verdict, one);
	uint16_t port;
	if (!one->http ||
		http_server_bind(one->http, l->conns, HTTP_POOL_ENVD, l->host, 0, &port, &one->listener) !=
			0) {
		if (one->listener)
			http_conns_unwatch_listener(l->conns, one->listener);
		if (one->http)
			http_server_free(l->conns, one->http);
		free(one);
		fprintf(stderr, "sandbox %s: no envd listener of its own\n", sb->id);
		return;
	}
	sb->envd_listener = one;
	http_server_url(l->host, port, sb->envd_url, (int)sizeof sb->envd_url);
}

static void on_created(void *ctx, struct sandbox *sb)
{
	open_one(ctx, sb);
}

/* Every stream of a killed sandbox is cut, as E2B's proxy cuts them: each
 * download, upload and proxied exchange in progress for it, through the
 * shared listener or its own port, with a reset (freeing a server only
 * ends its connections, their queued bytes still going out); then its own
 * port with what is left on it. Process and watch streams end themselves
 * in their own hooks. */
static void on_removing(void *ctx, struct sandbox *sb)
{
	struct envd_listeners *l = ctx;
	if (l->conns) /* NULL at shutdown: the tracker is freed before the registry */
		http_conns_close_sandbox(l->conns, sb->id);
	close_one(l, sb);
}

struct envd_listeners *envd_listeners_new(struct envd_ctx *envd, struct http_conns *conns, const char *host)
{
	struct envd_listeners *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->envd = envd;
	l->conns = conns;
	snprintf(l->host, sizeof l->host, "%s", host);
	return l;
}

void envd_listeners_hooks(struct envd_listeners *l, struct registry_hooks *out)
{
	*out = (struct registry_hooks){.ctx = l, .created = on_created, .removing = on_removing};
}

void envd_listeners_close_all(struct envd_listeners *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < registry_count(l->envd->reg); i++)
		close_one(l, registry_at(l->envd->reg, i));
	l->conns = NULL; /* every connection goes with the tracker next */
}

void envd_listeners_free(struct envd_listeners *l)
{
	free(l);
}
