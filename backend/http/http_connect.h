/* The Connect protocol (connectrpc.com) as envd speaks it, JSON codec only
 * (docs/e2b-protocol-notes.md, "Connect protocol"): error codes and their HTTP
 * statuses, request content-type checks, unary requests and answers, and the
 * 5-byte envelopes of server-streaming answers including the end-stream frame.
 *
 * application/proto and application/connect+proto are refused with 415 and a
 * JSON body {"code":"unimplemented",...}: this backend serves JSON only. */
#ifndef E2B_BACKEND_CONNECT_PROTO_H
#define E2B_BACKEND_CONNECT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

struct cJSON;
struct evbuffer;
struct evhttp_request;

enum connect_code {
	CONNECT_CANCELED = 1,
	CONNECT_UNKNOWN = 2,
	CONNECT_INVALID_ARGUMENT = 3,
	CONNECT_DEADLINE_EXCEEDED = 4,
	CONNECT_NOT_FOUND = 5,
	CONNECT_ALREADY_EXISTS = 6,
	CONNECT_PERMISSION_DENIED = 7,
	CONNECT_RESOURCE_EXHAUSTED = 8,
	CONNECT_FAILED_PRECONDITION = 9,
	CONNECT_ABORTED = 10,
	CONNECT_OUT_OF_RANGE = 11,
	CONNECT_UNIMPLEMENTED = 12,
	CONNECT_INTERNAL = 13,
	CONNECT_UNAVAILABLE = 14,
	CONNECT_DATA_LOSS = 15,
	CONNECT_UNAUTHENTICATED = 16
};

#define CONNECT_FLAG_COMPRESSED 0x01
#define CONNECT_FLAG_END_STREAM 0x02
#define CONNECT_ENVELOPE_HEADER 5

/* The struct err of every function here and of envd's Connect handlers
 * carries an enum connect_code as its status. */

/* "not_found" etc., and the HTTP status connect-go uses for it. */
const char *connect_code_name(enum connect_code code);
int connect_code_http_status(enum connect_code code);

enum connect_kind {
	CONNECT_UNARY,
	CONNECT_SERVER_STREAM
};

/* Checks that the request's Content-Type (and encoding) is the JSON codec of
 * the method's kind. Returns 0 when it is; otherwise it has answered (415 for
 * another codec or protocol, 501 for request compression) and returns the
 * status it sent. */
int connect_check_request(struct evhttp_request *req, enum connect_kind kind);

/* The request message of a unary call, or of a server-streaming call (one
 * envelope). NULL with err filled (invalid_argument) on malformed input; the
 * caller deletes the result. */
struct cJSON *connect_read_unary(struct evhttp_request *req, struct err *err);
struct cJSON *connect_read_stream_request(struct evhttp_request *req, struct err *err);

/* Unary answers: 200 application/json with msg (deleted), or the error with
 * its HTTP status and body {"code":"<name>","message":"..."}. */
int connect_reply_unary(struct evhttp_request *req, struct cJSON *msg);
int connect_reply_unary_error(struct evhttp_request *req, const struct err *err);

/* Streaming answers. */
/* Content-Type application/connect+json and CORS headers. */
void connect_stream_headers(struct evhttp_request *req);
/* One envelope around len bytes of JSON. 0, or -1 when out of memory. */
int connect_envelope_add(struct evbuffer *buf, uint8_t flags, const char *json, size_t len);
int connect_envelope_add_json(struct evbuffer *buf, uint8_t flags, const struct cJSON *msg);
/* The end-stream envelope: {} on success (err NULL), else {"error":{...}}. */
int connect_end_stream_add(struct evbuffer *buf, const struct err *err);
/* A whole streaming answer made of one end-stream error, with HTTP 200, as
 * connect-go sends errors from streaming handlers. */
int connect_reply_stream_error(struct evhttp_request *req, const struct err *err);

/* Keepalive-Ping-Interval (seconds) in ms, for server streams: envd's
 * 90 s when absent or unusable, at least CONNECT_KEEPALIVE_MIN_MS. envd
 * takes whole seconds; fractions are our extension, so tests can watch
 * keepalives without waiting. */
#define CONNECT_KEEPALIVE_DEFAULT_MS 90000
#define CONNECT_KEEPALIVE_MIN_MS 50
long long connect_keepalive_ms(const char *header);

#endif
