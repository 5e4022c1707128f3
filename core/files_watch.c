/* files_watch.c — files.watch / files.unwatch (ours): a directory followed
 * through envd's WatchDir stream, run by the same stream engine as process
 * output (process.c: envelope decoding, keepalive liveness deadline, exactly
 * one ending). This file holds what is specific to watching: the request and
 * the notifications' shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envd.h"
#include "errors.h"
#include "files.h"

static void add_watch_id(cJSON *o, double watch_number) {
  char id[32];
  snprintf(id, sizeof id, "w%.0f", watch_number);
  cJSON_AddStringToObject(o, "watch_id", id);
}

cJSON *e2bw_watch_started(const char *sandbox_id, double watch_number, const char *dir) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "sandbox_id", sandbox_id);
  add_watch_id(r, watch_number);
  cJSON_AddStringToObject(r, "path", dir);
  return r;
}

static const char *event_type(const cJSON *t) {
  static const char *const names[] = {NULL, "create", "write", "remove", "rename", "chmod"};
  static const char *const enums[] = {NULL, "EVENT_TYPE_CREATE", "EVENT_TYPE_WRITE", "EVENT_TYPE_REMOVE", "EVENT_TYPE_RENAME",
                                      "EVENT_TYPE_CHMOD"};
  if (cJSON_IsNumber(t) && t->valuedouble >= 1 && t->valuedouble <= 5) return names[(int)t->valuedouble];
  if (cJSON_IsString(t))
    for (int i = 1; i <= 5; i++)
      if (strcmp(t->valuestring, enums[i]) == 0) return names[i];
  return NULL;
}

cJSON *e2bw_watch_event_params(const char *request_id, const char *sandbox_id, double watch_number, const char *dir,
                               const cJSON *fs_event) {
  const char *type = event_type(cJSON_GetObjectItemCaseSensitive(fs_event, "type"));
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(fs_event, "name");
  if (!type || !cJSON_IsString(name)) return NULL; /* unknown kinds are skipped, as protobuf readers do */
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "sandbox_id", sandbox_id);
  cJSON_AddItemToObject(p, "request_id", cJSON_CreateRaw(request_id));
  add_watch_id(p, watch_number);
  cJSON_AddStringToObject(p, "type", type);
  cJSON_AddStringToObject(p, "name", name->valuestring);
  /* name is relative to the watched directory (reference §5) */
  size_t n = strlen(dir);
  char *path = malloc(n + strlen(name->valuestring) + 2);
  if (path) {
    sprintf(path, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name->valuestring);
    cJSON_AddStringToObject(p, "path", path);
    free(path);
  }
  return p;
}

cJSON *e2bw_watch_end_params(const char *request_id, const char *sandbox_id, double watch_number, cJSON *failure) {
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "sandbox_id", sandbox_id);
  cJSON_AddItemToObject(p, "request_id", cJSON_CreateRaw(request_id));
  add_watch_id(p, watch_number);
  const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(failure, "data"), "kind"));
  if (!failure || (kind && strcmp(kind, "canceled") == 0)) {
    cJSON_AddStringToObject(p, "reason", "cancelled");
    cJSON_Delete(failure);
  } else {
    cJSON_AddStringToObject(p, "reason", "failure");
    cJSON_AddItemToObject(p, "failure", failure);
  }
  return p;
}

static double next_watch_number(e2bw_core *core) { return (double)++core->next_op_id; }

static void watch_go(e2bw_core *core, e2bw_call *call) {
  const char *path = e2bw_files_param_str(call, "path");
  cJSON *msg = cJSON_CreateObject();
  cJSON_AddStringToObject(msg, "path", path);
  cJSON_AddBoolToObject(msg, "recursive", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call->params, "recursive")));
  e2bw_watch_open(core, call, msg, e2bw_files_user(call), path, next_watch_number(core));
}

void e2bw_files_watch(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, watch_go); }

void e2bw_files_unwatch(e2bw_core *core, e2bw_call *call) {
  const char *id = e2bw_files_param_str(call, "watch_id");
  double number = 0;
  int ok = id && id[0] == 'w' && id[1];
  for (const char *c = id ? id + 1 : ""; ok && *c; c++) {
    if (*c < '0' || *c > '9' || number > 1e15) ok = 0;
    else number = number * 10 + (*c - '0');
  }
  if (!ok || !e2bw_watch_close(core, e2bw_files_param_str(call, "sandbox_id"), number)) {
    cJSON *e = e2bw_error_new(E2BW_ERR_NOT_FOUND, "No watch '%.60s' in sandbox '%.128s' (it ended, or was never started here)", id ? id : "",
                              e2bw_files_param_str(call, "sandbox_id"));
    e2bw_call_fail(core, call, e);
    return;
  }
  e2bw_call_succeed(core, call, cJSON_CreateObject());
}
