/* network.egressProxy (net_tunnel.h). */
#define _GNU_SOURCE
#include "net/net_tunnel.h"

#include "lib/err.h"
#include "net/net_name.h"

#include <arpa/inet.h>
#include <cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_MAX 255 /* RFC 1929's username and password */

static int string_field(const cJSON *obj, const char *name, char **out, struct err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) > FIELD_MAX) {
		err_set(err, 0, "field \"network.egressProxy.%s\" must be a string of 1 to %d bytes", name,
			FIELD_MAX);
		return -1;
	}
	if (!(*out = strdup(v->valuestring))) {
		err_set(err, 0, "out of memory");
		return -1;
	}
	return 0;
}

/* "host:port": a DNS name or an IPv4 literal, and a port 1-65535. */
static bool parse_address(const char *text, struct net_tunnel *t)
{
	const char *colon = strrchr(text, ':');
	if (!colon || colon == text || (size_t)(colon - text) >= sizeof t->host ||
		memchr(text, '[', (size_t)(colon - text)))
		return false;
	char *end = NULL;
	long port = strtol(colon + 1, &end, 10);
	if (!isdigit((unsigned char)colon[1]) || *end || port < 1 || port > 65535) /* not " 80", "+80" */
		return false;
	char host[256];
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = '\0';
	struct in_addr a;
	if (inet_pton(AF_INET, host, &a) == 1)
		snprintf(t->host, sizeof t->host, "%s", host);
	else if (!net_name_domain(host, t->host, sizeof t->host) || t->host[0] == '*')
		return false;
	t->port = (uint16_t)port;
	return true;
}

int net_tunnel_parse(const cJSON *obj, struct net_tunnel *out, struct err *err)
{
	memset(out, 0, sizeof *out);
	if (!obj || cJSON_IsNull(obj))
		return 0;
	if (!cJSON_IsObject(obj)) {
		err_set(err, 0, "field \"network.egressProxy\" must be an object");
		return -1;
	}
	const cJSON *address = cJSON_GetObjectItemCaseSensitive(obj, "address");
	if (!cJSON_IsString(address) || !parse_address(address->valuestring, out)) {
		err_set(err, 0,
			"invalid egress proxy address %.64s: expected host:port (a DNS name or an "
			"IPv4 address, and a port from 1 to 65535)",
			cJSON_IsString(address) ? address->valuestring : "");
		return -1;
	}
	if (string_field(obj, "username", &out->user, err) != 0 ||
		string_field(obj, "password", &out->pass, err) != 0) {
		net_tunnel_free(out);
		return -1;
	}
	if (out->pass && !out->user) {
		net_tunnel_free(out);
		err_set(err, 0, "field \"network.egressProxy.password\" needs a username");
		return -1;
	}
	out->set = true;
	return 0;
}

void net_tunnel_free(struct net_tunnel *t)
{
	if (t->pass)
		explicit_bzero(t->pass, strlen(t->pass));
	free(t->pass);
	free(t->user);
	memset(t, 0, sizeof *t);
}

cJSON *net_tunnel_to_json(const struct net_tunnel *t)
{
	cJSON *o = cJSON_CreateObject();
	char address[300];
	snprintf(address, sizeof address, "%s:%u", t->host, (unsigned)t->port);
	if (o &&
		(!cJSON_AddStringToObject(o, "address", address) ||
			(t->user && !cJSON_AddStringToObject(o, "username", t->user)))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
