#include "envd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "e2b_api.h"
#include "envelope.h"
#include "errors.h"
#include "url.h"

#define USER_AGENT "e2b-wasm/" E2BW_VERSION

static char *dup_or_null(const cJSON *v)
{
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return NULL;
	size_t n = strlen(v->valuestring) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, v->valuestring, n);
	return p;
}

static void info_free(e2bw_sandbox_info *s)
{
	free(s->id);
	free(s->token);
	free(s->traffic_token);
	free(s->domain);
	free(s->envd_version);
	free(s);
}

const e2bw_sandbox_info *e2bw_sandbox_lookup(const e2bw_core *core, const char *id)
{
	for (const e2bw_sandbox_info *s = core->sandboxes; s; s = s->next)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

void e2bw_sandbox_remember(e2bw_core *core, const cJSON *sandbox)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(sandbox, "sandboxID");
	if (!cJSON_IsString(id) || !id->valuestring[0])
		return;
	const cJSON *traffic = cJSON_GetObjectItemCaseSensitive(sandbox, "trafficAccessToken");
	char *kept = NULL;
	for (e2bw_sandbox_info *old = core->sandboxes; old && !traffic; old = old->next)
		if (strcmp(old->id, id->valuestring) ==
			0) { /* a SandboxDetail: the token learned from the Sandbox stays */
			kept = old->traffic_token;
			old->traffic_token = NULL;
			break;
		}
	e2bw_sandbox_forget(core, id->valuestring);
	e2bw_sandbox_info *s = calloc(1, sizeof *s);
	if (!s) {
		free(kept);
		return;
	}
	s->traffic_token = traffic ? dup_or_null(traffic) : kept;
	if (s->traffic_token &&
		e2bw_secrets_add(&core->secrets, s->traffic_token, E2BW_SECRET_TRAFFIC_TOKEN) != 0) {
		free(s->traffic_token); /* not remembered as a secret: not handed out either */
		s->traffic_token = NULL;
	}
	s->id = dup_or_null(id);
	s->token = dup_or_null(cJSON_GetObjectItemCaseSensitive(sandbox, "envdAccessToken"));
	s->domain = dup_or_null(cJSON_GetObjectItemCaseSensitive(sandbox, "domain"));
	s->envd_version = dup_or_null(cJSON_GetObjectItemCaseSensitive(sandbox, "envdVersion"));
	if (!s->id || e2bw_secrets_add(&core->secrets, s->token, E2BW_SECRET_ENVD_TOKEN) != 0) {
		free(s->token); /* not remembered as a secret: not used either */
		s->token = NULL;
	}
	if (!s->id) {
		info_free(s);
		return;
	}
	s->next = core->sandboxes;
	core->sandboxes = s;
}

void e2bw_sandbox_forget(e2bw_core *core, const char *id)
{
	for (e2bw_sandbox_info **p = &core->sandboxes; *p; p = &(*p)->next) {
		if (strcmp((*p)->id, id) == 0) {
			e2bw_sandbox_info *gone = *p;
			*p = gone->next;
			info_free(gone);
			return;
		}
	}
}

void e2bw_sandboxes_free(e2bw_core *core)
{
	while (core->sandboxes) {
		e2bw_sandbox_info *next = core->sandboxes->next;
		info_free(core->sandboxes);
		core->sandboxes = next;
	}
}

/* --- learning a sandbox from the control plane --------------------------- */

static const char *call_sandbox_id(const e2bw_call *call)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(call->params, "sandbox_id");
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* A paused sandbox is `unavailable` until resumed (docs/errors.md), and
 * says so in data.status: a host tells it from a sandbox that is gone. */
static cJSON *paused_error(const char *id)
{
	cJSON *e = e2bw_error_new(E2BW_ERR_UNAVAILABLE,
		"Sandbox '%s' is paused: resume it (sandbox.resume) before using it", id);
	return e2bw_error_set_str(e, "status", "paused");
}

/* The sandbox proxy's answer for an id with no running sandbox behind it
 * (docs/e2b-protocol-notes.md, "Reaching envd"): the sandbox may be gone or only paused. */
static cJSON *proxy_not_running_error(const char *id)
{
	cJSON *e = e2bw_error_new(E2BW_ERR_NOT_FOUND,
		"Sandbox '%s' is not running: it was killed, paused, or reached its timeout", id);
	e2bw_error_set_str(e, "sdk_code", E2BW_SDK_SANDBOX_NOT_FOUND);
	return e2bw_error_set_num(e, "http_status", 502);
}

static int is_proxy_not_running(const cJSON *error)
{
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(error, "data");
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(data, "kind");
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(data, "http_status");
	const cJSON *sdk = cJSON_GetObjectItemCaseSensitive(data, "sdk_code");
	return cJSON_IsString(kind) && !strcmp(kind->valuestring, "not_found") && cJSON_IsNumber(status) &&
		status->valuedouble == 502 && cJSON_IsString(sdk) &&
		!strcmp(sdk->valuestring, E2BW_SDK_SANDBOX_NOT_FOUND);
}

/* The control plane's word on a sandbox the proxy could not find: 404 is
 * gone (E2009), "paused" is paused; running (the proxy has not caught up
 * with a resume) is `unavailable` for now. Any other answer says nothing
 * new: the proxy's own error stands. */
static void rechecked(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	const char *id = call_sandbox_id(call);
	cJSON *error;
	if (op->status == 404) {
		error = e2bw_api_error(op, id);
		e2bw_sandbox_forget(core, id);
	} else {
		cJSON *detail = op->status == 200 && op->body.len
			? cJSON_ParseWithLength(op->body.data, op->body.len)
			: NULL;
		const cJSON *state = cJSON_GetObjectItemCaseSensitive(detail, "state");
		if (cJSON_IsString(state) && !strcmp(state->valuestring, "paused")) {
			error = paused_error(id);
		} else if (cJSON_IsString(state) && !strcmp(state->valuestring, "running")) {
			error = e2bw_error_new(E2BW_ERR_UNAVAILABLE,
				"Sandbox '%s' did not answer through the sandbox proxy, though the control plane "
				"reports it running (it may be resuming): try again",
				id);
			e2bw_error_set_str(e2bw_error_set_num(error, "http_status", 502), "status",
				"running");
		} else {
			error = proxy_not_running_error(id);
		}
		cJSON_Delete(detail);
	}
	e2bw_http_op_finish(core, op);
	e2bw_call_fail(core, call, error);
}

/* The failure hook of every data-plane call (set by e2bw_envd_ensure). */
static int vet_envd_failure(e2bw_core *core, e2bw_call *call, cJSON *error)
{
	if (!is_proxy_not_running(error))
		return 0;
	cJSON_Delete(error);
	e2bw_http_cancel_call(core, call);
	e2bw_buf path = {0};
	if (e2bw_buf_append_str(&path, "/sandboxes/") || e2bw_url_encode_str(&path, call_sandbox_id(call)))
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
	else
		e2bw_api_request(core, call, "GET", path.data, NULL, rechecked);
	e2bw_buf_free(&path);
	return 1;
}

static void learned(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	const char *id = call_sandbox_id(call);
	if (op->status < 200 || op->status >= 300) {
		cJSON *error = e2bw_api_error(op, id);
		e2bw_http_op_finish(core, op);
		e2bw_call_fail(core, call, error);
		return;
	}
	cJSON *detail = e2bw_api_json(core, op, 0);
	if (!detail)
		return;
	e2bw_http_op_finish(core, op);
	const cJSON *state = cJSON_GetObjectItemCaseSensitive(detail, "state");
	if (cJSON_IsString(state) && strcmp(state->valuestring, "paused") == 0) {
		cJSON_Delete(detail);
		e2bw_call_fail(core, call, paused_error(id));
		return;
	}
	e2bw_sandbox_remember(core, detail);
	cJSON_Delete(detail);
	call->then(core, call);
}

void e2bw_envd_ensure(e2bw_core *core, e2bw_call *call, void (*next)(e2bw_core *, e2bw_call *))
{
	const char *id = call_sandbox_id(call);
	call->vet_failure = vet_envd_failure;
	if (e2bw_sandbox_lookup(core, id)) {
		next(core, call);
		return;
	}
	call->then = next;
	e2bw_buf path = {0};
	if (e2bw_buf_append_str(&path, "/sandboxes/") || e2bw_url_encode_str(&path, id))
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
	else
		e2bw_api_request(core, call, "GET", path.data, NULL, learned);
	e2bw_buf_free(&path);
}

/* --- requests ------------------------------------------------------------ */

int e2bw_envd_base_url(const e2bw_core *core, const char *sandbox_id, e2bw_buf *url)
{
	const e2bw_config *cfg = &core->config;
	const e2bw_sandbox_info *info = e2bw_sandbox_lookup(core, sandbox_id);
	/* One sandbox_url serves all sandboxes (routed by header), else each
   * sandbox has its own host (docs/e2b-protocol-notes.md, "Reaching envd"). */
	if (cfg->sandbox_url) {
		size_t n = strlen(cfg->sandbox_url);
		while (n && cfg->sandbox_url[n - 1] == '/')
			n--;
		return e2bw_buf_append(url, cfg->sandbox_url, n);
	}
	return e2bw_buf_append_str(url, "https://" E2BW_ENVD_PORT "-") ||
		e2bw_buf_append_str(url, sandbox_id) || e2bw_buf_append_char(url, '.') ||
		e2bw_buf_append_str(url, info && info->domain ? info->domain : cfg->domain);
}

int e2bw_envd_at_least(const e2bw_core *core, const char *sandbox_id, int major, int minor, int patch)
{
	const e2bw_sandbox_info *info = e2bw_sandbox_lookup(core, sandbox_id);
	int v[3] = {0, 0, 0}, want[3] = {major, minor, patch};
	if (!info || !info->envd_version)
		return 1;
	const char *p = info->envd_version;
	if (*p == 'v')
		p++;
	for (int i = 0; i < 3; i++) {
		if (*p < '0' || *p > '9')
			return 1;
		while (*p >= '0' && *p <= '9' && v[i] < 100000)
			v[i] = v[i] * 10 + (*p++ - '0');
		if (i < 2 && *p++ != '.')
			return 1;
	}
	for (int i = 0; i < 3; i++)
		if (v[i] != want[i])
			return v[i] > want[i];
	return 1;
}

e2bw_http_op *e2bw_envd_request(e2bw_core *core, const e2bw_envd_req *req)
{
	const e2bw_sandbox_info *info = e2bw_sandbox_lookup(core, req->sandbox_id);
	const e2bw_config *cfg = &core->config;
	e2bw_buf url = {0}, what = {0}, body = {0}, auth = {0}, basic = {0};
	char lifetime[32], keepalive[32];
	e2bw_http_op *op = NULL;
	char *json = req->message ? cJSON_PrintUnformatted(req->message) : NULL;
	if (!json)
		goto done;

	int rc = e2bw_envd_base_url(core, req->sandbox_id, &url);
	rc |= e2bw_buf_append_char(&url, '/') || e2bw_buf_append_str(&url, req->rpc);
	rc |= e2bw_buf_append_str(&what, req->rpc);
	if (req->streaming)
		rc |= e2bw_env_encode(&body, 0, json, strlen(json));
	else
		rc |= e2bw_buf_append_str(&body, json);
	if (req->user) {
		rc |= e2bw_buf_append_str(&basic, req->user) || e2bw_buf_append_char(&basic, ':');
		rc |= e2bw_buf_append_str(&auth, "Basic ") ||
			e2bw_base64_encode(&auth, (const uint8_t *)basic.data, basic.len);
	}
	if (rc)
		goto done;

	const char *headers[24];
	int h = 0;
#define HEADER(k, v) (headers[h++] = (k), headers[h++] = (v))
	HEADER("Content-Type", req->streaming ? "application/connect+json" : "application/json");
	HEADER("Connect-Protocol-Version", "1");
	HEADER("User-Agent", USER_AGENT);
	HEADER("E2b-Sandbox-Id", req->sandbox_id);
	HEADER("E2b-Sandbox-Port", E2BW_ENVD_PORT);
	if (info && info->token)
		HEADER("X-Access-Token", info->token);
	if (req->user)
		HEADER("Authorization", auth.data);
	if (req->streaming) {
		snprintf(keepalive, sizeof keepalive, "%g", cfg->keepalive_interval_ms / 1000.0);
		HEADER("Keepalive-Ping-Interval", keepalive);
		if (req->lifetime_ms >= 0) {
			snprintf(lifetime, sizeof lifetime, "%.0f", req->lifetime_ms);
			HEADER("Connect-Timeout-Ms", lifetime);
		}
	}
	headers[h] = NULL;
#undef HEADER
	e2bw_http_spec spec = {"POST", url.data, what.data, headers, (const uint8_t *)body.data, body.len,
		req->timeout_ms, NULL};
	op = e2bw_http_start(core, &spec);
done:
	free(json);
	e2bw_buf_free(&url);
	e2bw_buf_free(&what);
	e2bw_buf_free(&body);
	e2bw_buf_free(&auth);
	e2bw_buf_free(&basic);
	return op;
}

/* --- errors ---------------------------------------------------------------- */

static const struct {
	const char *code;
	e2bw_error_kind kind;
} connect_codes[] = {
	{"canceled", E2BW_ERR_CANCELED},
	{"unknown", E2BW_ERR_BACKEND},
	{"invalid_argument", E2BW_ERR_INVALID_ARGUMENT},
	{"deadline_exceeded", E2BW_ERR_TIMEOUT},
	{"not_found", E2BW_ERR_NOT_FOUND},
	{"already_exists", E2BW_ERR_CONFLICT},
	{"permission_denied", E2BW_ERR_PERMISSION_DENIED},
	{"resource_exhausted", E2BW_ERR_RATE_LIMITED},
	{"failed_precondition", E2BW_ERR_INVALID_ARGUMENT},
	{"aborted", E2BW_ERR_CONFLICT},
	{"out_of_range", E2BW_ERR_INVALID_ARGUMENT},
	{"unimplemented", E2BW_ERR_BACKEND},
	{"internal", E2BW_ERR_BACKEND},
	{"unavailable", E2BW_ERR_UNAVAILABLE},
	{"data_loss", E2BW_ERR_BACKEND},
	{"unauthenticated", E2BW_ERR_UNAUTHENTICATED},
};

cJSON *e2bw_connect_error(const cJSON *error, const char *what)
{
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(error, "code");
	const cJSON *message = cJSON_GetObjectItemCaseSensitive(error, "message");
	const char *c = cJSON_IsString(code) ? code->valuestring : "unknown";
	const char *m = cJSON_IsString(message) ? message->valuestring : "";
	e2bw_error_kind kind = E2BW_ERR_BACKEND;
	for (size_t i = 0; i < sizeof connect_codes / sizeof connect_codes[0]; i++)
		if (strcmp(connect_codes[i].code, c) == 0)
			kind = connect_codes[i].kind;
	cJSON *e = e2bw_error_new(kind, "envd %s failed: [%.40s] %.300s", what, c, m);
	if (kind == E2BW_ERR_NOT_FOUND)
		e2bw_error_set_str(e, "sdk_code", E2BW_SDK_IN_SANDBOX_NOT_FOUND); /* a process or a file */
	return e2bw_error_set_str(e, "backend_code", c);
}

cJSON *e2bw_envd_status_error(const e2bw_http_op *op, const char *sandbox_id)
{
	cJSON *body = op->body.len ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
	e2bw_redact(op->core, body); /* before its message is cut to length */
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(body, "code");
	cJSON *e;
	if (op->status == 502 && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(body, "sandboxId")) &&
		!cJSON_HasObjectItem(body, "port")) {
		/* E2B's sandbox proxy: no running sandbox behind this id (docs/e2b-protocol-notes.md,
     * "Reaching envd"). 
     * A call's failure hook then asks the control plane which it is. */
		e = proxy_not_running_error(sandbox_id);
	} else if (op->status == 502) {
		/* Any other 502 (a load balancer's HTML page, a closed port): the way to
     * envd is broken, which says nothing about the sandbox. */
		e = e2bw_error_new(E2BW_ERR_UNREACHABLE,
			"Cannot reach envd for %s: a gateway answered HTTP 502", op->what);
	} else if (cJSON_IsString(code)) {
		e = e2bw_connect_error(body, op->what);
	} else {
		e2bw_error_kind kind = e2bw_error_kind_for_status(op->status);
		const cJSON *message = cJSON_GetObjectItemCaseSensitive(body, "message");
		e = e2bw_error_new(kind == E2BW_ERR_NOT_FOUND ? E2BW_ERR_BACKEND : kind,
			"envd %s failed (HTTP %d)%s%.300s", op->what, op->status,
			cJSON_IsString(message) ? ": " : "",
			cJSON_IsString(message) ? message->valuestring : "");
	}
	cJSON_Delete(body);
	return e2bw_error_set_num(e, "http_status", op->status);
}

void e2bw_envd_unary(e2bw_core *core, e2bw_call *call, const char *rpc, cJSON *message, const char *user,
	e2bw_http_done_fn done)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(call->params, "sandbox_id");
	e2bw_envd_req req = {cJSON_IsString(id) ? id->valuestring : NULL, rpc, message, user, 0, -1,
		call->request_timeout_ms};
	e2bw_http_op *op = message ? e2bw_envd_request(core, &req) : NULL;
	cJSON_Delete(message);
	if (!op) {
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	e2bw_call_own(op, call);
	op->on_done = done;
}
