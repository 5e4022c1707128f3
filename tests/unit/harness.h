/* harness.h — drives a core like a host would: submits EPP messages, drains
 * the actions into queues the tests read, and plays the backend's part by
 * answering HTTP requests by hand. */
#ifndef E2BW_HARNESS_H
#define E2BW_HARNESS_H

#include <stdint.h>

#include "cJSON.h"
#include "e2bw.h"

#define H_MAX 256

typedef struct h_http {
	uint32_t op;
	char method[16];
	char url[1024];
	cJSON *headers;  /* [[name, value], ...] */
	char *body;      /* NUL-terminated copy, NULL when empty */
	size_t body_len; /* its length (a body may hold NUL bytes) */
} h_http;

typedef struct harness {
	e2bw_core *core;
	double now;
	cJSON *sends[H_MAX];
	char *send_text[H_MAX];
	int nsend, send_pos;
	h_http https[H_MAX];
	int nhttp, http_pos;
	uint32_t cancels[H_MAX];
	int ncancel, cancel_pos;
	struct h_call { /* calls by id: how many are open (e2bw_message) */
		char *id;
		int open;
	} calls[H_MAX];
	int ncalls;
} harness;

/* Detached strings (e2bw.h): when nonzero, every new harness sets this
 * detach size on its core and submits the longest string param of at least
 * H_DETACH_IN bytes detached; detached outputs are put back into their
 * messages, so every test checks the same messages in both forms. */
extern size_t h_detach;
#define H_DETACH_IN 64

harness *h_new(void);
void h_free(harness *h);
void h_drain(harness *h);

void h_submit(harness *h, const char *json);
/* initialize with the given config object text; checks it succeeded. */
void h_init(harness *h, const char *config_json);
#define H_CONFIG \
	"{\"api_key\":\"sk-test-SECRET-1234\",\"api_url\":\"http://api.test\",\"request_timeout\":10}"

/* Next queued message (owned by the harness) or NULL. */
cJSON *h_send(harness *h);
const char *h_send_text_last(harness *h);
h_http *h_http_next(harness *h);
uint32_t h_cancel_next(harness *h);
int h_pending(harness *h); /* queued, unread items of every kind */

void h_respond(harness *h, uint32_t op, int status, const char *headers, const char *body);

/* Accessors on a response message. */
const cJSON *h_result(const cJSON *msg);
int h_error_code(const cJSON *msg);
const char *h_error_kind(const cJSON *msg);
const char *h_error_message(const cJSON *msg);
const char *h_header(const h_http *req, const char *name);
double h_id(const cJSON *msg);

#endif
