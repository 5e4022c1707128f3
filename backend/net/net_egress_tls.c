/* The TLS sides of an intercepted connection (net_egress_tls.h). */
#include "net/net_egress_tls.h"

#include "egress/egress_ca.h"
#include "net/net_egress_conn.h"

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/ssl.h>

struct bufferevent *net_egress_tls_side(const struct net_egress_env *env, const char *sni, int fd,
	bool server)
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
	struct bufferevent *bev = bufferevent_openssl_socket_new(env->base, fd, ssl,
		server ? BUFFEREVENT_SSL_ACCEPTING : BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		SSL_free(ssl);
		return NULL;
	}
	/* Many servers end without close_notify: an end all the same. */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}
