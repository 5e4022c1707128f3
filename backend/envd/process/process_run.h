/* Running a command in a sandbox for the backend itself (a template build's
 * steps, a template's start and ready commands): the same spawn as envd's
 * Start (the sandbox's isolation, its accounts, its syscall policy), the
 * same table (reaped, killed with the sandbox), but the output and the end go
 * to an observer in the backend instead of a client's stream. Calls the
 * manager, the spawn and runtime/. */
#ifndef E2B_BACKEND_PROCESS_RUN_H
#define E2B_BACKEND_PROCESS_RUN_H

#include "envd/process/process_table.h"

#include <stdbool.h>

struct cJSON;

struct process_run_spec {
	struct sandbox *sb;
	const char *user;         /* an account of the sandbox */
	const char *cwd;          /* absolute, or NULL for the user's home */
	const char *command;      /* run as /bin/bash -l -c <command>, as E2B runs them */
	const char *shell;        /* NULL, or a shell to run it with instead: <shell> -c <command> */
	const struct cJSON *envs; /* object of strings or NULL, after the sandbox's envVars */
	bool log;                 /* its start, output and end go to the sandbox's log (process_log.h) */
};

/* Starts it; obs is told of its output and its end (never from inside this
 * call). NULL with err filled as a Connect error reads in Go, "<code>:
 * <message>" (an unknown user: "unauthenticated: invalid username: 'x'"),
 * what a Start through envd would have failed with; its status is the
 * connect_code. */
struct proc *process_run(struct proc_manager *pm, const struct process_run_spec *spec,
	const struct process_observer *obs, void *ctx, struct err *err);
/* The observer goes away first: nothing more is reported. */
void process_run_detach(struct proc *p);

#endif
