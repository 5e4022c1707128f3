/* The envd user a request names: Authorization: Basic base64("<user>:") for
 * the RPCs (a header that is not valid Basic is ignored, as Go's BasicAuth
 * does), the `username` query parameter for /files. */
#ifndef E2B_BACKEND_ENVD_USER_H
#define E2B_BACKEND_ENVD_USER_H

#include <stddef.h>

struct evhttp_request;

/* 1 and the name in out when a Basic user is given, -1 when the given name
 * holds a NUL (no account can match it), else 0; out is "" unless 1. */
int envd_basic_user(struct evhttp_request *req, char *out, size_t cap);

#endif
