/* The built-in templates (`base`: a root filesystem the backend was
 * started with, runtime/'s build/templates/<name>/rootfs) as E2B's template
 * API shows a template, so that they are visible by name there as they are
 * to create: public, their id their name, one ready build whose times are
 * the root filesystem's. A built template of the same name comes first
 * (api/ looks in the catalog before). Calls runtime/ and lib/. */
#ifndef E2B_BACKEND_TEMPLATES_BUILTIN_H
#define E2B_BACKEND_TEMPLATES_BUILTIN_H

#include "templates/templates.h"

#include <stdbool.h>

struct templates_builtin {
	struct template tpl; /* for templates_json and templates_with_builds_json */
	struct template_build build;
	char name[TEMPLATES_ID_LEN + 1];
};

/* Fills *out for the built-in template called name (at most
 * TEMPLATES_ID_LEN characters); false when there is none. Nothing to free. */
bool templates_builtin_find(const char *name, struct templates_builtin *out);

#endif
