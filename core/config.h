/* config.h — the provider config that `initialize` carries (abx-provider.toml
 * [config.fields]). Validated once; the rest of the core reads it from here. */
#ifndef E2BW_CONFIG_H
#define E2BW_CONFIG_H

#include "cJSON.h"

typedef struct e2bw_config {
	char *api_key;                /* secret: only ever sent as X-API-Key */
	char *domain;                 /* default "e2b.app" */
	char *api_url;                /* no trailing slash; default https://api.<domain> */
	char *sandbox_url;            /* NULL: envd at https://49983-<id>.<domain> */
	double request_timeout_ms;    /* per backend request; default 60 s */
	double keepalive_interval_ms; /* asked of envd on streams; default 15 s */
	int envd_passthrough;         /* return envd_url + token in records */
} e2bw_config;

#define E2BW_DEFAULT_DOMAIN "e2b.app"
#define E2BW_DEFAULT_REQUEST_TIMEOUT_S 60.0
#define E2BW_MAX_REQUEST_TIMEOUT_S 3600.0
#define E2BW_DEFAULT_KEEPALIVE_S 15.0

/* Fills *cfg from initialize's `config` object. Returns NULL on success, else
 * an invalid_params error naming the field (never quoting a secret).
 * key_hint: how the user sets api_key on this transport, for the error when
 * it is missing (NULL: initialize's params.config). */
cJSON *e2bw_config_parse(e2bw_config *cfg, const cJSON *config, const char *key_hint);
void e2bw_config_free(e2bw_config *cfg);

/* Checks that s is an http(s) URL with a host, without credentials, query or
 * fragment. Used for api_url/sandbox_url. */
int e2bw_config_url_ok(const char *s);

#endif
