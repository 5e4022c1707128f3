/* evhttp setup shared by the control-plane and envd listeners. */
#include "http/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct evhttp *http_server_new(struct event_base *base, struct http_conns *conns, enum http_pool pool,
	void (*dispatch)(struct evhttp_request *req, void *arg), http_verdict_fn verdict, void *arg)
{
	struct evhttp *http = evhttp_new(base);
	if (!http)
		return NULL;
	/* The gate hands evhttp whole requests of at most the body its verdict
	 * allowed (a streamed body reaches evhttp as an empty one). */
	evhttp_set_max_body_size(http, HTTP_MAX_READ_BODY_BYTES);
	/* The gate's head limit applies first; evhttp's counts a little more. */
	evhttp_set_max_headers_size(http, HTTP_MAX_HEADER_BYTES + 1024);
	evhttp_set_timeout(http, HTTP_IDLE_TIMEOUT_S);
	/* Let every method reach our router, which answers 405 in JSON. */
	evhttp_set_allowed_methods(http,
		EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
			EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(http, dispatch, arg);
	if (http_conns_attach(conns, http, pool, verdict, arg) != 0) {
		evhttp_free(http);
		return NULL;
	}
	return http;
}

void http_server_free(struct http_conns *conns, struct evhttp *http)
{
	evhttp_free(http);
	http_conns_detach(conns, http);
}

/* A listening socket on a numeric host, as libevent would make it
 * (non-blocking, close-on-exec, SO_REUSEADDR, SO_KEEPALIVE, backlog 128).
 * libevent's own bind resolves even a numeric host with getaddrinfo's
 * AI_ADDRCONFIG, which dumps every address of the machine over netlink:
 * at each sandbox's create (its own envd port), for nothing. -2: host is
 * not numeric; -1: failed (errno). */
static int listen_numeric(const char *host, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		len = sizeof *in4;
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		len = sizeof *in6;
	} else {
		return -2;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one) != 0 ||
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
		bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 128) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int http_server_bind(struct evhttp *http, struct http_conns *conns, enum http_pool pool, const char *host,
	uint16_t port, uint16_t *bound_port, struct evconnlistener **listener_out)
{
	int made = listen_numeric(host, port);
	struct evhttp_bound_socket *handle = made == -2 ? evhttp_bind_socket_with_handle(http, host, port)
		: made >= 0                             ? evhttp_accept_socket_with_handle(http, made)
							: NULL;
	if (made >= 0 && !handle)
		close(made);
	if (!handle) {
		fprintf(stderr, "e2b-local-backend: cannot listen on %s:%u: %s\n", host, port,
			strerror(errno));
		return -1;
	}
	/* Processes the backend starts must not inherit the listener (libevent
	 * already asks for close-on-exec; this makes it explicit). */
	evutil_socket_t fd = evhttp_bound_socket_get_fd(handle);
	int fd_flags = fcntl(fd, F_GETFD);
	if (fd_flags < 0 || fcntl(fd, F_SETFD, fd_flags | FD_CLOEXEC) != 0) {
		fprintf(stderr, "e2b-local-backend: fcntl: %s\n", strerror(errno));
		return -1;
	}
	/* Streams are many small writes (headers, then one envelope per event):
	 * without TCP_NODELAY, Nagle holds each one back until the client's
	 * delayed ACK, about 40 ms. Accepted sockets inherit it on Linux. */
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
		fprintf(stderr, "e2b-local-backend: TCP_NODELAY: %s\n", strerror(errno));
		return -1;
	}
	http_conns_watch_listener(conns, evhttp_bound_socket_get_listener(handle), pool);
	if (listener_out)
		*listener_out = evhttp_bound_socket_get_listener(handle);
	struct sockaddr_storage addr;
	socklen_t len = sizeof addr;
	if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
		fprintf(stderr, "e2b-local-backend: getsockname: %s\n", strerror(errno));
		return -1;
	}
	if (addr.ss_family == AF_INET6)
		*bound_port = ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
	else
		*bound_port = ntohs(((struct sockaddr_in *)&addr)->sin_port);
	return 0;
}

void http_server_url(const char *host, uint16_t port, char *out, int cap)
{
	bool v6 = strchr(host, ':') != NULL;
	snprintf(out, (size_t)cap, v6 ? "http://[%s]:%u" : "http://%s:%u", host, port);
}
