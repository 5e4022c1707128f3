/* multipart/form-data (RFC 7578) read as it arrives: bytes go in piece by
 * piece, parts come out as begin (with the part's Content-Disposition),
 * data and end events, so an upload is written to its files without ever
 * being held whole. The body may start with its first delimiter without a
 * CRLF before it; transport padding after a delimiter is skipped; the
 * preamble and epilogue are ignored. Part headers may total 16 KiB. Calls
 * nothing but libevent's buffers. */
#ifndef E2B_BACKEND_FS_MULTIPART_H
#define E2B_BACKEND_FS_MULTIPART_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;
struct err;

struct fs_multipart_events {
	/* Each returns 0, or -1 to stop the parse (the caller has its reason). */
	int (*part_begin)(void *arg, const char *disposition);
	int (*part_data)(void *arg, struct evbuffer *data, size_t len); /* drains len bytes of data */
	int (*part_end)(void *arg);
	void *arg;
};

struct fs_multipart;

/* NULL for a boundary that is empty or too long (over 190 bytes), or when
 * out of memory. */
struct fs_multipart *fs_multipart_new(const char *boundary, const struct fs_multipart_events *ev);
void fs_multipart_free(struct fs_multipart *m);

/* Parses what it can of in (draining it). 0; -1 when a callback stopped it
 * (err untouched) or the body is malformed (err set with 400, returns -2). */
int fs_multipart_feed(struct fs_multipart *m, struct evbuffer *in, struct err *err);
/* The body has ended: 0 when the closing delimiter was seen, else -2 with err. */
int fs_multipart_finish(struct fs_multipart *m, struct err *err);

#endif
