/* params.h — readers of validated EPP parameters that the spec check
 * (methods.c) and the handlers share. Below both, so no handler calls up
 * into the method table. Calls only cJSON and names.h. */
#ifndef E2BW_PARAMS_H
#define E2BW_PARAMS_H

#include "cJSON.h"

/* "pid" may come as a number or a decimal string (seed: ProcessInfo.pid is
 * a number or a string). Returns 0 when it is not a valid pid. When name is
 * NULL, params is the value itself. */
double e2bw_param_pid(const cJSON *params, const char *name);
/* envd's Signal enum name for SIGTERM / SIGKILL in the forms a host may use
 * ("SIGTERM", "TERM", "15", 15, ...); NULL when not one of them. */
const char *e2bw_param_signal(const cJSON *v);
/* 1 for a base64 encoding name, 0 for UTF-8, -1 for neither. Hosts write
 * "utf8" and the IANA "UTF-8" alike, in any case; the core answers "utf8"
 * (canonical). */
int e2bw_param_encoding(const cJSON *v);
/* 1 when params' validated `encoding` names base64, 0 for UTF-8 or none. */
int e2bw_param_base64(const cJSON *params);

#endif
