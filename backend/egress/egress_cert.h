/* The X.509 v3 pieces egress_ca.c makes its CA and its leaves of. */
#ifndef E2B_BACKEND_EGRESS_CERT_H
#define E2B_BACKEND_EGRESS_CERT_H

#include <time.h>

#include <openssl/types.h>

/* A new EC P-256 key, or NULL. */
EVP_PKEY *egress_cert_key(void);
/* An unsigned v3 certificate: a random 128-bit serial, subject CN=cn,
 * issuer's subject as its issuer (its own subject when issuer is NULL),
 * key's public key, valid from not_before to not_after. NULL on failure. */
X509 *egress_cert_new(const char *cn, const X509 *issuer, EVP_PKEY *key, time_t not_before, time_t not_after);
/* Adds an extension given as x509v3_config text (a constant, e.g.
 * "critical,CA:TRUE,pathlen:0"); issuer (x itself when NULL) is where
 * authorityKeyIdentifier's keyid comes from. -1 on failure. */
int egress_cert_ext(X509 *x, X509 *issuer, int nid, const char *value);
/* subjectAltName DNS:host, built directly (no config text a name could
 * inject into). -1 on failure. */
int egress_cert_san_dns(X509 *x, const char *host);

#endif
