/* What a request says about itself: its method and path, the user an
 * Authorization: Basic header names, and the one-line request log. */
#ifndef E2B_BACKEND_HTTP_REQUEST_H
#define E2B_BACKEND_HTTP_REQUEST_H

#include <stddef.h>

struct evhttp_request;

/* "<server> <METHOD> <path> <status>" on stderr. Only the path is logged:
 * never headers, bodies or query strings, so no key or token can leak. */
void request_log(const char *server, struct evhttp_request *req, int status);

const char *request_method_name(const struct evhttp_request *req);
/* The request path without query, never NULL. */
const char *request_path(const struct evhttp_request *req);
/* Segment k (0-based) of the request's path, raw; "" when absent or longer
 * than cap - 1. */
void request_path_segment(const struct evhttp_request *req, int k, char *out, size_t cap);

/* The user of Authorization: Basic base64("<user>:"), as envd's RPCs take
 * it (a header that is not valid Basic is ignored, as Go's BasicAuth does).
 * 1 and the name in out when a Basic user is given, -1 when the given name
 * holds a NUL (no account can match it), else 0; out is "" unless 1. */
int request_basic_user(struct evhttp_request *req, char *out, size_t cap);

#endif
