/* The backend's egress CA and the certificates it mints: sandboxes with
 * egress transform rules trust this CA, and the proxy terminates their TLS
 * to a ruled host with a leaf for that host signed by it. Everything runs
 * on the backend's event loop: no locking. */
#ifndef E2B_BACKEND_EGRESS_CA_H
#define E2B_BACKEND_EGRESS_CA_H

#include <stddef.h>
#include <time.h>

#include <openssl/types.h>

#define EGRESS_CA_LEAVES_MAX 1024 /* hosts whose leaves are kept */

struct egress_ca;
struct err;

/* dir != NULL: loads dir/egress-ca.key and dir/egress-ca.crt when both
 * exist (refusing a key file not mode 0600 or not owned by us, or one that
 * does not match the certificate), else makes a new CA and writes both (key
 * 0600, certificate 0644, each written to a temporary file and renamed; dir
 * is made 0700 when missing). dir == NULL: a new CA in memory only. The CA:
 * EC P-256 key, self-signed X.509 v3, subject CN "e2b-local-backend egress
 * CA", basicConstraints critical CA:TRUE pathlen:0, keyUsage critical
 * keyCertSign+cRLSign, subjectKeyIdentifier, validity from 1 day ago for 10
 * years, random 128-bit serial. NULL with err (status: the errno, or 0). */
struct egress_ca *egress_ca_open(const char *dir, struct err *err);
/* The CA certificate in PEM, NUL-terminated (what sandboxes are told to
 * trust); owned by ca, valid until egress_ca_free. */
const char *egress_ca_pem(const struct egress_ca *ca);
/* A leaf for host (a DNS name, lower-case: [a-z0-9.-], no empty label, at
 * most 253 bytes; else -1): made once per host and cached (at most
 * EGRESS_CA_LEAVES_MAX hosts; the least recently used goes), signed by the
 * CA with one EC P-256 key shared by all leaves (made at open, never
 * written). X.509 v3, subject CN=host, subjectAltName DNS:host,
 * extendedKeyUsage serverAuth, keyUsage critical digitalSignature,
 * basicConstraints critical CA:FALSE, authorityKeyIdentifier, validity from
 * 1 hour ago for 7 days (remade when under a day is left), random serial.
 * The pointers are borrowed (valid until the next egress_ca_leaf call or
 * egress_ca_free; the caller hands them to SSL_use_certificate /
 * SSL_use_PrivateKey which take their own references). -1 on failure. */
int egress_ca_leaf(struct egress_ca *ca, const char *host, X509 **cert, EVP_PKEY **key);
/* egress_ca_leaf as if the time were now (the tests' clock). */
int egress_ca_leaf_at(struct egress_ca *ca, const char *host, time_t now, X509 **cert, EVP_PKEY **key);
void egress_ca_free(struct egress_ca *ca);

#endif
