#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "names.h"

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

static int has_control_chars(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

int e2bw_config_url_ok(const char *s)
{
	const char *rest;
	if (strncmp(s, "http://", 7) == 0)
		rest = s + 7;
	else if (strncmp(s, "https://", 8) == 0)
		rest = s + 8;
	else
		return 0;
	if (*rest == '\0' || *rest == '/')
		return 0;
	if (has_control_chars(s) || strchr(s, ' '))
		return 0;
	size_t host_len = strcspn(rest, "/");
	if (memchr(rest, '@', host_len))
		return 0; /* credentials in URLs leak into logs */
	if (strchr(rest, '?') || strchr(rest, '#'))
		return 0;
	return 1;
}

static int domain_ok(const char *s)
{
	if (!*s || strlen(s) > 253)
		return 0;
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '-' || c == '.' || c == ':'))
			return 0;
	}
	return 1;
}

static cJSON *field_error(const char *field, const char *what)
{
	cJSON *e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid config: '%.60s' %s", field, what);
	char path[80];
	snprintf(path, sizeof path, "config.%.60s", field);
	return e2bw_error_set_str(e, "field", path);
}

/* Every field abx-provider.toml declares ([config.fields]). */
static const char *const config_fields[] = {"api_key", "domain", "api_url", "sandbox_url", "request_timeout",
	"keepalive_interval", "envd_passthrough"};
#define CONFIG_FIELD_COUNT (sizeof config_fields / sizeof config_fields[0])

/* A host passes only the fields the manifest declares (the seed's
 * "options only contain the fields you declared"), so any other key is a
 * mistake whose value would be lost without a word (timout, apiUrl): it is
 * refused, naming the declared field nearest to it (names.h). */
/* The refusal of a name that is not a field, with the field meant. Apart
 * (never inlined) so that a config of known fields runs none of it: in
 * core.wasm the first initialize compiles only what it runs. */
__attribute__((noinline)) static cJSON *not_a_field(const char *name)
{
	e2bw_name_match near = E2BW_NAME_MATCH_INIT, nearest = E2BW_NAME_MATCH_INIT;
	for (size_t i = 0; i < CONFIG_FIELD_COUNT; i++) {
		e2bw_name_consider(&near, name, config_fields[i]);
		e2bw_name_consider_nearest(&nearest, name, config_fields[i]);
	}
	const char *meant = near.meant ? near.meant : nearest.meant;
	char what[256];
	if (near.meant || nearest.distance <= 2)
		snprintf(what, sizeof what, "is not a config field: did you mean '%s'?", meant);
	else {
		size_t n = (size_t)snprintf(what, sizeof what, "is not a config field (");
		for (size_t i = 0; i < CONFIG_FIELD_COUNT && n < sizeof what; i++)
			n += (size_t)snprintf(what + n, sizeof what - n, "%s%s", i ? ", " : "",
				config_fields[i]);
		if (n < sizeof what)
			snprintf(what + n, sizeof what - n, "): the nearest is '%s'", meant);
	}
	return e2bw_error_set_str(field_error(name, what), "did_you_mean", meant);
}

static cJSON *unknown_field(const cJSON *config)
{
	const cJSON *item;
	cJSON_ArrayForEach(item, config) {
		int known = 0;
		for (size_t i = 0; i < CONFIG_FIELD_COUNT && item->string; i++)
			known |= strcmp(item->string, config_fields[i]) == 0;
		if (!known && item->string)
			return not_a_field(item->string);
	}
	return NULL;
}

/* Optional string field: NULL item or JSON null means "not set". */
static cJSON *get_string(const cJSON *config, const char *name, const char **out)
{
	*out = NULL;
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(config, name);
	if (!item || cJSON_IsNull(item))
		return NULL;
	if (!cJSON_IsString(item))
		return field_error(name, "must be a string");
	if (item->valuestring[0] != '\0')
		*out = item->valuestring; /* "" = unset, as env vars give it */
	return NULL;
}

/* Optional seconds field; hosts may pass env-derived values as strings ("30"). */
static cJSON *get_seconds(const cJSON *config, const char *name, double min, double max, double *out_ms)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, name);
	if (!v || cJSON_IsNull(v) || (cJSON_IsString(v) && v->valuestring[0] == '\0'))
		return NULL;
	double seconds;
	char *end = NULL;
	if (cJSON_IsNumber(v))
		seconds = v->valuedouble;
	else if (cJSON_IsString(v))
		seconds = strtod(v->valuestring, &end);
	else
		return field_error(name, "must be a number of seconds");
	if ((end && *end != '\0') || !(seconds >= min) || seconds > max) {
		char what[96];
		snprintf(what, sizeof what, "must be a number of seconds from %g to %g", min, max);
		return field_error(name, what);
	}
	*out_ms = seconds * 1000.0;
	return NULL;
}

static char *without_trailing_slash(const char *s)
{
	char *p = dup_str(s);
	if (!p)
		return NULL;
	size_t n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		p[--n] = '\0';
	return p;
}

/* "is required: <how to set it>", the hint cut to what a message carries. */
static cJSON *key_missing(const char *key_hint)
{
	char what[400];
	snprintf(what, sizeof what, "is required: %.380s",
		key_hint ? key_hint : "give it in initialize's params.config");
	return field_error("api_key", what);
}

cJSON *e2bw_config_parse(e2bw_config *cfg, const cJSON *config, const char *key_hint)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->request_timeout_ms = E2BW_DEFAULT_REQUEST_TIMEOUT_S * 1000.0;
	cfg->keepalive_interval_ms = E2BW_DEFAULT_KEEPALIVE_S * 1000.0;
	if (!cJSON_IsObject(config))
		return key_missing(key_hint);

	const char *api_key, *domain, *api_url, *sandbox_url;
	cJSON *err = unknown_field(config);
	if (err)
		return err;
	if ((err = get_string(config, "api_key", &api_key)))
		return err;
	if (!api_key)
		return key_missing(key_hint);
	if (has_control_chars(api_key))
		return field_error("api_key", "must not contain control characters");
	if ((err = get_string(config, "domain", &domain)))
		return err;
	if (domain && !domain_ok(domain))
		return field_error("domain", "must be a host name such as e2b.app");
	if ((err = get_string(config, "api_url", &api_url)))
		return err;
	if (api_url && !e2bw_config_url_ok(api_url))
		return field_error("api_url",
			"must be an http(s) URL without credentials, query or fragment");
	if ((err = get_string(config, "sandbox_url", &sandbox_url)))
		return err;
	if (sandbox_url && !e2bw_config_url_ok(sandbox_url))
		return field_error("sandbox_url",
			"must be an http(s) URL without credentials, query or fragment");

	if ((err = get_seconds(config, "request_timeout", 0.001, E2BW_MAX_REQUEST_TIMEOUT_S,
		     &cfg->request_timeout_ms)))
		return err;
	if ((err = get_seconds(config, "keepalive_interval", 0.1, 600, &cfg->keepalive_interval_ms)))
		return err;
	const cJSON *passthrough = cJSON_GetObjectItemCaseSensitive(config, "envd_passthrough");
	if (passthrough && !cJSON_IsNull(passthrough)) {
		if (cJSON_IsBool(passthrough))
			cfg->envd_passthrough = cJSON_IsTrue(passthrough);
		else if (cJSON_IsString(passthrough) &&
			(!strcmp(passthrough->valuestring, "true") || !strcmp(passthrough->valuestring, "1")))
			cfg->envd_passthrough = 1;
		else if (!(cJSON_IsString(passthrough) &&
				 (!strcmp(passthrough->valuestring, "false") ||
					 !strcmp(passthrough->valuestring, "0") ||
					 !passthrough->valuestring[0])))
			return field_error("envd_passthrough", "must be a boolean");
	}

	cfg->api_key = dup_str(api_key);
	cfg->domain = dup_str(domain ? domain : E2BW_DEFAULT_DOMAIN);
	if (api_url) {
		cfg->api_url = without_trailing_slash(api_url);
	} else if (cfg->domain) { /* joined by hand: a handshake that formats nothing runs no printf */
		static const char scheme[] = "https://api.";
		size_t n = strlen(cfg->domain) + 1;
		cfg->api_url = malloc(sizeof scheme - 1 + n);
		if (cfg->api_url) {
			memcpy(cfg->api_url, scheme, sizeof scheme - 1);
			memcpy(cfg->api_url + sizeof scheme - 1, cfg->domain, n);
		}
	}
	if (sandbox_url)
		cfg->sandbox_url = without_trailing_slash(sandbox_url);
	if (!cfg->api_key || !cfg->domain || !cfg->api_url || (sandbox_url && !cfg->sandbox_url)) {
		e2bw_config_free(cfg);
		return e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory while reading the config");
	}
	return NULL;
}

void e2bw_config_free(e2bw_config *cfg)
{
	free(cfg->api_key);
	free(cfg->domain);
	free(cfg->api_url);
	free(cfg->sandbox_url);
	memset(cfg, 0, sizeof *cfg);
}
