/* The accounts a build makes (templates_accounts.h). */
#include "templates/templates_accounts.h"

#include "lib/text.h"
#include "runtime/runtime_users.h"
#include "templates/templates_steps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int templates_accounts_missing(const struct sandbox *sb, const char *name, char *why, size_t len)
{
	struct sandbox_user u;
	if (strlen(name) >= 64) {
		snprintf(why, len, "failed to set user '%.64s': invalid username: '%.64s'", name, name);
		return -1;
	}
	return runtime_user_resolve(sb, name, &u) != 0;
}

char *templates_accounts_script(const char *name)
{
	char *q = templates_steps_quote(name);
	char *script = q ? text_printf("if command -v useradd >/dev/null 2>&1; then useradd --create-home %s; "
		"else adduser -D %s; fi", q, q) : NULL;
	free(q);
	return script;
}
