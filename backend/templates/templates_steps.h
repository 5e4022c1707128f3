/* Checking a build request's steps (E2B's TemplateStep list) before a
 * build starts, and the shell text of a COPY step. Calls lib/ only. */
#ifndef E2B_BACKEND_TEMPLATES_STEPS_H
#define E2B_BACKEND_TEMPLATES_STEPS_H

#include <stddef.h>

struct cJSON;

/* 0, or -1 with a 400 message naming the step ("steps[2]: ..."). */
int templates_steps_check(const struct cJSON *steps, char *why, size_t why_len);
/* Text of s as one single-quoted shell word (malloc'd). */
char *templates_steps_quote(const char *s);
/* The root shell script that puts a COPY's files in place: the tar at
 * tar_path, its entry src, at dest (relative to workdir), owned by owner
 * (user[:group]), files with mode (octal text or ""). malloc'd. */
char *templates_steps_copy_script(const char *tar_path, const char *src, const char *dest,
	const char *workdir, const char *owner, const char *mode);

#endif
