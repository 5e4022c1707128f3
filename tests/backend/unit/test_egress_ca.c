/* egress/egress_ca.c: a CA made in a directory and read back, the key
 * file's mode and owner enforced; a leaf verified against a store holding
 * only the CA, for its host and not another; the cache (same host, remade
 * near its end, the least recently used going); a TLS handshake in memory
 * between a client trusting only the CA and a server with the leaf. */
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "check.h"
#include "egress/egress_ca.h"
#include "lib/err.h"
#include "suites.h"

static X509 *from_pem(const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	X509 *x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	BIO_free(bio);
	return x;
}

/* Seconds from now to t. */
static long from_now(const ASN1_TIME *t)
{
	int days = 0, secs = 0;
	ASN1_TIME_diff(&days, &secs, NULL, t);
	return (long)days * 86400 + secs;
}

static bool near(long got, long want)
{
	return got >= want - 60 && got <= want + 60;
}

static void ca_fields(const char *pem)
{
	X509 *x = from_pem(pem);
	CHECK(x != NULL);
	if (!x)
		return;
	char cn[128] = "";
	X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof cn);
	CHECK_STR(cn, "e2b-local-backend egress CA");
	CHECK(X509_NAME_cmp(X509_get_subject_name(x), X509_get_issuer_name(x)) == 0);
	CHECK(X509_get_version(x) == X509_VERSION_3);
	CHECK((X509_get_extension_flags(x) & EXFLAG_CA) != 0);
	CHECK(X509_get_pathlen(x) == 0);
	CHECK(X509_get_key_usage(x) == (KU_KEY_CERT_SIGN | KU_CRL_SIGN));
	CHECK(X509_get0_subject_key_id(x) != NULL);
	int crit = -1;
	BASIC_CONSTRAINTS *bc = X509_get_ext_d2i(x, NID_basic_constraints, &crit, NULL);
	CHECK(bc && crit == 1);
	BASIC_CONSTRAINTS_free(bc);
	ASN1_BIT_STRING *ku = X509_get_ext_d2i(x, NID_key_usage, &crit, NULL);
	CHECK(ku && crit == 1);
	ASN1_BIT_STRING_free(ku);
	BIGNUM *serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	CHECK(BN_num_bits(serial) > 96 && BN_num_bits(serial) <= 128);
	BN_free(serial);
	EVP_PKEY *key = X509_get0_pubkey(x);
	CHECK(EVP_PKEY_is_a(key, "EC") && EVP_PKEY_get_bits(key) == 256);
	CHECK(near(from_now(X509_get0_notBefore(x)), -86400));
	CHECK(near(from_now(X509_get0_notAfter(x)), 3651L * 86400));
	CHECK(X509_verify(x, key) == 1);
	X509_free(x);
}

static void on_disk(void)
{
	char dir[] = "/tmp/egress-ca-XXXXXX", path[256];
	struct err why;
	CHECK(mkdtemp(dir) != NULL);
	struct egress_ca *ca = egress_ca_open(dir, &why);
	CHECK(ca != NULL);
	if (!ca) {
		fprintf(stderr, "  %s\n", why.msg);
		return;
	}
	char *pem = strdup(egress_ca_pem(ca));
	ca_fields(pem);
	egress_ca_free(ca);
	struct stat st;
	snprintf(path, sizeof path, "%s/egress-ca.key", dir);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_uid == geteuid());
	snprintf(path, sizeof path, "%s/egress-ca.crt", dir);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644);

	ca = egress_ca_open(dir, &why); /* read back: the same CA */
	CHECK(ca && strcmp(egress_ca_pem(ca), pem) == 0);
	egress_ca_free(ca);

	snprintf(path, sizeof path, "%s/egress-ca.key", dir);
	CHECK(chmod(path, 0640) == 0);
	CHECK(egress_ca_open(dir, &why) == NULL);
	CHECK(strstr(why.msg, "egress-ca.key") && strstr(why.msg, "0600") && strstr(why.msg, "0640"));
	CHECK(chmod(path, 0600) == 0);

	/* a certificate of another CA beside the key: refused */
	struct egress_ca *other = egress_ca_open(NULL, &why);
	CHECK(other && strcmp(egress_ca_pem(other), pem) != 0);
	snprintf(path, sizeof path, "%s/egress-ca.crt", dir);
	FILE *f = fopen(path, "w");
	fputs(egress_ca_pem(other), f);
	fclose(f);
	egress_ca_free(other);
	CHECK(egress_ca_open(dir, &why) == NULL);
	CHECK(strstr(why.msg, "do not match") != NULL);

	/* the certificate gone: a new CA, both files written again */
	CHECK(unlink(path) == 0);
	ca = egress_ca_open(dir, &why);
	CHECK(ca && strcmp(egress_ca_pem(ca), pem) != 0);
	egress_ca_free(ca);
	ca = egress_ca_open(dir, &why);
	CHECK(ca && strcmp(egress_ca_pem(ca), pem) != 0);
	egress_ca_free(ca);

	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	CHECK(system(path) == 0);
	free(pem);
}

/* X509_verify_cert against a store holding only ca, for host (NULL: any). */
static int verify(X509 *ca, X509 *leaf, const char *host)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_add_cert(store, ca);
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_STORE_CTX_init(ctx, store, leaf, NULL);
	X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
	if (host)
		X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0);
	int rc = X509_verify_cert(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	ERR_clear_error();
	return rc;
}

static BIGNUM *serial_of(X509 *x)
{
	return ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
}

static void leaves(struct egress_ca *ca, X509 *ca_cert)
{
	X509 *leaf = NULL;
	EVP_PKEY *key = NULL;
	CHECK(egress_ca_leaf(ca, "api.example.com", &leaf, &key) == 0 && leaf && key);
	if (!leaf)
		return;
	CHECK(verify(ca_cert, leaf, NULL) == 1);
	CHECK(verify(ca_cert, leaf, "api.example.com") == 1);
	CHECK(verify(ca_cert, leaf, "other.example.com") != 1);
	CHECK(X509_check_host(leaf, "api.example.com", 0, 0, NULL) == 1);
	CHECK(X509_check_host(leaf, "other.example.com", 0, 0, NULL) == 0);
	CHECK(X509_check_private_key(leaf, key) == 1);
	char cn[128] = "";
	X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn, sizeof cn);
	CHECK_STR(cn, "api.example.com");
	CHECK(X509_get_version(leaf) == X509_VERSION_3);
	CHECK((X509_get_extension_flags(leaf) & EXFLAG_CA) == 0);
	CHECK(X509_get_key_usage(leaf) == KU_DIGITAL_SIGNATURE);
	CHECK(X509_get_extended_key_usage(leaf) == XKU_SSL_SERVER);
	const ASN1_OCTET_STRING *aki = X509_get0_authority_key_id(leaf);
	CHECK(aki && ASN1_OCTET_STRING_cmp(aki, X509_get0_subject_key_id(ca_cert)) == 0);
	CHECK(near(from_now(X509_get0_notBefore(leaf)), -3600));
	CHECK(near(from_now(X509_get0_notAfter(leaf)), 7 * 86400 - 3600));
	/* a leaf is not a CA: what it signed is not trusted */
	X509 *other = NULL;
	struct egress_ca *ca2 = egress_ca_open(NULL, &(struct err){0});
	EVP_PKEY *k2;
	CHECK(ca2 && egress_ca_leaf(ca2, "api.example.com", &other, &k2) == 0);
	CHECK(other && verify(ca_cert, other, NULL) != 1); /* another CA's leaf */
	egress_ca_free(ca2);

	/* cached: the same certificate again; another host, another; one key */
	BIGNUM *first = serial_of(leaf);
	X509 *again = NULL, *b = NULL;
	EVP_PKEY *key2 = NULL;
	CHECK(egress_ca_leaf(ca, "api.example.com", &again, &key2) == 0 && again == leaf && key2 == key);
	CHECK(egress_ca_leaf(ca, "b.example.com", &b, &key2) == 0 && b != leaf && key2 == key);
	BIGNUM *bs = serial_of(b);
	CHECK(BN_cmp(first, bs) != 0);
	/* remade when under a day is left */
	time_t now = time(NULL);
	CHECK(egress_ca_leaf_at(ca, "api.example.com", now + 5 * 86400, &again, &key2) == 0);
	BIGNUM *s = serial_of(again);
	CHECK(BN_cmp(s, first) == 0);
	BN_free(s);
	CHECK(egress_ca_leaf_at(ca, "api.example.com", now + 6 * 86400 - 3600 + 60, &again, &key2) == 0);
	s = serial_of(again);
	CHECK(BN_cmp(s, first) != 0);
	BN_free(s);
	BN_free(first);

	/* at most EGRESS_CA_LEAVES_MAX: the least recently used goes */
	char host[64];
	for (int i = 0; i < EGRESS_CA_LEAVES_MAX; i++) {
		snprintf(host, sizeof host, "h%d.example", i);
		CHECK(egress_ca_leaf(ca, host, &leaf, &key) == 0);
	}
	/* b.example.com went first (api. was used after it); h0 is now the oldest */
	CHECK(egress_ca_leaf(ca, "h1.example", &leaf, &key) == 0);
	BIGNUM *h1 = serial_of(leaf);
	CHECK(egress_ca_leaf(ca, "h0.example", &leaf, &key) == 0); /* h0 was gone: made again, evicting h2 */
	CHECK(egress_ca_leaf(ca, "h1.example", &leaf, &key) == 0);
	s = serial_of(leaf);
	CHECK(BN_cmp(s, h1) == 0);
	BN_free(s);
	BN_free(h1);
	CHECK(egress_ca_leaf(ca, "b.example.com", &leaf, &key) == 0);
	s = serial_of(leaf);
	CHECK(BN_cmp(s, bs) != 0);
	BN_free(s);
	BN_free(bs);

	const char *bad[] = {"API.example.com", "a..b", "", ".a", "a.", "a b", "a_b", "a,DNS:evil.example"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(egress_ca_leaf(ca, bad[i], &leaf, &key) == -1);
}

/* Drives both ends over a BIO pair until both are done; true when both succeeded. */
static bool handshake(SSL *client, SSL *server)
{
	bool c_done = false, s_done = false;
	for (int i = 0; i < 100 && !(c_done && s_done); i++) {
		if (!c_done) {
			int rc = SSL_do_handshake(client);
			if (rc == 1)
				c_done = true;
			else if (SSL_get_error(client, rc) != SSL_ERROR_WANT_READ)
				return false;
		}
		if (!s_done) {
			int rc = SSL_do_handshake(server);
			if (rc == 1)
				s_done = true;
			else if (SSL_get_error(server, rc) != SSL_ERROR_WANT_READ)
				return false;
		}
	}
	return c_done && s_done;
}

static bool tls_to(struct egress_ca *ca, X509 *ca_cert, const char *want_host)
{
	SSL_CTX *cctx = SSL_CTX_new(TLS_client_method()), *sctx = SSL_CTX_new(TLS_server_method());
	X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), ca_cert);
	SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
	SSL *client = SSL_new(cctx), *server = SSL_new(sctx);
	SSL_set_tlsext_host_name(client, "api.example.com");
	SSL_set1_host(client, want_host);
	X509 *leaf;
	EVP_PKEY *key;
	CHECK(egress_ca_leaf(ca, "api.example.com", &leaf, &key) == 0);
	CHECK(SSL_use_certificate(server, leaf) == 1 && SSL_use_PrivateKey(server, key) == 1);
	BIO *cb, *sb;
	BIO_new_bio_pair(&cb, 0, &sb, 0);
	SSL_set_bio(client, cb, cb);
	SSL_set_bio(server, sb, sb);
	SSL_set_connect_state(client);
	SSL_set_accept_state(server);
	bool ok = handshake(client, server) && SSL_get_verify_result(client) == X509_V_OK;
	if (ok) { /* and bytes go through */
		char buf[8] = "";
		ok = SSL_write(client, "ping", 4) == 4 && SSL_read(server, buf, sizeof buf) == 4 &&
			memcmp(buf, "ping", 4) == 0;
	}
	SSL_free(client);
	SSL_free(server);
	SSL_CTX_free(cctx);
	SSL_CTX_free(sctx);
	ERR_clear_error();
	return ok;
}

void suite_egress_ca(void)
{
	on_disk();
	struct err why;
	struct egress_ca *ca = egress_ca_open(NULL, &why);
	CHECK(ca != NULL);
	if (!ca)
		return;
	X509 *ca_cert = from_pem(egress_ca_pem(ca));
	leaves(ca, ca_cert);
	CHECK(tls_to(ca, ca_cert, "api.example.com"));
	CHECK(!tls_to(ca, ca_cert, "other.example.com"));
	/* the server's SSL holds its own references: the CA may go first */
	X509_free(ca_cert);
	egress_ca_free(ca);
}
