/* The egress CA: its key and certificate (kept in a directory, or in memory
 * only), its PEM, and the leaves it signs, cached per host. */
#include "egress/egress_ca.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "egress/egress_cert.h"
#include "lib/err.h"
#include "lib/write_all.h"

#define CA_NAME "e2b-local-backend egress CA"
#define KEY_FILE "egress-ca.key"
#define CRT_FILE "egress-ca.crt"
#define DAY 86400
#define CA_DAYS 3652 /* ten years */
#define LEAF_SECONDS (7 * DAY)
#define LEAF_BACKDATE 3600
#define LEAF_RENEW DAY /* a leaf with less than this left is made again */
#define HOST_MAX 253

struct leaf {
	char host[HOST_MAX + 1];
	X509 *cert;
	time_t not_after;
	unsigned long long used; /* the tick of its last use */
};

struct egress_ca {
	EVP_PKEY *key;
	X509 *cert;
	char *pem;
	EVP_PKEY *leaf_key;
	struct leaf *leaves;
	size_t n_leaves;
	unsigned long long tick;
};

/* err = what failed, with OpenSSL's first queued error; the queue is emptied. */
static void ssl_fail(struct err *err, const char *what)
{
	unsigned long e = ERR_get_error();
	char detail[256] = "";
	if (e)
		ERR_error_string_n(e, detail, sizeof detail);
	err_set(err, 0, "%s%s%s", what, e ? ": " : "", detail);
	ERR_clear_error();
}

/* A PEM pass phrase callback that has none: an encrypted key fails, never prompts. */
static int no_pass(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return 0;
}

static X509 *make_ca(EVP_PKEY *key)
{
	time_t now = time(NULL);
	X509 *x = egress_cert_new(CA_NAME, NULL, key, now - DAY, now - DAY + (time_t)CA_DAYS * DAY);
	if (!x || egress_cert_ext(x, NULL, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") != 0 ||
		egress_cert_ext(x, NULL, NID_key_usage, "critical,keyCertSign,cRLSign") != 0 ||
		egress_cert_ext(x, NULL, NID_subject_key_identifier, "hash") != 0 ||
		X509_sign(x, key, EVP_sha256()) <= 0) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* dir/name through a temporary file in dir, renamed over it. */
static int write_file(const char *dir, const char *name, const char *data, size_t len, mode_t mode,
	struct err *err)
{
	char tmp[4096], path[4096];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, name) >= sizeof tmp ||
		(size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
		err_set(err, 0, "the egress CA's directory name is too long");
		return -1;
	}
	int fd = mkstemp(tmp); /* made 0600 */
	if (fd < 0) {
		err_set(err, errno, "cannot create a file in %s: %s", dir, strerror(errno));
		return -1;
	}
	int rc = fchmod(fd, mode) == 0 && write_all(fd, data, len) == 0 && fsync(fd) == 0 ? 0 : -1;
	int en = errno;
	if (close(fd) != 0 && rc == 0) {
		rc = -1;
		en = errno;
	}
	if (rc == 0 && rename(tmp, path) != 0) {
		rc = -1;
		en = errno;
	}
	if (rc != 0) {
		unlink(tmp);
		err_set(err, en, "cannot write %s: %s", path, strerror(en));
	}
	return rc;
}

/* The PEM of a key (PKCS#8) or a certificate, NUL-terminated, malloc'd. */
static char *pem_of(EVP_PKEY *key, X509 *cert)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *out = NULL, *data;
	if (bio &&
		(key ? PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL)
		     : PEM_write_bio_X509(bio, cert)) == 1) {
		long n = BIO_get_mem_data(bio, &data);
		if (n > 0 && (out = malloc((size_t)n + 1))) {
			memcpy(out, data, (size_t)n);
			out[n] = '\0';
		}
	}
	BIO_free(bio);
	return out;
}

static int save(const struct egress_ca *ca, const char *dir, struct err *err)
{
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		err_set(err, errno, "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	char *key = pem_of(ca->key, NULL);
	if (!key) {
		ssl_fail(err, "cannot encode the egress CA's key");
		return -1;
	}
	int rc = write_file(dir, KEY_FILE, key, strlen(key), 0600, err);
	OPENSSL_cleanse(key, strlen(key));
	free(key);
	if (rc == 0)
		rc = write_file(dir, CRT_FILE, ca->pem, strlen(ca->pem), 0644, err);
	return rc;
}

/* A file of dir opened for reading, not through a symbolic link. */
static FILE *open_in(const char *dir, const char *name, struct stat *st, struct err *err)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f = fd >= 0 && fstat(fd, st) == 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		err_set(err, errno, "cannot read %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

static int load(struct egress_ca *ca, const char *dir, struct err *err)
{
	struct stat st;
	FILE *f = open_in(dir, KEY_FILE, &st, err);
	if (!f)
		return -1;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0600) {
		err_set(err, 0,
			"refusing %s/%s: it must be a file of this user's with mode 0600 (it is %s, mode %04o, owner %u)",
			dir, KEY_FILE, S_ISREG(st.st_mode) ? "a file" : "not a file",
			(unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		fclose(f);
		return -1;
	}
	ca->key = PEM_read_PrivateKey(f, NULL, no_pass, NULL);
	fclose(f);
	if (!ca->key) {
		ssl_fail(err, "cannot read the egress CA's key");
		return -1;
	}
	if (!(f = open_in(dir, CRT_FILE, &st, err)))
		return -1;
	ca->cert = PEM_read_X509(f, NULL, no_pass, NULL);
	fclose(f);
	if (!ca->cert) {
		ssl_fail(err, "cannot read the egress CA's certificate");
		return -1;
	}
	if (X509_check_private_key(ca->cert, ca->key) != 1) {
		ssl_fail(err, "the egress CA's key and certificate do not match");
		return -1;
	}
	return 0;
}

static bool exists(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

struct egress_ca *egress_ca_open(const char *dir, struct err *err)
{
	struct egress_ca *ca = calloc(1, sizeof *ca);
	if (!ca) {
		err_set(err, 0, "out of memory");
		return NULL;
	}
	int rc;
	bool made = !(dir && exists(dir, KEY_FILE) && exists(dir, CRT_FILE));
	if (!made) {
		rc = load(ca, dir, err);
	} else {
		rc = -1;
		if (!(ca->key = egress_cert_key()) || !(ca->cert = make_ca(ca->key)))
			ssl_fail(err, "cannot make the egress CA");
		else
			rc = 0;
	}
	if (rc == 0 && !(ca->pem = pem_of(NULL, ca->cert))) {
		ssl_fail(err, "cannot encode the egress CA's certificate");
		rc = -1;
	}
	if (rc == 0 && dir && made)
		rc = save(ca, dir, err);
	if (rc == 0 && !(ca->leaf_key = egress_cert_key())) {
		ssl_fail(err, "cannot make the egress leaves' key");
		rc = -1;
	}
	if (rc == 0 && !(ca->leaves = calloc(EGRESS_CA_LEAVES_MAX, sizeof *ca->leaves))) {
		err_set(err, 0, "out of memory");
		rc = -1;
	}
	if (rc != 0) {
		egress_ca_free(ca);
		return NULL;
	}
	return ca;
}

const char *egress_ca_pem(const struct egress_ca *ca)
{
	return ca->pem;
}

/* A lower-case DNS name: [a-z0-9-] labels of 1 to 63 bytes, dot-separated. */
static bool host_ok(const char *host)
{
	size_t n = strlen(host), label = 0;
	if (n == 0 || n > HOST_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = host[i];
		if (ch == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if (((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-') &&
			label < 63) {
			label++;
		} else {
			return false;
		}
	}
	return label > 0;
}

static X509 *make_leaf(struct egress_ca *ca, const char *host, time_t now)
{
	time_t from = now - LEAF_BACKDATE;
	X509 *x = egress_cert_new(host, ca->cert, ca->leaf_key, from, from + LEAF_SECONDS);
	if (!x || egress_cert_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") != 0 ||
		egress_cert_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature") != 0 ||
		egress_cert_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") != 0 ||
		egress_cert_ext(x, ca->cert, NID_authority_key_identifier, "keyid:always") != 0 ||
		egress_cert_san_dns(x, host) != 0 || X509_sign(x, ca->key, EVP_sha256()) <= 0) {
		X509_free(x);
		ERR_clear_error();
		return NULL;
	}
	return x;
}

/* The cached leaf of host, else a free slot, else the least recently used. */
static struct leaf *slot(struct egress_ca *ca, const char *host)
{
	struct leaf *oldest = NULL;
	for (size_t i = 0; i < ca->n_leaves; i++) {
		if (strcmp(ca->leaves[i].host, host) == 0)
			return &ca->leaves[i];
		if (!oldest || ca->leaves[i].used < oldest->used)
			oldest = &ca->leaves[i];
	}
	if (ca->n_leaves < EGRESS_CA_LEAVES_MAX)
		return &ca->leaves[ca->n_leaves++];
	return oldest;
}

int egress_ca_leaf_at(struct egress_ca *ca, const char *host, time_t now, X509 **cert, EVP_PKEY **key)
{
	if (!host_ok(host))
		return -1;
	struct leaf *l = slot(ca, host);
	if (!l->cert || strcmp(l->host, host) != 0 || l->not_after - now < LEAF_RENEW) {
		X509 *x = make_leaf(ca, host, now);
		if (!x) {
			if (!l->cert) /* a slot just taken: give it back */
				ca->n_leaves--;
			return -1;
		}
		X509_free(l->cert);
		l->cert = x;
		l->not_after = now - LEAF_BACKDATE + LEAF_SECONDS;
		snprintf(l->host, sizeof l->host, "%s", host);
	}
	l->used = ++ca->tick;
	*cert = l->cert;
	*key = ca->leaf_key;
	return 0;
}

int egress_ca_leaf(struct egress_ca *ca, const char *host, X509 **cert, EVP_PKEY **key)
{
	return egress_ca_leaf_at(ca, host, time(NULL), cert, key);
}

void egress_ca_free(struct egress_ca *ca)
{
	if (!ca)
		return;
	for (size_t i = 0; i < ca->n_leaves; i++)
		X509_free(ca->leaves[i].cert);
	free(ca->leaves);
	EVP_PKEY_free(ca->leaf_key);
	free(ca->pem);
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	free(ca);
}
