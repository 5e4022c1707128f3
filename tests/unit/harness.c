#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"

harness *h_new(void) {
  harness *h = calloc(1, sizeof *h);
  h->core = e2bw_core_new();
  h->now = 1767225600000.0; /* 2026-01-01T00:00:00Z */
  return h;
}

void h_free(harness *h) {
  e2bw_core_free(h->core);
  for (int i = 0; i < h->nsend; i++) {
    cJSON_Delete(h->sends[i]);
    free(h->send_text[i]);
  }
  for (int i = 0; i < h->nhttp; i++) {
    cJSON_Delete(h->https[i].headers);
    free(h->https[i].body);
  }
  free(h);
}

void h_drain(harness *h) {
  int kind;
  while ((kind = e2bw_core_next_action(h->core)) != E2BW_ACTION_NONE) {
    const char *text = e2bw_action_text(h->core);
    size_t len = e2bw_action_text_len(h->core);
    if (kind == E2BW_ACTION_SEND && h->nsend < H_MAX) {
      CHECK(text != NULL && strlen(text) == len);
      CHECK(memchr(text, '\n', len) == NULL); /* NDJSON-safe */
      h->sends[h->nsend] = cJSON_ParseWithLength(text, len);
      CHECK(h->sends[h->nsend] != NULL);
      h->send_text[h->nsend] = strdup(text);
      h->nsend++;
    } else if (kind == E2BW_ACTION_HTTP && h->nhttp < H_MAX) {
      h_http *r = &h->https[h->nhttp++];
      cJSON *head = cJSON_ParseWithLength(text, len);
      CHECK(head != NULL);
      r->op = e2bw_action_op(h->core);
      CHECK_NUM(cJSON_GetObjectItem(head, "op")->valuedouble, r->op);
      snprintf(r->method, sizeof r->method, "%s", cJSON_GetObjectItem(head, "method")->valuestring);
      snprintf(r->url, sizeof r->url, "%s", cJSON_GetObjectItem(head, "url")->valuestring);
      r->headers = cJSON_DetachItemFromObject(head, "headers");
      cJSON_Delete(head);
      size_t blen = e2bw_action_body_len(h->core);
      if (blen) {
        r->body = malloc(blen + 1);
        memcpy(r->body, e2bw_action_body(h->core), blen);
        r->body[blen] = '\0';
      }
    } else if (kind == E2BW_ACTION_CANCEL && h->ncancel < H_MAX) {
      h->cancels[h->ncancel++] = e2bw_action_op(h->core);
    }
  }
}

void h_submit(harness *h, const char *json) {
  e2bw_core_submit(h->core, json, strlen(json), h->now);
  h_drain(h);
}

void h_init(harness *h, const char *config_json) {
  char msg[2048];
  snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocol\":\"epp/1\",\"config\":%s}}",
           config_json);
  h_submit(h, msg);
  cJSON *r = h_send(h);
  CHECK(r && h_result(r) != NULL);
}

cJSON *h_send(harness *h) { return h->send_pos < h->nsend ? h->sends[h->send_pos++] : NULL; }
const char *h_send_text_last(harness *h) { return h->send_pos ? h->send_text[h->send_pos - 1] : NULL; }
h_http *h_http_next(harness *h) { return h->http_pos < h->nhttp ? &h->https[h->http_pos++] : NULL; }
uint32_t h_cancel_next(harness *h) { return h->cancel_pos < h->ncancel ? h->cancels[h->cancel_pos++] : 0; }
int h_pending(harness *h) { return (h->nsend - h->send_pos) + (h->nhttp - h->http_pos) + (h->ncancel - h->cancel_pos); }

void h_respond(harness *h, uint32_t op, int status, const char *headers, const char *body) {
  e2bw_core_http_head(h->core, op, status, headers ? headers : "", headers ? strlen(headers) : 0, h->now);
  if (body) e2bw_core_http_body(h->core, op, (const uint8_t *)body, strlen(body), h->now);
  e2bw_core_http_end(h->core, op, h->now);
  h_drain(h);
}

const cJSON *h_result(const cJSON *msg) { return msg ? cJSON_GetObjectItemCaseSensitive(msg, "result") : NULL; }

int h_error_code(const cJSON *msg) {
  const cJSON *e = msg ? cJSON_GetObjectItemCaseSensitive(msg, "error") : NULL;
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "code");
  return cJSON_IsNumber(c) ? c->valueint : 0;
}

const char *h_error_kind(const cJSON *msg) {
  const cJSON *e = msg ? cJSON_GetObjectItemCaseSensitive(msg, "error") : NULL;
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "data"), "kind");
  return cJSON_IsString(k) ? k->valuestring : NULL;
}

const char *h_error_message(const cJSON *msg) {
  const cJSON *e = msg ? cJSON_GetObjectItemCaseSensitive(msg, "error") : NULL;
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");
  return cJSON_IsString(m) ? m->valuestring : NULL;
}

const char *h_header(const h_http *req, const char *name) {
  const cJSON *pair;
  cJSON_ArrayForEach(pair, req->headers) {
    const cJSON *k = cJSON_GetArrayItem(pair, 0), *v = cJSON_GetArrayItem(pair, 1);
    if (cJSON_IsString(k) && cJSON_IsString(v) && strcasecmp(k->valuestring, name) == 0) return v->valuestring;
  }
  return NULL;
}

double h_id(const cJSON *msg) {
  const cJSON *id = msg ? cJSON_GetObjectItemCaseSensitive(msg, "id") : NULL;
  return cJSON_IsNumber(id) ? id->valuedouble : -1;
}
