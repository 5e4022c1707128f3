/* libFuzzer target: the backend's request head parser and body framing
 * decoder (backend/http/http_head.c, http_framing.c), which read every byte
 * a client sends before evhttp does (http_gate.c). The first input byte
 * picks a piece size, the rest is what a client sent. Any bytes: no crash
 * and no leak; the head is found as the gate finds it; the body decoded as
 * it arrives in pieces of that size is the body decoded at once, with the
 * same end and the same verdict, and never more bytes than were sent; raw
 * mode (the port proxy's) passes exactly the bytes the decoder took. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "http/http_framing.h"
#include "http/http_head.h"

#include "fuzz_require.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decodes body (len bytes) fed piece bytes at a time; out gets what the
 * decoder gives; returns the bytes it took from the input. */
static size_t decode(struct http_framing *f, const uint8_t *body, size_t len, size_t piece, bool raw,
	struct evbuffer *out)
{
	struct evbuffer *src = evbuffer_new();
	size_t fed = 0, took = 0;
	while (!f->done && !f->failed) {
		size_t n = len - fed < piece ? len - fed : piece;
		if (n)
			evbuffer_add(src, body + fed, n);
		fed += n;
		size_t before = evbuffer_get_length(src);
		if (http_framing_take(f, src, out, SIZE_MAX, raw) != 0)
			REQUIRE(f->failed, "-1 without failed");
		took += before - evbuffer_get_length(src);
		if (n == 0)
			break; /* nothing more to give: the body is incomplete */
	}
	evbuffer_free(src);
	return took;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t piece = (size_t)data[0] % 16 + 1;
	data++;
	size--;

	struct evbuffer *held = evbuffer_new();
	evbuffer_add(held, data, size);
	size_t skip = 0;
	long end = http_head_end(held, &skip);
	if (end <= 0) {
		evbuffer_free(held);
		return 0;
	}
	REQUIRE((size_t)end <= size && skip <= (size_t)end, "head end %ld (skip %zu) past the %zu bytes", end,
		skip, size);
	evbuffer_drain(held, skip);
	size_t len = (size_t)end - skip;
	struct http_head_parsed head;
	memset(&head, 0, sizeof head);
	int rc = http_head_parse(held, len, &head);
	evbuffer_free(held);
	if (rc != 0) {
		http_head_clear(&head);
		return 0;
	}
	struct evbuffer *rebuilt = evbuffer_new();
	http_head_rebuild(&head, head.framing.kind == HTTP_FRAMING_LENGTH ? head.framing.length : 0, rebuilt);
	evbuffer_free(rebuilt);

	const uint8_t *body = data + end;
	size_t body_len = size - (size_t)end;
	struct http_framing whole = head.framing, pieces = head.framing, raw = head.framing;
	struct evbuffer *a = evbuffer_new(), *b = evbuffer_new(), *r = evbuffer_new();
	size_t took_a = decode(&whole, body, body_len, body_len ? body_len : 1, false, a);
	size_t took_b = decode(&pieces, body, body_len, piece, false, b);
	size_t took_r = decode(&raw, body, body_len, piece, true, r);
	REQUIRE(whole.done == pieces.done && whole.failed == pieces.failed,
		"verdicts differ by piece size %zu", piece);
	REQUIRE(whole.decoded == pieces.decoded && whole.decoded == raw.decoded, "decoded %llu vs %llu",
		(unsigned long long)whole.decoded, (unsigned long long)pieces.decoded);
	REQUIRE(evbuffer_get_length(a) == whole.decoded, "out %zu != decoded %llu", evbuffer_get_length(a),
		(unsigned long long)whole.decoded);
	REQUIRE(evbuffer_get_length(a) == evbuffer_get_length(b) &&
			(evbuffer_get_length(a) == 0 ||
				memcmp(evbuffer_pullup(a, -1), evbuffer_pullup(b, -1),
					evbuffer_get_length(a)) == 0),
		"the body differs by piece size %zu", piece);
	if (whole.done)
		REQUIRE(took_a == took_b && took_a == took_r, "the body ends at %zu, %zu or %zu", took_a,
			took_b, took_r);
	if (!raw.failed)
		REQUIRE(evbuffer_get_length(r) == took_r &&
				(took_r == 0 || memcmp(evbuffer_pullup(r, -1), body, took_r) == 0),
			"raw mode did not pass the bytes as sent");
	REQUIRE(took_a <= body_len && took_b <= body_len, "took more than was sent");
	if (whole.kind == HTTP_FRAMING_LENGTH)
		REQUIRE(whole.decoded <= whole.length, "past Content-Length");
	evbuffer_free(a);
	evbuffer_free(b);
	evbuffer_free(r);
	http_head_clear(&head);
	return 0;
}
