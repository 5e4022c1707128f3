/* The vectors a process is executed with, made by the backend before the
 * process starts (its own child only reads them; a sandbox's init is sent
 * them, runtime_spawn.h): argv from cmd and args, the environment in envd's
 * layers, the paths execvp would try, and argv with /bin/sh for an image
 * without bash. Each is NULL-terminated; NULL when out of memory. Calls
 * lib/. */
#ifndef E2B_BACKEND_PROCESS_ARGV_H
#define E2B_BACKEND_PROCESS_ARGV_H

struct cJSON;
struct proc_spawn;

/* cmd, then args (an array of strings, or NULL). */
char **process_argv_new(const char *cmd, const struct cJSON *args);
/* PATH, HOME, USER and LOGNAME of the account, then the sandbox's
 * variables, then the request's; a later value of a key replaces an
 * earlier one. */
char **process_argv_env(const struct proc_spawn *spec);
/* Where execvp would look for cmd, with path as PATH (glibc's default
 * when empty): cmd itself when it names a path. */
char **process_argv_paths(const char *cmd, const char *path);
/* The SDK runs every command with /bin/bash (-l -c; -i -l for a
 * terminal), which every image E2B builds has. An image without bash
 * (Alpine, busybox, distroless with a shell) runs them with /bin/sh and the
 * same arguments instead of failing them all (docs/templates.md): argv with
 * /bin/sh for /bin/bash, NULL for any other command. Only the pointers are
 * copied: freed with free(), not process_argv_free. */
char **process_argv_sh_fallback(char **argv);
/* Frees a vector and its strings (NULL: nothing). */
void process_argv_free(char **v);

#endif
