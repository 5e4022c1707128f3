#include "e2b_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "json_add.h"

#define USER_AGENT "e2b-wasm/" E2BW_VERSION

e2bw_http_op *e2bw_api_request(e2bw_core *core, e2bw_call *call, const char *method, const char *path,
	const cJSON *body, e2bw_http_done_fn on_done)
{
	e2bw_buf url = {0}, what = {0};
	e2bw_http_op *op = NULL;
	if (e2bw_buf_append_str(&url, core->config.api_url) || e2bw_buf_append_str(&url, path) ||
		e2bw_buf_append_str(&what, method) || e2bw_buf_append_char(&what, ' ') ||
		e2bw_buf_append(&what, path, strcspn(path, "?"))) {
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
	} else {
		const char *with_body[] = {"X-API-Key", core->config.api_key, "Accept", "application/json",
			"User-Agent", USER_AGENT, "Content-Type", "application/json", NULL};
		if (!body)
			with_body[6] = NULL; /* no Content-Type without a body */
		op = e2bw_call_request(core, call, method, url.data, what.data, with_body, body, on_done);
	}
	e2bw_buf_free(&url);
	e2bw_buf_free(&what);
	return op;
}

/* The backend's own explanation: `message` of the E2B error body, else a
 * short printable prefix of a non-JSON body. */
static void backend_message(const e2bw_http_op *op, char *out, size_t cap, char *code, size_t code_cap)
{
	out[0] = code[0] = '\0';
	cJSON *body = op->body.len ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
	e2bw_redact(op->core, body); /* before anything is cut to length */
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(body, "message");
	const cJSON *ecode = cJSON_GetObjectItemCaseSensitive(body, "error_code");
	if (cJSON_IsString(msg))
		snprintf(out, cap, "%s", msg->valuestring);
	if (cJSON_IsString(ecode))
		snprintf(code, code_cap, "%s", ecode->valuestring);
	cJSON_Delete(body);
	if (out[0] || !op->body.len)
		return;
	/* A printable window of the text, scrubbed whole, then cut. */
	char window[1024];
	size_t n = 0;
	for (size_t i = 0; i < op->body.len && n + 1 < sizeof window; i++) {
		unsigned char c = (unsigned char)op->body.data[i];
		window[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : ' ';
	}
	window[n] = '\0';
	char *clean = e2bw_redact_raw(&op->core->secrets, window);
	snprintf(out, cap < 201 ? cap : 201, "%s", clean ? clean : "");
	free(clean);
}

cJSON *e2bw_api_error(const e2bw_http_op *op, const char *sandbox_id)
{
	char msg[320], code[64];
	backend_message(op, msg, sizeof msg, code, sizeof code);
	const char *sep = msg[0] ? ": " : "";
	int status = op->status;
	e2bw_error_kind kind = e2bw_error_kind_for_status(status);
	cJSON *e;
	switch (kind) {
	case E2BW_ERR_NOT_FOUND:
		if (sandbox_id) {
			e = e2bw_error_new(kind,
				"Sandbox '%s' not found: it does not exist, was killed, or reached its timeout",
				sandbox_id);
			e2bw_error_set_str(e, "sdk_code", E2BW_SDK_SANDBOX_NOT_FOUND);
		} else {
			e = e2bw_error_new(kind, "Not found (HTTP 404) for %s%s%s", op->what, sep, msg);
		}
		break;
	case E2BW_ERR_UNAUTHENTICATED:
		e = e2bw_error_new(kind, "The E2B backend refused the API key (HTTP 401) for %s%s%s",
			op->what, sep, msg);
		break;
	case E2BW_ERR_PERMISSION_DENIED:
		e = e2bw_error_new(kind, "The E2B backend denied %s (HTTP 403)%s%s", op->what, sep, msg);
		break;
	case E2BW_ERR_INVALID_ARGUMENT:
		e = e2bw_error_new(kind, "The E2B backend rejected %s (HTTP 400)%s%s", op->what, sep, msg);
		break;
	case E2BW_ERR_CONFLICT:
		e = e2bw_error_new(kind, "Conflict (HTTP 409) for %s%s%s", op->what, sep, msg);
		break;
	case E2BW_ERR_RATE_LIMITED:
		e = e2bw_error_new(kind, "The E2B backend is rate limiting %s (HTTP 429)%s%s", op->what, sep,
			msg);
		break;
	case E2BW_ERR_UNAVAILABLE:
		e = e2bw_error_new(kind, "The E2B backend is unavailable (HTTP %d) for %s%s%s", status,
			op->what, sep, msg);
		break;
	case E2BW_ERR_TIMEOUT:
		e = e2bw_error_new(kind, "The E2B backend timed out (HTTP 504) on %s%s%s", op->what, sep,
			msg);
		break;
	default:
		e = e2bw_error_new(E2BW_ERR_BACKEND, "The E2B backend failed %s (HTTP %d)%s%s", op->what,
			status, sep, msg);
		break;
	}
	e2bw_error_set_num(e, "http_status", status);
	if (code[0])
		e2bw_error_set_str(e, "backend_code", code);
	if (kind == E2BW_ERR_RATE_LIMITED) {
		char retry[32];
		if (e2bw_http_header(op, "retry-after", retry, sizeof retry)) {
			char *end = NULL;
			double s = strtod(retry, &end);
			if (end && end != retry && *end == '\0' && s >= 0)
				e2bw_error_set_num(e, "retry_after", s);
		}
	}
	return e;
}

cJSON *e2bw_api_json(e2bw_core *core, e2bw_http_op *op, int want_array)
{
	cJSON *json = op->body.len ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
	if (json && (want_array ? cJSON_IsArray(json) : cJSON_IsObject(json)))
		return json;
	cJSON_Delete(json);
	e2bw_call *call = op->call;
	cJSON *e = e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
		"The E2B backend sent an invalid response to %s (HTTP %d): expected a JSON %s", op->what,
		op->status, want_array ? "array" : "object");
	e2bw_error_set_num(e, "http_status", op->status);
	e2bw_http_op_finish(core, op);
	e2bw_call_fail(core, call, e);
	return NULL;
}

static const char *str_field(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

static void copy_field(cJSON *dst, const char *dst_name, const cJSON *src, const char *src_name,
	int type_mask)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, src_name);
	if (v && (v->type & type_mask))
		e2bw_add(dst, dst_name, cJSON_Duplicate(v, 1));
}

static void add_envd(const e2bw_config *cfg, cJSON *rec, const char *id, const cJSON *src)
{
	const char *version = str_field(src, "envdVersion");
	const char *domain = str_field(src, "domain");
	if (version)
		cJSON_AddStringToObject(rec, "envd_version", version);
	if (domain)
		cJSON_AddStringToObject(rec, "domain", domain);
	if (!cfg->envd_passthrough)
		return; /* the host keeps talking EPP to us */
	/* A URL the host can call with no routing header: the backend's own
   * per-sandbox URL when it gives one (the local backend's envdUrl), else
   * E2B's per-sandbox host whenever the control plane names the sandbox's
   * domain; the one sandbox_url (routed by E2b-Sandbox-Id) only last. */
	const char *own = str_field(src, "envdUrl");
	char url[512];
	if (own)
		snprintf(url, sizeof url, "%s", own);
	else if (cfg->sandbox_url && !domain)
		snprintf(url, sizeof url, "%s", cfg->sandbox_url);
	else
		snprintf(url, sizeof url, "https://49983-%s.%s", id, domain ? domain : cfg->domain);
	cJSON_AddStringToObject(rec, "envd_url", url);
	const char *token = str_field(src, "envdAccessToken");
	if (token)
		cJSON_AddStringToObject(rec, "envd_access_token", token);
}

/* Common part: id and template. `template` is the alias when E2B gives one
 * (what the user asked for), else the template id. */
static cJSON *record_base(const cJSON *src)
{
	const char *id = str_field(src, "sandboxID");
	if (!id)
		return NULL;
	cJSON *rec = cJSON_CreateObject();
	if (!rec)
		return NULL;
	cJSON_AddStringToObject(rec, "sandbox_id", id);
	const char *alias = str_field(src, "alias");
	const char *template_id = str_field(src, "templateID");
	if (alias || template_id)
		cJSON_AddStringToObject(rec, "template", alias ? alias : template_id);
	if (template_id)
		cJSON_AddStringToObject(rec, "template_id", template_id);
	return rec;
}

cJSON *e2bw_record_from_sandbox(const e2bw_config *cfg, const cJSON *sandbox)
{
	cJSON *rec = record_base(sandbox);
	if (!rec)
		return NULL;
	cJSON_AddStringToObject(rec, "status", "running");
	add_envd(cfg, rec, str_field(sandbox, "sandboxID"), sandbox);
	return rec;
}

cJSON *e2bw_record_from_detail(const e2bw_config *cfg, const cJSON *detail)
{
	cJSON *rec = record_base(detail);
	if (!rec)
		return NULL;
	const char *state = str_field(detail, "state");
	if (state)
		cJSON_AddStringToObject(rec, "status", state);
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(detail, "metadata");
	cJSON *meta = cJSON_IsObject(metadata) ? cJSON_Duplicate(metadata, 1) : cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(meta, E2BW_CREATE_KEY); /* ours, not the user's */
	e2bw_add(rec, "metadata", meta);
	/* startedAt: its latest start, creation or resume (E2B starts a resumed
   * sandbox afresh). A paused sandbox does not expire: its clock stands
   * still, E2B's endAt is the moment it paused, and the local backend says
   * what it had left (lifetimeLeft, its extension). */
	copy_field(rec, "created_at", detail, "startedAt", cJSON_String);
	if (state && !strcmp(state, "paused")) {
		copy_field(rec, "paused_at", detail, "endAt", cJSON_String);
		copy_field(rec, "lifetime_left", detail, "lifetimeLeft", cJSON_Number);
	} else {
		copy_field(rec, "expires_at", detail, "endAt", cJSON_String);
	}
	copy_field(rec, "cpu", detail, "cpuCount", cJSON_Number);
	copy_field(rec, "memory", detail, "memoryMB", cJSON_Number);
	copy_field(rec, "disk", detail, "diskSizeMB", cJSON_Number);
	add_envd(cfg, rec, str_field(detail, "sandboxID"), detail);
	return rec;
}
