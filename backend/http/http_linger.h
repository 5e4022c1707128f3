/* Lingering close, as nginx's lingering_close: a connection closed while
 * its client is still sending (a refused upload) would answer the next
 * segment with a reset, and a reset can destroy the answer the client has
 * not read yet (its write fails first and the socket goes). So the answer
 * is followed by a FIN, and the socket is kept and read into nothing until
 * the client closes, a deadline passes or enough has been dropped.
 * Lingering sockets are outside the connection cap (they hold no request)
 * and few: past HTTP_LINGER_MAX the oldest is closed.
 * Calls nothing above libevent. */
#ifndef E2B_BACKEND_HTTP_LINGER_H
#define E2B_BACKEND_HTTP_LINGER_H

#include <event2/util.h>
#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct http_linger;

#define HTTP_LINGER_MAX 16                    /* sockets at once; taken from HTTP_CONNS_FD_RESERVE */
#define HTTP_LINGER_MS 5000                   /* at most this long per socket */
#define HTTP_LINGER_BYTES (64u * 1024 * 1024) /* and at most this much dropped */

struct http_linger *http_linger_new(struct event_base *base);
/* Closes every lingering socket. */
void http_linger_free(struct http_linger *l);

/* Takes fd (its own descriptor: the caller's copy goes its own way) and
 * closes it once the client has closed, or at the limits above. Returns
 * false, having closed fd, when out of memory. */
bool http_linger_take(struct http_linger *l, evutil_socket_t fd);

/* Sockets lingering now (for tests). */
size_t http_linger_count(const struct http_linger *l);

#endif
