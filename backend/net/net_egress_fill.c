/* A rule's header value with its secrets filled in (net_egress_fill.h). */
#define _GNU_SOURCE
#include "net/net_egress_fill.h"

#include "lib/err.h"
#include "net/net_egress_conn.h"
#include "net/net_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *net_egress_fill(const struct net_egress_env *env, const char *value, struct err *err)
{
	size_t cap = strlen(value) + 1, len = 0;
	char *out = malloc(cap);
	const char *open = NET_RULES_SECRET_OPEN;
	while (out) {
		const char *at = strstr(value, open);
		const char *end = at ? strchr(at + strlen(open), '}') : NULL;
		size_t plain = at && end ? (size_t)(at - value) : strlen(value);
		char *secret = NULL;
		size_t slen = 0;
		if (at && end) {
			char name[256];
			size_t nlen = (size_t)(end - at) - strlen(open);
			if (nlen == 0 || nlen >= sizeof name) {
				err_set(err, 0, "a secret placeholder names no secret");
				break;
			}
			memcpy(name, at + strlen(open), nlen);
			name[nlen] = '\0';
			if (!env->secret || env->secret(env->secret_ctx, name, &secret) != 0) {
				err_set(err, 0, "secret '%s' is not defined", name);
				break;
			}
			slen = strlen(secret);
		}
		if (len + plain + slen + 1 > cap) {
			size_t ncap = (len + plain + slen + 1) * 2;
			char *grown = malloc(ncap);
			if (grown)
				memcpy(grown, out, len);
			explicit_bzero(out, cap);
			free(out);
			out = grown;
			cap = ncap;
		}
		if (out) {
			memcpy(out + len, value, plain);
			len += plain;
			if (secret)
				memcpy(out + len, secret, slen);
			len += slen;
		}
		if (secret) {
			explicit_bzero(secret, slen);
			free(secret);
		}
		if (!out) {
			err_set(err, 0, "out of memory");
			return NULL;
		}
		if (!(at && end)) {
			out[len] = '\0';
			return out;
		}
		value = end + 1;
	}
	if (out) {
		explicit_bzero(out, cap);
		free(out);
	}
	return NULL;
}
