/* The TLS sides of an intercepted connection (net_egress_tls.h). */
#include "net/net_egress_tls.h"

#include "egress/egress_ca.h"
#include "net/net_egress_conn.h"
#include "net/net_egress_stream.h"

#include <openssl/ssl.h>

struct net_egress_stream *net_egress_tls_side(const struct net_egress_env *env, const char *sni, int fd,
	bool server, const struct net_egress_stream_callbacks *cb)
{
	SSL *ssl = SSL_new(server ? env->server_ctx : env->client_ctx);
	if (!ssl)
		return NULL;
	if (server) {
		X509 *cert;
		EVP_PKEY *key;
		if (egress_ca_leaf(env->ca, sni, &cert, &key) != 0 || SSL_use_certificate(ssl, cert) != 1 ||
			SSL_use_PrivateKey(ssl, key) != 1) {
			SSL_free(ssl);
			return NULL;
		}
	} else if (SSL_set_tlsext_host_name(ssl, sni) != 1 || SSL_set1_host(ssl, sni) != 1 ||
		SSL_set_alpn_protos(ssl, (const unsigned char *)"\x08http/1.1", 9) != 0) {
		SSL_free(ssl);
		return NULL;
	}
	struct net_egress_stream *s = net_egress_stream_new(env->base, fd, ssl, server, cb);
	if (!s)
		SSL_free(ssl);
	return s;
}
