/* fuzz_common.h — shared by the fuzz targets: drain a core's actions and
 * check the invariants every output must keep. */
#ifndef E2BW_FUZZ_COMMON_H
#define E2BW_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "e2bw.h"

#define FUZZ_API_KEY "sk-fuzz-SECRET-4242"
#define FUZZ_ENVD_TOKEN "tok-fuzz-ENVD"

/* 1 when any 8 consecutive characters of secret appear in text[0..len). */
static int fuzz_leaks(const char *text, size_t len, const char *secret) {
  size_t n = strlen(secret);
  for (size_t i = 0; i + 8 <= n; i++)
    for (size_t j = 0; j + 8 <= len; j++)
      if (memcmp(text + j, secret + i, 8) == 0) return 1;
  return 0;
}

typedef struct fuzz_state {
  uint32_t pending_ops[64];
  int nops;
  int answers; /* responses with an id (not notifications) */
  int keyed;   /* initialized: the core knows the key and must redact it */
  int tokened; /* the core learned FUZZ_ENVD_TOKEN and must redact it */
  int exits;   /* exec.exit notifications */
  int watch_ends; /* files.watch_end notifications */
  int ok;      /* the last answer was a result */
} fuzz_state;

/* Every SEND is one JSON-RPC 2.0 object on one line, and no message of any
 * kind (answer, error, notification) carries 8 or more characters of the API
 * key or of the envd token; every HTTP head is valid JSON. Anything else is
 * a bug. */
static void fuzz_drain(e2bw_core *core, fuzz_state *st) {
  int kind;
  while ((kind = e2bw_core_next_action(core)) != E2BW_ACTION_NONE) {
    const char *text = e2bw_action_text(core);
    size_t len = e2bw_action_text_len(core);
    if (kind == E2BW_ACTION_SEND) {
      if (memchr(text, '\n', len)) abort();
      cJSON *msg = cJSON_ParseWithLength(text, len);
      if (!msg) abort();
      cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
      if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0) abort();
      int has_result = cJSON_HasObjectItem(msg, "result"), has_error = cJSON_HasObjectItem(msg, "error");
      if (has_result == has_error && !cJSON_HasObjectItem(msg, "method")) abort();
      if (has_result || has_error) st->answers++;
      if (has_result || has_error) st->ok = has_result;
      cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
      if (cJSON_IsString(method) && strcmp(method->valuestring, "exec.exit") == 0) st->exits++;
      if (cJSON_IsString(method) && strcmp(method->valuestring, "files.watch_end") == 0) st->watch_ends++;
      if ((st->keyed && fuzz_leaks(text, len, FUZZ_API_KEY)) || (st->tokened && fuzz_leaks(text, len, FUZZ_ENVD_TOKEN))) abort();
      cJSON_Delete(msg);
    } else if (kind == E2BW_ACTION_HTTP) {
      cJSON *head = cJSON_ParseWithLength(text, len);
      if (!head) abort();
      cJSON_Delete(head);
      if (st->nops < 64) st->pending_ops[st->nops++] = e2bw_action_op(core);
    }
  }
}

static void fuzz_init(e2bw_core *core, fuzz_state *st) {
  static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"config\":"
                             "{\"api_key\":\"" FUZZ_API_KEY "\",\"api_url\":\"http://api.fuzz\",\"sandbox_url\":\"http://envd.fuzz\",\"request_timeout\":5}}}";
  e2bw_core_submit(core, init, sizeof init - 1, 0);
  fuzz_drain(core, st);
  st->answers = 0;
  st->keyed = 1;
}

/* Teaches the core sbx1 (as sandbox.get would) so envd calls start at once;
 * from then on its envd token must be redacted like the key. */
static void learn_sandbox(e2bw_core *core, fuzz_state *st) {
  static const char get[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"sandbox.get\",\"params\":{\"sandbox_id\":\"sbx1\"}}";
  static const char detail[] = "{\"sandboxID\":\"sbx1\",\"state\":\"running\",\"envdAccessToken\":\"" FUZZ_ENVD_TOKEN "\"}";
  e2bw_core_submit(core, get, sizeof get - 1, 5);
  fuzz_drain(core, st);
  uint32_t op = st->pending_ops[st->nops - 1];
  e2bw_core_http_head(core, op, 200, "", 0, 5);
  e2bw_core_http_body(core, op, (const uint8_t *)detail, sizeof detail - 1, 5);
  e2bw_core_http_end(core, op, 5);
  fuzz_drain(core, st);
  st->answers = 0;
  st->nops = 0;
  st->tokened = 1;
}

typedef struct reader {
  const uint8_t *p;
  size_t left;
} reader;

static size_t take(reader *r, size_t want, const uint8_t **out) {
  size_t n = want < r->left ? want : r->left;
  *out = r->p;
  r->p += n;
  r->left -= n;
  return n;
}

static unsigned byte(reader *r) {
  const uint8_t *b;
  return take(r, 1, &b) ? b[0] : 0;
}

#endif
