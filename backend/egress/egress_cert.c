/* X.509 building blocks on OpenSSL 3.0's API. */
#include "egress/egress_cert.h"

#include <stdbool.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

EVP_PKEY *egress_cert_key(void)
{
	return EVP_EC_gen("P-256");
}

/* A random positive 128-bit serial (RFC 5280 section 4.1.2.2: at most 20 octets). */
static int random_serial(X509 *x)
{
	unsigned char bytes[16];
	if (RAND_bytes(bytes, sizeof bytes) != 1)
		return -1;
	bytes[sizeof bytes - 1] |= 1; /* never zero */
	BIGNUM *bn = BN_bin2bn(bytes, sizeof bytes, NULL);
	ASN1_INTEGER *serial = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
	int rc = serial && X509_set_serialNumber(x, serial) == 1 ? 0 : -1;
	ASN1_INTEGER_free(serial);
	BN_free(bn);
	return rc;
}

X509 *egress_cert_new(const char *cn, const X509 *issuer, EVP_PKEY *key, time_t not_before, time_t not_after)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();
	bool ok = x && name && X509_set_version(x, X509_VERSION_3) == 1 && random_serial(x) == 0 &&
		X509_NAME_add_entry_by_NID(name, NID_commonName, MBSTRING_UTF8, (const unsigned char *)cn, -1,
			-1, 0) == 1 &&
		X509_set_subject_name(x, name) == 1 &&
		X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name) == 1 &&
		ASN1_TIME_set(X509_getm_notBefore(x), not_before) &&
		ASN1_TIME_set(X509_getm_notAfter(x), not_after) && X509_set_pubkey(x, key) == 1;
	X509_NAME_free(name);
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

int egress_cert_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	int rc = ext && X509_add_ext(x, ext, -1) == 1 ? 0 : -1;
	X509_EXTENSION_free(ext);
	return rc;
}

int egress_cert_san_dns(X509 *x, const char *host)
{
	GENERAL_NAMES *names = GENERAL_NAMES_new();
	GENERAL_NAME *dns = GENERAL_NAME_new();
	ASN1_IA5STRING *ia5 = ASN1_IA5STRING_new();
	int rc = -1;
	if (!names || !dns || !ia5 || ASN1_STRING_set(ia5, host, (int)strlen(host)) != 1)
		goto out;
	GENERAL_NAME_set0_value(dns, GEN_DNS, ia5);
	ia5 = NULL;
	if (sk_GENERAL_NAME_push(names, dns) <= 0)
		goto out;
	dns = NULL;
	rc = X509_add1_ext_i2d(x, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) == 1 ? 0 : -1;
out:
	ASN1_IA5STRING_free(ia5);
	GENERAL_NAME_free(dns);
	GENERAL_NAMES_free(names);
	return rc;
}
