/* The start and ready commands of the built-in templates (a recipe's
 * start_cmd and ready_cmd, which build-template.sh writes beside the
 * template's rootfs as START_CMD and READY_CMD): a create of such a
 * template runs them as for a built template's setStartCmd. Read once per
 * name and kept until templates_builtin_shutdown. Calls runtime/ (the
 * rootfs's path) and lib/. */
#ifndef E2B_BACKEND_TEMPLATES_BUILTIN_CMDS_H
#define E2B_BACKEND_TEMPLATES_BUILTIN_CMDS_H

struct template_config;

/* The configuration of the built-in template name when it has a start
 * command (valid until templates_builtin_shutdown), else NULL: a template
 * without one, a name that is not a built-in template, or out of memory. */
const struct template_config *templates_builtin_config(const char *name);
void templates_builtin_shutdown(void);

#endif
