/* The accounts a build makes (templates_accounts.h). */
#include "templates/templates_accounts.h"

#include "lib/err.h"
#include "lib/text.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_users.h"
#include "templates/templates_steps.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shell functions of both scripts, for dash, bash and busybox's ash alike:
 * used FILE ID (the third field of some line is ID), id_of FILE NAME (the
 * third field of NAME's line), newline FILE (ends its last line, so that
 * a line added after it stands on its own). */
#define ACCOUNT_FUNCTIONS \
	"used() { [ -f \"$1\" ] || return 1; while IFS=: read -r _n _p _id _r || [ -n \"$_n\" ]; do\n" \
	"  [ \"$_id\" != \"$2\" ] || return 0; done < \"$1\"; return 1; }\n" \
	"id_of() { [ -f \"$1\" ] || return 1; while IFS=: read -r _n _p _id _r || [ -n \"$_n\" ]; do\n" \
	"  if [ \"$_n\" = \"$2\" ]; then echo \"$_id\"; return 0; fi; done < \"$1\"; return 1; }\n" \
	"newline() { if [ -s \"$1\" ] && [ -n \"$(tail -c 1 \"$1\" 2>/dev/null)\" ]; then echo >> \"$1\"; fi; }\n"

/* An image with neither useradd nor adduser: the lines those would write,
 * and the home from /etc/skel. Needs $name $home $uid $gid $shell $group
 * (non-empty: the group is new). */
#define ACCOUNT_BY_HAND \
	"  if [ -n \"$group\" ]; then newline /etc/group; echo \"$name:x:$gid:\" >> /etc/group\n" \
	"    if [ -f /etc/gshadow ]; then newline /etc/gshadow; echo \"$name:!::\" >> /etc/gshadow; fi; fi\n" \
	"  newline /etc/passwd; echo \"$name:x:$uid:$gid::$home:$shell\" >> /etc/passwd\n" \
	"  if [ -f /etc/shadow ]; then newline /etc/shadow; echo \"$name:!::0:99999:7:::\" >> /etc/shadow; fi\n" \
	"  if [ ! -e \"$home\" ]; then mkdir -p \"$home\"; if [ -d /etc/skel ]; then cp -a /etc/skel/. \"$home/\"; fi\n" \
	"    chown -R \"$uid:$gid\" \"$home\"; fi\n"

/* The next free ids from 1000 ($uid; $gid, unless the group exists), the
 * login shell; then the account by the tool the image has. */
#define ACCOUNT_IDS \
	"uid=1000; while used /etc/passwd \"$uid\"; do uid=$((uid + 1)); done\n" \
	"if gid=$(id_of /etc/group \"$name\"); then group=; else group=new; gid=$uid\n" \
	"  while used /etc/group \"$gid\"; do gid=$((gid + 1)); done; fi\n" \
	"shell=/bin/sh; if [ -x /bin/bash ]; then shell=/bin/bash; fi\n"

static const char provision_script[] =
	"set -e\nname=" TEMPLATES_ACCOUNT_USER "; home=/home/" TEMPLATES_ACCOUNT_USER
	"\n" ACCOUNT_FUNCTIONS ACCOUNT_IDS "mkdir -p /home\n"
	"if command -v useradd >/dev/null 2>&1; then tool=useradd\n"
	"  if [ -n \"$group\" ]; then groupadd --gid \"$gid\" \"$name\"; fi\n"
	"  useradd --create-home --home-dir \"$home\" --uid \"$uid\" --gid \"$gid\" --shell \"$shell\" \"$name\"\n"
	"elif command -v adduser >/dev/null 2>&1 && command -v addgroup >/dev/null 2>&1; then tool='adduser -D'\n"
	"  if [ -n \"$group\" ]; then addgroup -g \"$gid\" \"$name\"; fi\n"
	"  adduser -D -h \"$home\" -u \"$uid\" -G \"$name\" -s \"$shell\" \"$name\"\n"
	"else tool='/etc/passwd and /etc/group written'\n" ACCOUNT_BY_HAND "fi\n"
	"mkdir -p \"$home\"; chown \"$uid:$gid\" \"$home\"\n"
	"sudo=\n"
	"if [ -e /etc/sudoers ] || [ -d /etc/sudoers.d ]; then sudo=', sudo without a password'\n"
	"  mkdir -p /etc/sudoers.d\n"
	"  echo \"$name ALL=(ALL:ALL) NOPASSWD: ALL\" > /etc/sudoers.d/$name; chmod 0440 /etc/sudoers.d/$name\n"
	"  if [ -f /etc/sudoers ]; then inc=\n"
	"    while IFS= read -r l || [ -n \"$l\" ]; do case \"$l\" in\n"
	"      '#includedir /etc/sudoers.d'*|'@includedir /etc/sudoers.d'*) inc=1;; esac; done < /etc/sudoers\n"
	"    if [ -z \"$inc\" ]; then newline /etc/sudoers; echo '#includedir /etc/sudoers.d' >> /etc/sudoers; fi; fi\n"
	"fi\n"
	"echo \"Provisioned $name: uid $uid, gid $gid, home $home, shell $shell$sudo ($tool)\"\n";

int templates_accounts_missing(const struct sandbox *sb, const char *name, struct err *err)
{
	struct sandbox_user u;
	if (strlen(name) >= 64) {
		err_set(err, 0, "failed to set user '%.64s': invalid username: '%.64s'", name, name);
		return -1;
	}
	return runtime_user_resolve(sb, name, &u) != 0;
}

char *templates_accounts_script(const char *name)
{
	char *q = templates_steps_quote(name);
	char *script = q
		? text_printf(
			  "set -e\nname=%s; home=\"/home/$name\"\n" ACCOUNT_FUNCTIONS
			  "if command -v useradd >/dev/null 2>&1; then useradd --create-home \"$name\"\n"
			  "elif command -v adduser >/dev/null 2>&1 && command -v addgroup >/dev/null 2>&1; then adduser -D \"$name\"\n"
			  "else\n" ACCOUNT_IDS ACCOUNT_BY_HAND "fi\n",
			  q)
		: NULL;
	free(q);
	return script;
}

const char *templates_accounts_provision_script(void)
{
	return provision_script;
}

cJSON *templates_accounts_provision_step(void)
{
	cJSON *step = cJSON_CreateObject();
	cJSON *args = cJSON_AddArrayToObject(step, "args");
	if (!cJSON_AddStringToObject(step, "type", "PROVISION") || !args ||
		!cJSON_AddItemToArray(args, cJSON_CreateString(TEMPLATES_PROVISION_SHOWN)) ||
		!cJSON_AddItemToArray(args, cJSON_CreateString(provision_script))) {
		cJSON_Delete(step);
		return NULL;
	}
	return step;
}

int templates_accounts_can_provision(const struct sandbox *sb, struct err *err)
{
	struct sandbox_user root;
	if (runtime_path_is_dir(sb, TEMPLATES_ACCOUNTS_SHELL) != 0)
		return err_set(err, 0, "the image has no " TEMPLATES_ACCOUNTS_SHELL " to run it");
	if (runtime_user_resolve(sb, "root", &root) != 0)
		return err_set(err, 0, "the image's /etc/passwd has no root to run it as");
	return 0;
}
