/* dockerfile_words.h — Docker's reading of an instruction's text, for the
 * Dockerfile parser (dockerfile.c): words, quotes, escapes and the stage's
 * $variables; the JSON (exec) form; a command line made of either. Each
 * sets d->oom when out of memory. */
#ifndef E2BW_DOCKERFILE_WORDS_H
#define E2BW_DOCKERFILE_WORDS_H

#include "cJSON.h"

/* The parser's state (dockerfile.c); the reading of words uses the stage's
 * variables and oom. */
typedef struct e2bw_df {
	cJSON *plan, *steps, *lines;
	cJSON *vars;       /* name -> value: ARG and ENV of this stage, for $NAME */
	cJSON *argvars;    /* names whose value came from ARG (RUN sees those substituted) */
	cJSON *globals;    /* ARGs before the FROM: only FROM and `ARG NAME` after it see them */
	char *entry, *cmd; /* ENTRYPOINT / CMD as command lines */
	int entry_exec;    /* ENTRYPOINT was the exec form: CMD adds its arguments */
	int line, froms, user_set, workdir_set, oom;
} e2bw_df;

/* e2bw_dockerfile_command's variables: ARG values only (RUN: ENV is in its
 * environment), or none (CMD, ENTRYPOINT run later, without ARGs). */
enum {
	E2BW_DF_ARGS_ONLY = 8,
	E2BW_DF_NO_VARS = 16
};

/* A character of a variable's name (first: its first one). */
int e2bw_dockerfile_name_char(char c, int first);
/* The text split into words, quotes and escapes removed, variables
 * substituted. NULL when out of memory. */
cJSON *e2bw_dockerfile_words(e2bw_df *d, const char *s);
/* The whole text as one string (WORKDIR, USER, the value of `ENV K v`):
 * quotes and escapes removed, blanks kept. NULL when out of memory. */
char *e2bw_dockerfile_string(e2bw_df *d, const char *s);
/* The JSON (exec) form: a JSON array of strings. NULL when s is not one. */
cJSON *e2bw_dockerfile_exec_form(const char *s);
/* A command line from RUN, CMD or ENTRYPOINT: the exec form joined, or the
 * shell form with its blanks collapsed as the SDK does. *exec tells which.
 * vars: E2BW_DF_ARGS_ONLY or E2BW_DF_NO_VARS. NULL when out of memory. */
char *e2bw_dockerfile_command(e2bw_df *d, const char *rest, int vars, int *exec);

#endif
