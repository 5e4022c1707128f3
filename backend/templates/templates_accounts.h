/* The accounts a build makes in its build sandbox (docs/templates.md): the
 * account of a USER step that does not exist yet, made as E2B's builder
 * makes it (`useradd --create-home NAME`), and E2B's `user` in an image
 * whose /etc/passwd lacks it ("provisioning": E2B makes it in every image;
 * here a step of its own right after the base). Both are root shell
 * scripts for any POSIX shell: useradd (with groupadd), else busybox's
 * adduser (with addgroup), else /etc/passwd, /etc/group and their shadow
 * files edited directly; never a package manager. The executor runs them
 * and seals their layer like any step's. Calls runtime/ (the build
 * sandbox's accounts and files), templates_steps.h (quoting) and lib/. */
#ifndef E2B_BACKEND_TEMPLATES_ACCOUNTS_H
#define E2B_BACKEND_TEMPLATES_ACCOUNTS_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct err;
struct sandbox;

#define TEMPLATES_ACCOUNT_USER "user" /* E2B's account */
/* What the build log says of the provisioning step (E2B's wording). */
#define TEMPLATES_PROVISION_SHOWN "useradd --create-home " TEMPLATES_ACCOUNT_USER
/* The shell both scripts run with (not E2B's bash -l -c): busybox images
 * have no bash. */
#define TEMPLATES_ACCOUNTS_SHELL "/bin/sh"

/* A USER step of name in the build sandbox sb: 0 its account exists, 1 it
 * must be made first, -1 no account can have that name (err: E2B's
 * message, the reason the build fails). */
int templates_accounts_missing(const struct sandbox *sb, const char *name, struct err *err);
/* The root script that makes the account name as a USER step does
 * (the tools' defaults: home /home/<name>, the next free uid). malloc'd,
 * NULL out of memory. */
char *templates_accounts_script(const char *name);
/* The root script that provisions E2B's account `user`: uid 1000 when
 * free (else the next free one), a group `user` (gid as free), home
 * /home/user owned by it, login shell /bin/bash where the image has it
 * (else /bin/sh), and when the image has sudo (/etc/sudoers or
 * /etc/sudoers.d/) the drop-in /etc/sudoers.d/user, mode 0440:
 * `user ALL=(ALL:ALL) NOPASSWD: ALL`. It prints one line saying what it
 * made. Static text. */
const char *templates_accounts_provision_script(void);
/* The provisioning as a step, for its cache key (templates_stack_key):
 * type "PROVISION", args its log text and its script, so that a change to
 * the provisioning is another key. NULL out of memory; the caller frees. */
struct cJSON *templates_accounts_provision_step(void);
/* Whether the build sandbox can run the provisioning: 0 yes, else -1 with
 * why not in err (status 0): an image without a shell or without root's
 * account runs no command at all, so it stays as it is (its user root). */
int templates_accounts_can_provision(const struct sandbox *sb, struct err *err);

#endif
