/* param_spec.h — the parameter spec of the method table (methods.h): each
 * parameter type's name and numeric range, and the check of a call's params
 * against its method's spec, before any handler runs. Below the table (which
 * lists the types' names and ranges for hosts) and beside the handlers;
 * calls params.c and the codecs. */
#ifndef E2BW_PARAM_SPEC_H
#define E2BW_PARAM_SPEC_H

#include "cJSON.h"
#include "methods.h"

/* The type's name in docs/epp-methods.json, and its numeric range (*min >
 * *max: none). */
const char *e2bw_param_type_name(e2bw_param_type type, double *min, double *max);
/* NULL when params fit the method's spec, else an invalid_params error that
 * names the field. params may be NULL (treated as {}). A member that is no
 * parameter is ignored (an extension) unless its name is a near miss of one
 * (names.h): then the error names the parameter meant (data.did_you_mean). */
cJSON *e2bw_params_check(const e2bw_method *m, const cJSON *params);

#endif
