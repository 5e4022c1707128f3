/* The backend's one error convention: a function that can fail takes a
 * struct err * as its last argument and, on failure, fills it with a status
 * and a message in one printf-like call, `return err_set(e, 404, "no %s", x);`.
 * A caller adds its own context in front with err_wrap and hands it up; the
 * top level answers or logs it once. Messages never hold a credential.
 *
 * status is what the caller above needs: an HTTP status for the REST side,
 * a connect_code for envd's Connect answers, an errno where the failing call
 * set one, else 0. Each function's comment says which. */
#ifndef E2B_BACKEND_ERR_H
#define E2B_BACKEND_ERR_H

#include <stdarg.h>

/* Long enough for a message naming a full path (PATH_MAX) and its reason. */
#define ERR_MSG_MAX 4352

struct err {
	int status;
	char msg[ERR_MSG_MAX];
};

/* Sets status and the formatted message (cut to fit, NUL-terminated).
 * Returns -1, so a failing function can return it. e may be NULL. */
int err_set(struct err *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int err_setv(struct err *e, int status, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Puts the formatted context and ": " in front of the message; the status
 * stays. Returns -1. e may be NULL. */
int err_wrap(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* No error: status 0, empty message. */
void err_clear(struct err *e);

#endif
