/* The accounts a build makes in its build sandbox (docs/templates.md): the
 * account of a USER step that does not exist yet, made as E2B's builder
 * makes it (`useradd --create-home NAME`, busybox's `adduser -D NAME` in an
 * image without useradd), as a root shell script the executor runs and
 * seals like any step's. Calls runtime/ (the build sandbox's accounts),
 * templates_steps.h (quoting) and lib/. */
#ifndef E2B_BACKEND_TEMPLATES_ACCOUNTS_H
#define E2B_BACKEND_TEMPLATES_ACCOUNTS_H

#include <stddef.h>

struct sandbox;

/* A USER step of name in the build sandbox sb: 0 its account exists, 1 it
 * must be made first, -1 no account can have that name (why: E2B's
 * message, the reason the build fails). */
int templates_accounts_missing(const struct sandbox *sb, const char *name, char *why, size_t len);
/* The root script that makes the account name as a USER step does.
 * malloc'd, NULL out of memory. */
char *templates_accounts_script(const char *name);

#endif
