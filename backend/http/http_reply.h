/* Writing responses: JSON bodies, the E2B error shape {"code","message"},
 * and CORS headers on every answer (the request log is http_request.h).
 * Each reply function returns the status it sent, so handlers can
 * `return reply_error(...)` and the dispatcher can log it. */
#ifndef E2B_BACKEND_HTTP_REPLY_H
#define E2B_BACKEND_HTTP_REPLY_H

struct cJSON;
struct evbuffer;
struct evhttp_request;

/* cJSON_PrintUnformatted, with any byte that is not UTF-8 replaced by
 * U+FFFD. Caller frees with free(); NULL when out of memory. */
char *reply_json_print(const struct cJSON *value);

/* Sends body as application/json and deletes it. A HEAD request gets the
 * headers (Content-Length included) and no body. */
int reply_json(struct evhttp_request *req, int status, struct cJSON *body);
/* The same for JSON text already built (valid UTF-8), drained from text. */
int reply_json_text(struct evhttp_request *req, int status, struct evbuffer *text);
/* {"code":status,"message":message}, the schema E2B uses for every error. */
int reply_error(struct evhttp_request *req, int status, const char *message);
int reply_errorf(struct evhttp_request *req, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* No body, e.g. 204. */
int reply_empty(struct evhttp_request *req, int status);
/* Answers a CORS preflight (OPTIONS) with 204. */
int reply_preflight(struct evhttp_request *req);

/* Adds the CORS headers every answer carries. The reply_* functions call it;
 * a streaming handler that uses evhttp_send_reply_start must call it too. */
void reply_add_cors(struct evhttp_request *req);

#endif
