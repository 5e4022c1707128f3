#include "jsonrpc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "errors.h"

static int depth_ok(const cJSON *item, int depth) {
  if (depth > E2BW_JSON_MAX_DEPTH) return 0;
  for (const cJSON *c = item->child; c; c = c->next)
    if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && !depth_ok(c, depth + 1)) return 0;
  return 1;
}

static int only_whitespace(const char *p, const char *end) {
  for (; p < end; p++)
    if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') return 0;
  return 1;
}

e2bw_rpc_parse_result e2bw_rpc_parse(const char *text, size_t len, e2bw_rpc_request *req, cJSON **error) {
  memset(req, 0, sizeof *req);
  *error = NULL;
  const char *end = NULL;
  req->root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!req->root || !end || !only_whitespace(end, text + len)) {
    cJSON_Delete(req->root);
    req->root = NULL;
    *error = e2bw_error_new(E2BW_ERR_PARSE_ERROR, "Parse error: the message is not valid JSON");
    return E2BW_RPC_INVALID;
  }
  cJSON *root = req->root;
  if (cJSON_IsArray(root)) {
    *error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST, "Invalid Request: batches are not supported by EPP/1; send one object per line");
    return E2BW_RPC_INVALID;
  }
  if (!cJSON_IsObject(root)) {
    *error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST, "Invalid Request: a message must be a JSON object");
    return E2BW_RPC_INVALID;
  }
  if (!depth_ok(root, 1)) {
    *error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST, "Invalid Request: nested deeper than %d levels", E2BW_JSON_MAX_DEPTH);
    return E2BW_RPC_INVALID;
  }

  const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
  /* A number too large for a double (1e999) parses as infinity: not an id. */
  int id_ok = !id || cJSON_IsString(id) || (cJSON_IsNumber(id) && isfinite(id->valuedouble)) || cJSON_IsNull(id);
  if (id_ok) req->id = id;

  const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "jsonrpc");
  if (!cJSON_IsString(version) || strcmp(version->valuestring, "2.0") != 0) {
    *error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
    return E2BW_RPC_INVALID;
  }
  if (!id_ok) {
    *error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST, "Invalid Request: \"id\" must be a string, a finite number or null");
    return E2BW_RPC_INVALID;
  }
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(root, "method");
  if (!method) {
    /* A response (result/error) addressed to us: EPP hosts send none, ignore. */
    if (cJSON_HasObjectItem(root, "result") || cJSON_HasObjectItem(root, "error")) return E2BW_RPC_IGNORED;
    *error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST, "Invalid Request: \"method\" is missing");
    return E2BW_RPC_INVALID;
  }
  if (!cJSON_IsString(method) || method->valuestring[0] == '\0') {
    *error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST, "Invalid Request: \"method\" must be a non-empty string");
    return E2BW_RPC_INVALID;
  }
  req->method = method->valuestring;

  cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
  if (params && !cJSON_IsNull(params) && !cJSON_IsObject(params)) {
    *error = e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid params: \"params\" must be an object (EPP/1 uses named parameters)");
    if (*error) e2bw_error_set_str(*error, "field", "params");
    return id ? E2BW_RPC_INVALID : E2BW_RPC_NOTIFICATION;
  }
  req->params = cJSON_IsObject(params) ? params : NULL;
  return id ? E2BW_RPC_REQUEST : E2BW_RPC_NOTIFICATION;
}

void e2bw_rpc_request_free(e2bw_rpc_request *req) {
  cJSON_Delete(req->root);
  memset(req, 0, sizeof *req);
}

/* cJSON prints numbers with 15 significant digits when that is "close
 * enough", which would change ids above 10^15. Integral ids are printed
 * exactly instead (every integer a double holds, so all of JS's safe range). */
static cJSON *id_item(const cJSON *id) {
  if (!id) return cJSON_CreateNull();
  if (cJSON_IsNumber(id)) {
    double v = id->valuedouble;
    if (!isfinite(v)) return cJSON_CreateNull();
    char text[48];
    if (v > -9.2e18 && v < 9.2e18 && v == (double)(long long)v) snprintf(text, sizeof text, "%lld", (long long)v);
    else snprintf(text, sizeof text, "%.17g", v);
    return cJSON_CreateRaw(text);
  }
  return cJSON_Duplicate(id, 0);
}

/* {"jsonrpc":"2.0","id":<id>,<key>:<value>} — value ownership passes in. */
static char *envelope_text(const cJSON *id, const char *key, cJSON *value) {
  cJSON *msg = cJSON_CreateObject();
  cJSON *id_copy = id_item(id);
  char *text = NULL;
  if (msg && id_copy && value && cJSON_AddStringToObject(msg, "jsonrpc", "2.0")) {
    cJSON_AddItemToObject(msg, "id", id_copy);
    id_copy = NULL;
    cJSON_AddItemToObject(msg, key, value);
    value = NULL;
    text = cJSON_PrintUnformatted(msg);
  }
  cJSON_Delete(id_copy);
  cJSON_Delete(value);
  cJSON_Delete(msg);
  return text;
}

char *e2bw_rpc_result_text(const cJSON *id, cJSON *result) {
  if (!result) result = cJSON_CreateObject();
  return envelope_text(id, "result", result);
}

char *e2bw_rpc_error_text(const cJSON *id, cJSON *error) { return envelope_text(id, "error", error); }

char *e2bw_rpc_notification_text(const char *method, cJSON *params) {
  cJSON *msg = cJSON_CreateObject();
  char *text = NULL;
  if (msg && params && cJSON_AddStringToObject(msg, "jsonrpc", "2.0") && cJSON_AddStringToObject(msg, "method", method)) {
    cJSON_AddItemToObject(msg, "params", params);
    params = NULL;
    text = cJSON_PrintUnformatted(msg);
  }
  cJSON_Delete(params);
  cJSON_Delete(msg);
  return text;
}

char *e2bw_rpc_id_text(const cJSON *id) {
  cJSON *item = id_item(id);
  char *text = item ? cJSON_PrintUnformatted(item) : NULL;
  cJSON_Delete(item);
  return text;
}
