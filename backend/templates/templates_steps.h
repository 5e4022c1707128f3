/* Checking a build request's steps (E2B's TemplateStep list) before a
 * build starts, the shell text of the COPY and WORKDIR steps, and what
 * the ENV and WORKDIR steps change. Calls lib/ only. */
#ifndef E2B_BACKEND_TEMPLATES_STEPS_H
#define E2B_BACKEND_TEMPLATES_STEPS_H

#include <stddef.h>

struct cJSON;
struct err;
struct template_config;

/* 0, or -1 with a 400 message naming the step ("steps[2]: ..."). */
int templates_steps_check(const struct cJSON *steps, struct err *err);
/* The request's fromImage, fromTemplate, startCmd and readyCmd: strings,
 * null or absent. 0, or -1 with a 400 message naming the field. */
int templates_steps_check_strings(const struct cJSON *request, struct err *err);
/* The request's startCmd and readyCmd (checked) into cfg, those not empty.
 * 0, or -1 out of memory. */
int templates_steps_start_cmds(const struct cJSON *request, struct template_config *cfg);
/* Text of s as one single-quoted shell word (malloc'd). */
char *templates_steps_quote(const char *s);
/* The root shell script that puts a COPY's files in place: the tar at
 * tar_path, its entry src, at dest (relative to workdir), owned by owner
 * (user[:group]), files with mode (octal text or ""). malloc'd. */
char *templates_steps_copy_script(const char *tar_path, const char *src, const char *dest,
	const char *workdir, const char *owner, const char *mode);
/* The root shell command of a WORKDIR to the absolute dir: as E2B's, the
 * directories it makes (not those already there) belong to user and its
 * login group, so a template's workdir is its user's. malloc'd. */
char *templates_steps_workdir_script(const char *dir, const char *user);
/* A WORKDIR's directory: path, from workdir (NULL: /home/user) when
 * relative. malloc'd. */
char *templates_steps_workdir_abs(const char *workdir, const char *path);
/* What a checked step changes in the configuration later steps run with:
 * ENV its pairs (a later value wins), WORKDIR the directory (from the
 * current one when relative), USER the user; the others nothing. 0, or -1
 * out of memory. */
int templates_steps_apply(struct template_config *cfg, const struct cJSON *step);
/* A step's arguments as its log line shows them (" a b", each cut to 400
 * bytes), in out (at least 600 bytes). */
void templates_steps_describe(const struct cJSON *step, char *out, size_t len);

#endif
