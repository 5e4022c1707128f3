/* Reading a JSON request body. Every failure becomes a 400 whose message
 * says what is wrong, matching E2B's "Error when parsing request: ..."
 * answers; http_field.h reads the body's typed members the same way. */
#ifndef E2B_BACKEND_HTTP_BODY_H
#define E2B_BACKEND_HTTP_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

struct cJSON;
struct evhttp_request;

enum body_need {
	BODY_REQUIRED,
	BODY_OPTIONAL
};

/* The body as a JSON object. An empty body is {} when optional and a 400
 * when required. Non-JSON, trailing garbage, a non-object or a string with
 * \u0000 anywhere (cJSON would cut it at the NUL) is a 400.
 * NULL on failure with err filled; the caller deletes the result. */
struct cJSON *body_parse_object(struct evhttp_request *req, enum body_need need, struct err *err);

/* Fills err with a 400 and "Error when parsing request: <message>". */
void body_error_set(struct err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
