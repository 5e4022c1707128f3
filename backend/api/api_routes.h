/* api/ — the control plane (api_url): E2B's REST API for sandboxes and
 * volumes.
 * Owns: the route table with CORS preflight, route and method matching
 * (404/405 in JSON) and the API-key check (api_routes.c), the sandbox
 * routes (api_sandboxes.c), the list routes and their cursor (api_list.c,
 * api_list_cursor.c) and E2B's JSON shapes of a sandbox
 * (api_sandbox_json.c), the volume routes (api_volumes.c) and the volume
 * content API (api_volume_content.c).
 * May call: volumes/, registry/, runtime/ (may this sandbox be created?
 * which isolation?), envd/fs's confined paths (fs_path.h, fs_entry.h,
 * fs_remove.h: the volume content API resolves paths as envd does), http/
 * and lib/. Never envd's routes: the two surfaces meet only in the
 * registry. main.c hands api_dispatch to the control-plane listener. */
#ifndef E2B_BACKEND_API_ROUTES_H
#define E2B_BACKEND_API_ROUTES_H

#include "http/http_gate.h"

struct evhttp_request;
struct cJSON;

/* evhttp callback; arg is a struct api_ctx *. */
void api_dispatch(struct evhttp_request *req, void *arg);
/* The gate's verdict on a head (arg: struct api_ctx *): a request without
 * the key, or for no route, is answered before its body is read. */
void api_verdict(const struct http_head *head, struct http_verdict *v, void *arg);
/* What /health and the ready line say of the sandboxes' isolation:
 * "isolation" (full, rootless, none), "limits" (which apply: memory, pids,
 * cpu and disk true or false, devices the mechanism or false), "cgroup" (v1,
 * v2 or null), "seccomp", "cgroup_favor_dynmods". */
void api_isolation_fields(struct cJSON *o);

#endif
