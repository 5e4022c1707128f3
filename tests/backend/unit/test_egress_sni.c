/* egress/egress_sni.c: ClientHellos OpenSSL itself writes (TLS 1.0, 1.2,
 * 1.3, with and without SNI, one of over 16 KiB across two records, one in
 * records of 512 bytes) read at every prefix length; every length field
 * garbled; hand-made hellos for what OpenSSL would not send. */
#include <stdbool.h>
#include <stdlib.h>

#include <openssl/ssl.h>

#include "check.h"
#include "egress/egress_sni.h"
#include "suites.h"

#define BIG_EXT 0xfff0

static int big_add(SSL *s, unsigned int type, unsigned int context, const unsigned char **out, size_t *outlen,
	X509 *x, size_t chainidx, int *al, void *arg)
{
	(void)s, (void)type, (void)context, (void)x, (void)chainidx, (void)al;
	size_t n = *(size_t *)arg;
	unsigned char *data = malloc(n);
	memset(data, 0x5a, n);
	*out = data;
	*outlen = n;
	return 1;
}

static void big_free(SSL *s, unsigned int type, unsigned int context, const unsigned char *out, void *arg)
{
	(void)s, (void)type, (void)context, (void)arg;
	free((void *)(size_t)out);
}

/* The bytes an OpenSSL client sends first: its ClientHello's records. */
static size_t openssl_hello(int version, const char *sni, size_t big, unsigned fragment, unsigned char *out,
	size_t cap)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_min_proto_version(ctx, version);
	SSL_CTX_set_max_proto_version(ctx, version);
	if (version < TLS1_2_VERSION)
		SSL_CTX_set_cipher_list(ctx, "DEFAULT:@SECLEVEL=0");
	if (big)
		SSL_CTX_add_custom_ext(ctx, BIG_EXT, SSL_EXT_CLIENT_HELLO, big_add, big_free, &big, NULL,
			NULL);
	SSL *ssl = SSL_new(ctx);
	if (fragment)
		SSL_set_max_send_fragment(ssl, fragment);
	SSL_set_bio(ssl, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
	if (sni)
		SSL_set_tlsext_host_name(ssl, sni);
	CHECK(SSL_connect(ssl) == -1);
	int n = BIO_read(SSL_get_wbio(ssl), out, (int)cap);
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	return n > 0 ? (size_t)n : 0;
}

/* Every proper prefix is MORE; the whole is want (with name). */
static bool every_prefix(const unsigned char *hello, size_t len, enum egress_sni_result want,
	const char *name)
{
	char got[256];
	for (size_t i = 0; i < len; i++) {
		enum egress_sni_result r = egress_sni_parse(hello, i, got, sizeof got);
		if (r != EGRESS_SNI_MORE) {
			fprintf(stderr, "  prefix %zu of %zu: %d\n", i, len, r);
			return false;
		}
	}
	strcpy(got, "unset");
	if (egress_sni_parse(hello, len, got, sizeof got) != want)
		return false;
	return want != EGRESS_SNI_FOUND || strcmp(got, name) == 0;
}

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static void add16(unsigned char *p, int d)
{
	unsigned v = (get16(p) + (unsigned)d) & 0xffff;
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static enum egress_sni_result garbled(const unsigned char *hello, size_t len, size_t at, int width, int d)
{
	unsigned char copy[4096];
	char name[256];
	memcpy(copy, hello, len);
	if (width == 1)
		copy[at] = (unsigned char)(copy[at] + d);
	else
		add16(copy + at, d);
	return egress_sni_parse(copy, len, name, sizeof name);
}

/* Each length field of a one-record hello with SNI, one more and one less. */
static void garble_lengths(const unsigned char *h, size_t len)
{
	size_t sid = 43, cs = sid + 1 + h[sid], comp = cs + 2 + get16(h + cs), exts = comp + 1 + h[comp];
	size_t sni = exts + 2;
	while (sni < len && get16(h + sni) != 0)
		sni += 4 + get16(h + sni + 2);
	CHECK(sni < len);
	if (sni >= len)
		return;
	struct {
		size_t at;
		int width;
	} fields[] = {
		{6, 1} /* hs length's low byte */,
		{7, 2},
		{sid, 1},
		{cs, 2},
		{comp, 1},
		{exts, 2},
		{sni + 2, 2} /* extension */,
		{sni + 4, 2} /* server_name list */,
		{sni + 7, 2} /* host_name */,
	};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		for (int d = -1; d <= 1; d += 2) {
			enum egress_sni_result r = garbled(h, len, fields[i].at, fields[i].width, d);
			if (r != EGRESS_SNI_NOT_TLS)
				fprintf(stderr, "  field at %zu %+d: %d\n", fields[i].at, d, r);
			CHECK(r == EGRESS_SNI_NOT_TLS);
		}
	/* the record's length: more than there is is a record going on past
	 * the hello; less leaves the hello's last byte as the next record's
	 * first, which is NOT_TLS unless that byte is 22 (then MORE) */
	CHECK(garbled(h, len, 3, 2, 1) == EGRESS_SNI_NOT_TLS);
	enum egress_sni_result r = garbled(h, len, 3, 2, -1);
	CHECK(r == (h[len - 1] == 22 ? EGRESS_SNI_MORE : EGRESS_SNI_NOT_TLS));
	CHECK(garbled(h, len, 3, 2, -(int)get16(h + 3)) == EGRESS_SNI_NOT_TLS); /* an empty record */
	CHECK(garbled(h, len, 3, 2, 16385 - (int)get16(h + 3)) == EGRESS_SNI_NOT_TLS);
}

static void from_openssl(void)
{
	static unsigned char hello[EGRESS_SNI_MAX_BYTES + 64];
	const int versions[] = {TLS1_VERSION, TLS1_2_VERSION, TLS1_3_VERSION};
	for (size_t v = 0; v < 3; v++) {
		size_t n = openssl_hello(versions[v], "api.example.com", 0, 0, hello, sizeof hello);
		CHECK(n > 50 && n < 4096 && hello[0] == 22);
		CHECK(every_prefix(hello, n, EGRESS_SNI_FOUND, "api.example.com"));
		garble_lengths(hello, n);
		/* what comes after the hello's last record is not looked at */
		memcpy(hello + n, "\x14\x03\x03\x00\x01\x01", 6);
		char name[64];
		CHECK(egress_sni_parse(hello, n + 6, name, sizeof name) == EGRESS_SNI_FOUND);
		/* a name that does not fit is not read */
		CHECK(egress_sni_parse(hello, n, name, strlen("api.example.com")) == EGRESS_SNI_NOT_TLS);
		CHECK(egress_sni_parse(hello, n, name, strlen("api.example.com") + 1) == EGRESS_SNI_FOUND);

		n = openssl_hello(versions[v], NULL, 0, 0, hello, sizeof hello);
		CHECK(every_prefix(hello, n, EGRESS_SNI_NONE, NULL));
	}

	/* over 16 KiB: OpenSSL sends it in two records */
	size_t n = openssl_hello(TLS1_3_VERSION, "big.example.org", 20000, 0, hello, sizeof hello);
	CHECK(n > 20000 && get16(hello + 3) == 16384 && hello[5 + 16384] == 22);
	CHECK(every_prefix(hello, n, EGRESS_SNI_FOUND, "big.example.org"));
	n = openssl_hello(TLS1_2_VERSION, "big.example.org", 20000, 0, hello, sizeof hello);
	CHECK(every_prefix(hello, n, EGRESS_SNI_FOUND, "big.example.org"));
	/* in records of 512 bytes */
	n = openssl_hello(TLS1_3_VERSION, "frag.example.net", 3000, 512, hello, sizeof hello);
	CHECK(get16(hello + 3) == 512);
	CHECK(every_prefix(hello, n, EGRESS_SNI_FOUND, "frag.example.net"));
	/* a hello the caller could never peek whole */
	n = openssl_hello(TLS1_3_VERSION, "huge.example.net", 40000, 0, hello, sizeof hello);
	char name[64];
	CHECK(egress_sni_parse(hello, n > EGRESS_SNI_MAX_BYTES ? EGRESS_SNI_MAX_BYTES : n, name,
		      sizeof name) == EGRESS_SNI_NOT_TLS);

	/* names OpenSSL sends as given */
	n = openssl_hello(TLS1_3_VERSION, "API.Example.COM", 0, 0, hello, sizeof hello);
	CHECK(every_prefix(hello, n, EGRESS_SNI_FOUND, "api.example.com"));
	const char *unreadable[] = {"a_b.example.com", "a..b", ".a", "a.", "a b", "\xc3\xa9.com"};
	for (size_t i = 0; i < sizeof unreadable / sizeof unreadable[0]; i++) {
		n = openssl_hello(TLS1_3_VERSION, unreadable[i], 0, 0, hello, sizeof hello);
		CHECK(n > 0 && egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	}
}

/* A hand-made ClientHello: body as TLS 1.2 sends it, then exts (exts_len
 * bytes, the block's own length first) unless exts is NULL, in records of
 * at most frag bytes. */
static size_t hand_hello(const unsigned char *exts, size_t exts_len, size_t frag, unsigned char *out)
{
	unsigned char hs[1024];
	size_t n = 4;
	hs[n++] = 3, hs[n++] = 3;
	memset(hs + n, 0x11, 32), n += 32;
	hs[n++] = 0;
	memcpy(hs + n, "\x00\x02\x13\x01\x01\x00", 6), n += 6;
	if (exts) {
		hs[n++] = (unsigned char)(exts_len >> 8), hs[n++] = (unsigned char)exts_len;
		memcpy(hs + n, exts, exts_len), n += exts_len;
	}
	hs[0] = 1, hs[1] = 0, hs[2] = (unsigned char)((n - 4) >> 8), hs[3] = (unsigned char)(n - 4);
	size_t w = 0;
	for (size_t at = 0; at < n; at += frag) {
		size_t piece = n - at < frag ? n - at : frag;
		out[w++] = 22, out[w++] = 3, out[w++] = 1;
		out[w++] = (unsigned char)(piece >> 8), out[w++] = (unsigned char)piece;
		memcpy(out + w, hs + at, piece), w += piece;
	}
	return w;
}

/* A server_name extension of the given (type, name) entries. */
static size_t sni_ext(unsigned char *out, size_t count, const unsigned char *types, const char *const *names)
{
	size_t n = 6;
	for (size_t i = 0; i < count; i++) {
		size_t len = strlen(names[i]);
		out[n++] = types[i], out[n++] = (unsigned char)(len >> 8), out[n++] = (unsigned char)len;
		memcpy(out + n, names[i], len), n += len;
	}
	out[0] = 0, out[1] = 0;
	out[2] = (unsigned char)((n - 4) >> 8), out[3] = (unsigned char)(n - 4);
	out[4] = (unsigned char)((n - 6) >> 8), out[5] = (unsigned char)(n - 6);
	return n;
}

/* Replaces cut bytes at at of a one-record hello with add_len bytes of add,
 * the record's and the handshake's lengths made to match. */
static size_t splice(unsigned char *hello, size_t n, size_t at, size_t cut, const void *add, size_t add_len)
{
	memmove(hello + at + add_len, hello + at + cut, n - at - cut);
	memcpy(hello + at, add, add_len);
	int d = (int)add_len - (int)cut;
	add16(hello + 3, d);
	add16(hello + 7, d);
	return n + add_len - cut;
}

/* The hello's own fields at their edges (a hand hello: session id at 43,
 * cipher suites at 44, compression methods at 48). */
static void fields(void)
{
	unsigned char hello[2048], ext[512], sid[33];
	char name[64];
	const char *one[] = {"x.example"};
	size_t base = hand_hello(ext, sni_ext(ext, 1, (const unsigned char *)"\0", one), 1000, hello), n;
	memset(sid, 7, sizeof sid);
	unsigned char copy[2048];
#define EDIT(at, cut, add, add_len) (memcpy(copy, hello, base), n = splice(copy, base, at, cut, add, add_len))
	EDIT(43, 1, "\x20", 1); /* a session id of 32 bytes */
	n = splice(copy, n, 44, 0, sid, 32);
	CHECK(every_prefix(copy, n, EGRESS_SNI_FOUND, "x.example"));
	EDIT(43, 1, "\x21", 1); /* of 33 */
	n = splice(copy, n, 44, 0, sid, 33);
	CHECK(egress_sni_parse(copy, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	EDIT(44, 4, "\x00\x00", 2); /* no cipher suite */
	CHECK(egress_sni_parse(copy, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	EDIT(44, 4, "\x00\x01\x13", 3); /* half of one */
	CHECK(egress_sni_parse(copy, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	EDIT(44, 4, "\x00\x04\x13\x01\x13\x02", 6); /* two */
	CHECK(every_prefix(copy, n, EGRESS_SNI_FOUND, "x.example"));
	EDIT(48, 2, "\x00", 1); /* no compression method */
	CHECK(egress_sni_parse(copy, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	EDIT(50, 0, "\x00", 1); /* a byte between them and the extensions */
	CHECK(egress_sni_parse(copy, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
#undef EDIT
	n = hand_hello(ext, sni_ext(ext, 0, NULL, NULL), 1000, hello); /* an empty server_name list */
	CHECK(egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	n = hand_hello((const unsigned char *)"\0\0\0\0", 4, 1000,
		hello); /* an empty server_name extension */
	CHECK(egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
}

static void hand_made(void)
{
	unsigned char hello[2048], ext[512];
	char name[256];
	size_t n = hand_hello(NULL, 0, 1000, hello); /* TLS 1.0-1.2 without extensions */
	CHECK(every_prefix(hello, n, EGRESS_SNI_NONE, NULL));
	n = hand_hello((const unsigned char *)"", 0, 1000, hello); /* an empty extensions block */
	CHECK(every_prefix(hello, n, EGRESS_SNI_NONE, NULL));

	const char *one[] = {"x.example"}, *two[] = {"x.example", "y.example"};
	size_t e = sni_ext(ext, 1, (const unsigned char *)"\0", one);
	n = hand_hello(ext, e, 1, hello); /* one byte a record */
	CHECK(every_prefix(hello, n, EGRESS_SNI_FOUND, "x.example"));
	n = hand_hello(ext, e, 2, hello); /* the handshake header split */
	CHECK(every_prefix(hello, n, EGRESS_SNI_FOUND, "x.example"));
	memcpy(ext + e, ext, e); /* the extension twice */
	n = hand_hello(ext, 2 * e, 1000, hello);
	CHECK(egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	e = sni_ext(ext, 2, (const unsigned char *)"\0\0", two); /* two host_names */
	n = hand_hello(ext, e, 1000, hello);
	CHECK(egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	e = sni_ext(ext, 2, (const unsigned char *)"\x07\0", two); /* an unknown name type first */
	n = hand_hello(ext, e, 1000, hello);
	CHECK(every_prefix(hello, n, EGRESS_SNI_FOUND, "y.example"));
	e = sni_ext(ext, 1, (const unsigned char *)"\x07", one); /* no host_name */
	n = hand_hello(ext, e, 1000, hello);
	CHECK(every_prefix(hello, n, EGRESS_SNI_NONE, NULL));
	char label[80], longname[300];
	memset(label, 'a', 64), label[64] = '\0'; /* a label over 63 bytes */
	const char *l64[] = {label};
	e = sni_ext(ext, 1, (const unsigned char *)"\0", l64);
	n = hand_hello(ext, e, 1000, hello);
	CHECK(egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	label[63] = '\0'; /* 63 is fine */
	n = hand_hello(ext, sni_ext(ext, 1, (const unsigned char *)"\0", l64), 1000, hello);
	CHECK(egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_FOUND);
	for (size_t i = 0; i < 254; i++) /* a name over 253 bytes */
		longname[i] = i % 2 ? '.' : 'a';
	longname[253] = 'a', longname[254] = '\0';
	const char *ln[] = {longname};
	n = hand_hello(ext, sni_ext(ext, 1, (const unsigned char *)"\0", ln), 1000, hello);
	CHECK(egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);

	/* one byte after the hello in its record */
	e = sni_ext(ext, 1, (const unsigned char *)"\0", one);
	n = hand_hello(ext, e, 1000, hello);
	hello[n] = 0;
	add16(hello + 3, 1);
	CHECK(egress_sni_parse(hello, n + 1, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	add16(hello + 3, -1);
	/* a record of another type, a handshake not a ClientHello, versions */
	hello[0] = 23;
	CHECK(egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	hello[0] = 22, hello[5] = 2;
	CHECK(egress_sni_parse(hello, 6, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	hello[5] = 1, hello[9] = 3, hello[10] = 4; /* legacy_version 0x0304 */
	CHECK(egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	hello[10] = 0; /* SSL 3.0 */
	CHECK(egress_sni_parse(hello, n, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	hello[2] = 5;
	CHECK(egress_sni_parse(hello, 3, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	/* a hello longer than could ever be peeked: refused at its length */
	memcpy(hello, "\x16\x03\x01\x40\x00\x01\xff\xff\xff", 9);
	CHECK(egress_sni_parse(hello, 9, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	memcpy(hello, "\x16\x03\x01\x40\x00\x01\x00\x7f\xfd", 9); /* one byte over two full records */
	CHECK(egress_sni_parse(hello, 9, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	hello[8] = 0xfc; /* two full records */
	CHECK(egress_sni_parse(hello, 9, name, sizeof name) == EGRESS_SNI_MORE);
}

static void not_tls(void)
{
	char name[64];
	const char *http = "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n";
	CHECK(egress_sni_parse((const unsigned char *)http, 1, name, sizeof name) == EGRESS_SNI_NOT_TLS);
	CHECK(egress_sni_parse((const unsigned char *)http, strlen(http), name, sizeof name) ==
		EGRESS_SNI_NOT_TLS);
	CHECK(egress_sni_parse((const unsigned char *)"\x80\x2e\x01\x03\x01", 5, name, sizeof name) ==
		EGRESS_SNI_NOT_TLS); /* SSLv2's hello */
	CHECK(egress_sni_parse((const unsigned char *)"\x16\x02", 2, name, sizeof name) ==
		EGRESS_SNI_NOT_TLS);
	CHECK(egress_sni_parse((const unsigned char *)"", 0, name, sizeof name) == EGRESS_SNI_MORE);
	CHECK(egress_sni_parse((const unsigned char *)"\x16", 1, name, sizeof name) == EGRESS_SNI_MORE);
}

void suite_egress_sni(void)
{
	from_openssl();
	hand_made();
	fields();
	not_tls();
}
