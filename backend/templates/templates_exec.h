/* The build executor: runs a build's steps (E2B's TemplateBuildStartV2) in
 * a build sandbox made from the parent template, with the same isolation,
 * syscall policy and network rules as any sandbox, and records the log and
 * the resulting configuration. RUN runs `/bin/bash -l -c` as the step's or
 * the current user; COPY unpacks the step's uploaded tar inside the sandbox
 * as root and hands the files to the user; ENV, WORKDIR and USER change
 * the configuration later steps and the template's sandboxes get (a USER
 * of a missing account, and the provisioning of `user`, run their account
 * scripts with /bin/sh: busybox images have no bash).
 * Calls the catalog, the build records, the uploaded files, registry/,
 * net/, envd/process/ (process_run.h) and runtime/. */
#ifndef E2B_BACKEND_TEMPLATES_EXEC_H
#define E2B_BACKEND_TEMPLATES_EXEC_H

#include <stddef.h>

struct cJSON;
struct err;
struct proc_manager;
struct registry;
struct template;
struct template_build;
struct templates;

struct event_base;
struct sandbox;

struct templates_env {
	struct event_base *base;
	struct registry *reg;
	struct proc_manager *pm;
	struct templates *catalog;
	const char *state_root; /* where the templates' records are (templates_records.h) */
	void *running;          /* the executors (templates_exec_state.h) */
};

/* Checks the request (400 text in err when malformed: an unknown step
 * type, missing arguments, a COPY without filesHash, a path that leaves
 * the context) and starts the build; the build's status says the rest. */
int templates_exec_start(struct templates_env *env, struct template *tpl, struct template_build *b,
	const struct cJSON *request, struct err *err);
/* Stops a running build (its template is deleted, or the backend stops):
 * its sandbox is removed, the build ends in error. */
void templates_exec_cancel(struct templates_env *env, struct template_build *b);
/* Cancels every running build (the backend stops), before the registry goes. */
void templates_exec_shutdown(struct templates_env *env);
/* The registry's `removing` hook: a build whose sandbox goes fails. */
void templates_exec_sandbox_removing(void *env, struct sandbox *sb);

#endif
