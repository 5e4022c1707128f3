/* A build executor's state (struct exec, one per running build), shared by
 * the executor's files (templates_exec.c runs the steps), and the moves
 * every step makes on it: the stack of layers grows and is mirrored in the
 * build, the next tick is scheduled, the build sandbox is dropped, the
 * build ends. Calls the build records, the catalog, registry/ and
 * envd/process/ (process_run.h). */
#ifndef E2B_BACKEND_TEMPLATES_EXEC_STATE_H
#define E2B_BACKEND_TEMPLATES_EXEC_STATE_H

#include "templates/templates_build.h"
#include "templates/templates_stack.h"

#include <stdbool.h>

struct cJSON;
struct event;
struct proc;
struct sandbox;
struct templates_env;
struct templates_image;

struct exec {
	struct exec *next;
	struct templates_env *env;
	struct template_build *b;
	struct cJSON *request;
	const struct cJSON *steps;
	int n, i;
	struct sandbox *sb;
	struct proc *proc;
	struct templates_image *pull; /* the base image being pulled */
	struct event *tick;
	char *what;               /* the running step's command, for its failure message */
	bool workdir_step;        /* the running command makes the WORKDIR */
	char *failure;            /* why the running step failed, for the tick to report */
	struct build_lines lines; /* the running command's output, cut into log lines */
	char step_name[16];
	struct template_config cfg;
	bool force;                      /* the whole build skips the cache */
	bool provision;                  /* an image lacking E2B's account: it is made before the steps */
	char key[TEMPLATES_KEY_LEN + 1]; /* the running file step's cache key, "" none */
	bool sealing;                    /* the build sandbox is being sealed: it must stay */
	bool sb_lost;                    /* ... and it was removed meanwhile: the layer is void */
	char *stop;                      /* the build ends with this once the seal is over */
};

/* The build's stack so far, mirrored in the build so that the collector
 * (templates_stack.c) sees it in use. */
void exec_state_mirror_layers(struct exec *e);
/* The top of the stack, "" when it is empty. */
const char *exec_state_top_layer(const struct exec *e);
/* The next step that runs gets a fresh sandbox on the stack. */
void exec_state_drop_sandbox(struct exec *e);
/* Ends the build (reason NULL: ready) and frees the executor; while a seal
 * runs, only once it is over (exec_state_ended). */
void exec_state_finish(struct exec *e, const char *reason);
/* Off-loop work (a seal, a squash) is over: true when the build ended
 * meanwhile or the work failed (failed says how); the build is then over. */
bool exec_state_ended(struct exec *e, const char *failed);
/* The executor's tick runs next on the loop. */
void exec_state_schedule(struct exec *e);
/* The layer of a step (or of the provisioning), cached or sealed, joins
 * the stack: on to the next step. */
void exec_state_took_layer(struct exec *e, const char *id);

#endif
