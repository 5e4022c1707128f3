/* files_url.c — URLs handed to clients that cannot send headers: files.url
 * (ours): a download (GET) or upload (POST) link to envd's /files carrying
 * envd's `v1_` signature and an expiry (docs/e2b-protocol-notes.md, "Files"),
 * as the SDK's downloadUrl/uploadUrl; ports.url: where a port inside the
 * sandbox is reached (by host name, <port>-<id>.<domain>, when the control
 * plane names a domain that resolves; else the configured sandbox_url with
 * E2B's routing headers), and the headers each request must carry
 * ("Reaching envd"; the traffic token of a sandbox created with
 * network.allowPublicTraffic false). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "envd.h"
#include "errors.h"
#include "files.h"
#include "files_url.h"
#include "names.h"
#include "sha256.h"
#include "url.h"

#define DEFAULT_EXPIRES_IN_S 3600.0

int e2bw_files_signature(e2bw_buf *out, const char *path, const char *operation, const char *user,
	const char *token, long long expiration)
{
	e2bw_sha256 h;
	uint8_t digest[32];
	char exp[32];
	e2bw_sha256_init(&h);
	e2bw_sha256_update(&h, path, strlen(path));
	e2bw_sha256_update(&h, ":", 1);
	e2bw_sha256_update(&h, operation, strlen(operation));
	e2bw_sha256_update(&h, ":", 1);
	e2bw_sha256_update(&h, user, strlen(user));
	e2bw_sha256_update(&h, ":", 1);
	e2bw_sha256_update(&h, token, strlen(token));
	if (expiration >= 0) {
		snprintf(exp, sizeof exp, ":%lld", expiration);
		e2bw_sha256_update(&h, exp, strlen(exp));
	}
	e2bw_sha256_final(&h, digest);
	size_t start = out->len;
	if (e2bw_buf_append_str(out, "v1_") || e2bw_base64_encode(out, digest, sizeof digest))
		return -1;
	while (out->len > start && out->data[out->len - 1] == '=')
		out->data[--out->len] = '\0'; /* no padding */
	return 0;
}

/* Howard Hinnant's civil-from-days. */
void e2bw_rfc3339(char out[32], long long t)
{
	long long days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
	long long secs = t - days * 86400;
	long long z = days + 719468;
	long long era = (z >= 0 ? z : z - 146096) / 146097;
	long long doe = z - era * 146097;
	long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	long long y = yoe + era * 400;
	long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	long long mp = (5 * doy + 2) / 153;
	long long d = doy - (153 * mp + 2) / 5 + 1;
	long long m = mp < 10 ? mp + 3 : mp - 9;
	if (m <= 2)
		y++;
	if (y < 0 || y > 9999)
		y = y < 0 ? 0 : 9999;
	snprintf(out, 32, "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)y, (int)m, (int)d, (int)(secs / 3600),
		(int)(secs / 60 % 60), (int)(secs % 60));
}

static void url_go(e2bw_core *core, e2bw_call *call)
{
	const char *id = e2bw_call_param_str(call, "sandbox_id");
	const char *path = e2bw_call_param_str(call, "path");
	const char *operation = e2bw_call_param_str(call, "operation");
	const char *user = e2bw_files_user(call);
	const cJSON *expires_in = cJSON_GetObjectItemCaseSensitive(call->params, "expires_in");
	const e2bw_sandbox_info *info = e2bw_sandbox_lookup(core, id);
	double in = cJSON_IsNumber(expires_in) ? expires_in->valuedouble : DEFAULT_EXPIRES_IN_S;
	long long expiration = (long long)floor(core->now / 1000.0) + (long long)ceil(in);
	e2bw_buf url = {0};
	int rc = e2bw_envd_base_url(core, id, &url) || e2bw_buf_append_str(&url, "/files?path=") ||
		e2bw_url_encode_str(&url, path) ||
		(user && (e2bw_buf_append_str(&url, "&username=") || e2bw_url_encode_str(&url, user)));
	int signed_url = info && info->token;
	if (signed_url) { /* a sandbox without an envd token takes unsigned requests */
		e2bw_buf sig = {0};
		char exp[32];
		snprintf(exp, sizeof exp, "%lld", expiration);
		/* envd signs an absent username as "" */
		rc |= e2bw_files_signature(&sig, path, operation, user ? user : "", info->token, expiration);
		rc |= e2bw_buf_append_str(&url, "&signature=") ||
			e2bw_url_encode(&url, sig.data ? sig.data : "", sig.len) ||
			e2bw_buf_append_str(&url, "&signature_expiration=") || e2bw_buf_append_str(&url, exp);
		e2bw_buf_free(&sig);
	}
	cJSON *r = cJSON_CreateObject();
	if (rc || !r) {
		e2bw_buf_free(&url);
		cJSON_Delete(r);
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	cJSON_AddStringToObject(r, "url", url.data);
	cJSON_AddStringToObject(r, "method", strcmp(operation, "write") == 0 ? "POST" : "GET");
	if (signed_url) {
		char when[32];
		e2bw_rfc3339(when, expiration);
		cJSON_AddStringToObject(r, "expires_at", when);
	} else {
		cJSON_AddNullToObject(r, "expires_at");
	}
	cJSON_AddBoolToObject(r, "signed", signed_url);
	e2bw_buf_free(&url);
	e2bw_call_succeed(core, call, r);
}

void e2bw_files_url(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, url_go);
}

/* <scheme>://<port>-<id>.<domain>: E2B's host routing, which the local
 * backend's envd listener does too. The scheme is the configured
 * sandbox_url's (http for a local backend), else https. */
static int host_name_url(e2bw_buf *url, const e2bw_config *cfg, const char *id, const char *port,
	const char *domain)
{
	const char *scheme =
		cfg->sandbox_url && !strncmp(cfg->sandbox_url, "http://", 7) ? "http://" : "https://";
	return e2bw_buf_append_str(url, scheme) || e2bw_buf_append_str(url, port) ||
		e2bw_buf_append_char(url, '-') || e2bw_buf_append_str(url, id) ||
		e2bw_buf_append_char(url, '.') || e2bw_buf_append_str(url, domain);
}

/* A domain whose host names end in .localhost (the local backend's
 * localhost:<port>): browsers and curl resolve them to loopback, Node and
 * glibc without systemd's resolver do not (RFC 6761 leaves it to them). */
static int localhost_domain(const char *domain)
{
	static const char suffix[] = ".localhost";
	char host[256];
	size_t n = strcspn(domain, ":"), k = sizeof suffix - 1;
	if (n >= sizeof host)
		return 0;
	memcpy(host, domain, n);
	host[n] = '\0';
	return e2bw_name_equal_nocase(host, "localhost") ||
		(n > k && e2bw_name_equal_nocase(host + n - k, suffix));
}

static void port_go(e2bw_core *core, e2bw_call *call)
{
	const char *id = e2bw_call_param_str(call, "sandbox_id");
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(call->params, "port");
	const e2bw_sandbox_info *info = e2bw_sandbox_lookup(core, id);
	const e2bw_config *cfg = &core->config;
	char port_text[16];
	snprintf(port_text, sizeof port_text, "%d", (int)port->valuedouble);
	e2bw_buf url = {0}, by_host = {0};
	cJSON *r = cJSON_CreateObject();
	cJSON *headers = cJSON_AddObjectToObject(r, "headers");
	const char *domain = info && info->domain ? info->domain : NULL;
	int rc;
	if (cfg->sandbox_url && (!domain || localhost_domain(domain))) {
		/* One proxy serves every sandbox and routes by these headers: a URL any
     * client resolves. A *.localhost name is kept beside it for browsers. */
		rc = e2bw_envd_base_url(core, id, &url);
		cJSON_AddStringToObject(headers, "E2b-Sandbox-Id", id);
		cJSON_AddStringToObject(headers, "E2b-Sandbox-Port", port_text);
		if (domain)
			rc |= host_name_url(&by_host, cfg, id, port_text, domain);
	} else {
		/* the sandbox's domain (E2B's, or one whose wildcard name resolves) */
		rc = host_name_url(&url, cfg, id, port_text, domain ? domain : cfg->domain);
	}
	/* network.allowPublicTraffic false: every request needs the token */
	if (info && info->traffic_token)
		cJSON_AddStringToObject(headers, "e2b-traffic-access-token", info->traffic_token);
	if (rc || !headers) {
		e2bw_buf_free(&url);
		e2bw_buf_free(&by_host);
		cJSON_Delete(r);
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	cJSON_AddStringToObject(r, "url", url.data);
	if (by_host.data)
		cJSON_AddStringToObject(r, "host_url", by_host.data);
	cJSON_AddNumberToObject(r, "port", port->valuedouble);
	e2bw_buf_free(&url);
	e2bw_buf_free(&by_host);
	e2bw_call_succeed(core, call, r);
}

void e2bw_ports_url(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, port_go);
}
