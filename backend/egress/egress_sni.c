/* egress_sni_parse: the ClientHello's handshake message is gathered from
 * its records into a buffer on the stack, then read by a cursor that tells
 * a length running past its container (NOT_TLS) from bytes not come yet
 * (MORE), so a garbled prefix is refused as soon as it is seen. */
#include "egress/egress_sni.h"

#include <stdbool.h>
#include <string.h>

#define RECORD_HEADER 5
#define RECORD_MAX 16384
#define CONTENT_HANDSHAKE 22
#define HANDSHAKE_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0
#define NAME_TYPE_HOST 0
#define NAME_MAX_LEN 253
#define LABEL_MAX_LEN 63

/* What take() found: the bytes are there, or the answer for the caller. */
#define GOT (-1)

/* The hello's body: have bytes of it are there, end is its length. */
struct cursor {
	const unsigned char *p;
	size_t at, have, end;
};

/* n bytes at the cursor within a container ending at end (<= c->end). */
static int take(struct cursor *c, size_t end, size_t n, const unsigned char **out)
{
	if (n > end - c->at)
		return EGRESS_SNI_NOT_TLS;
	if (n > c->have - c->at)
		return EGRESS_SNI_MORE;
	*out = c->p + c->at;
	c->at += n;
	return GOT;
}

static int take_u8(struct cursor *c, size_t end, size_t *v)
{
	const unsigned char *b;
	int rc = take(c, end, 1, &b);
	if (rc == GOT)
		*v = b[0];
	return rc;
}

static int take_u16(struct cursor *c, size_t end, size_t *v)
{
	const unsigned char *b;
	int rc = take(c, end, 2, &b);
	if (rc == GOT)
		*v = (size_t)b[0] << 8 | b[1];
	return rc;
}

/* A DNS name of letters, digits, '-' and '.', no empty label. */
static bool name_readable(const unsigned char *s, size_t n)
{
	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = s[i];
		if (ch == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			ch == '-';
		if (!ok || ++label > LABEL_MAX_LEN)
			return false;
	}
	return label > 0;
}

/* The server_name extension's data (RFC 6066 section 3): its one host_name. */
static int server_name(struct cursor *c, size_t end, const unsigned char **host, size_t *host_len)
{
	size_t list_len, type, len;
	const unsigned char *skip;
	int rc = take_u16(c, end, &list_len);
	if (rc != GOT)
		return rc;
	if (list_len == 0 || list_len != end - c->at)
		return EGRESS_SNI_NOT_TLS;
	while (c->at < end) {
		if ((rc = take_u8(c, end, &type)) != GOT || (rc = take_u16(c, end, &len)) != GOT)
			return rc;
		if ((rc = take(c, end, len, &skip)) != GOT)
			return rc;
		if (type != NAME_TYPE_HOST)
			continue;
		if (*host || !name_readable(skip, len))
			return EGRESS_SNI_NOT_TLS;
		*host = skip;
		*host_len = len;
	}
	return GOT;
}

/* The ClientHello's body (RFC 8446 section 4.1.2, RFC 5246 section 7.4.1.2). */
static int client_hello(struct cursor *c, const unsigned char **host, size_t *host_len)
{
	const size_t end = c->end;
	const unsigned char *b;
	size_t n;
	int rc = take(c, end, 2, &b);
	if (rc != GOT)
		return rc;
	if (b[0] != 3 || b[1] < 1 || b[1] > 3)
		return EGRESS_SNI_NOT_TLS;
	if ((rc = take(c, end, 32, &b)) != GOT) /* random */
		return rc;
	if ((rc = take_u8(c, end, &n)) != GOT) /* legacy_session_id */
		return rc;
	if (n > 32)
		return EGRESS_SNI_NOT_TLS;
	if ((rc = take(c, end, n, &b)) != GOT)
		return rc;
	if ((rc = take_u16(c, end, &n)) != GOT) /* cipher_suites */
		return rc;
	if (n < 2 || n % 2)
		return EGRESS_SNI_NOT_TLS;
	if ((rc = take(c, end, n, &b)) != GOT)
		return rc;
	if ((rc = take_u8(c, end, &n)) != GOT) /* legacy_compression_methods */
		return rc;
	if (n < 1)
		return EGRESS_SNI_NOT_TLS;
	if ((rc = take(c, end, n, &b)) != GOT)
		return rc;
	if (c->at == end) /* TLS 1.0-1.2: no extensions */
		return GOT;
	if ((rc = take_u16(c, end, &n)) != GOT)
		return rc;
	if (n != end - c->at)
		return EGRESS_SNI_NOT_TLS;
	bool seen = false;
	while (c->at < end) {
		size_t type, len;
		if ((rc = take_u16(c, end, &type)) != GOT || (rc = take_u16(c, end, &len)) != GOT)
			return rc;
		if (len > end - c->at)
			return EGRESS_SNI_NOT_TLS;
		if (type != EXT_SERVER_NAME) {
			if ((rc = take(c, end, len, &b)) != GOT)
				return rc;
			continue;
		}
		if (seen)
			return EGRESS_SNI_NOT_TLS;
		seen = true;
		if ((rc = server_name(c, c->at + len, host, host_len)) != GOT)
			return rc;
	}
	return GOT;
}

enum egress_sni_result egress_sni_parse(const unsigned char *buf, size_t len, char *name, size_t cap)
{
	unsigned char hs[EGRESS_SNI_MAX_BYTES];
	size_t hs_len = 0, off = 0, hello_len = 0;
	bool complete = false;
	if (len > EGRESS_SNI_MAX_BYTES)
		len = EGRESS_SNI_MAX_BYTES;
	/* Gather the handshake message from records of type 22 until it is all
	 * there; the last of them must end with it. */
	while (!complete) {
		size_t left = len - off;
		if (left >= 1 && buf[off] != CONTENT_HANDSHAKE)
			return EGRESS_SNI_NOT_TLS;
		if (left >= 2 && buf[off + 1] != 3)
			return EGRESS_SNI_NOT_TLS;
		if (left >= 3 && buf[off + 2] > 4)
			return EGRESS_SNI_NOT_TLS;
		if (left < RECORD_HEADER) {
			if (off + RECORD_HEADER > EGRESS_SNI_MAX_BYTES)
				return EGRESS_SNI_NOT_TLS;
			break;
		}
		size_t record = (size_t)buf[off + 3] << 8 | buf[off + 4];
		if (record == 0 || record > RECORD_MAX || off + RECORD_HEADER + record > EGRESS_SNI_MAX_BYTES)
			return EGRESS_SNI_NOT_TLS;
		size_t got = left - RECORD_HEADER < record ? left - RECORD_HEADER : record;
		memcpy(hs + hs_len, buf + off + RECORD_HEADER, got);
		size_t before = hs_len;
		hs_len += got;
		if (before == 0 && hs_len > 0 && hs[0] != HANDSHAKE_CLIENT_HELLO)
			return EGRESS_SNI_NOT_TLS;
		if (hs_len >= 4) {
			hello_len = (size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3];
			if (4 + hello_len > EGRESS_SNI_MAX_BYTES - 2 * RECORD_HEADER)
				return EGRESS_SNI_NOT_TLS; /* could never be peeked whole */
			if (hs_len > 4 + hello_len)        /* more than the hello in its last record */
				return EGRESS_SNI_NOT_TLS;
			complete = hs_len == 4 + hello_len && got == record;
			if (hs_len == 4 + hello_len && got < record)
				return EGRESS_SNI_NOT_TLS; /* the record goes on past the hello */
		}
		if (got < record)
			break;
		off += RECORD_HEADER + record;
	}
	if (hs_len < 4)
		return EGRESS_SNI_MORE;
	struct cursor c = {.p = hs + 4, .at = 0, .have = hs_len - 4, .end = hello_len};
	const unsigned char *host = NULL;
	size_t host_len = 0;
	int rc = client_hello(&c, &host, &host_len);
	if (rc != GOT)
		return (enum egress_sni_result)rc;
	if (!complete) /* read to its end, but the end is yet to come */
		return EGRESS_SNI_MORE;
	if (!host)
		return EGRESS_SNI_NONE;
	if (host_len + 1 > cap)
		return EGRESS_SNI_NOT_TLS;
	for (size_t i = 0; i < host_len; i++)
		name[i] = (char)(host[i] >= 'A' && host[i] <= 'Z' ? host[i] + ('a' - 'A') : host[i]);
	name[host_len] = '\0';
	return EGRESS_SNI_FOUND;
}
