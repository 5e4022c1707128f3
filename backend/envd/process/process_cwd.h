/* The working directory envd would use for a process: "~" and relative
 * paths against the account's home, absolute paths literally, cleaned as
 * Go's filepath.Clean. Calls http/ (Connect errors) and lib/. */
#ifndef E2B_BACKEND_PROCESS_CWD_H
#define E2B_BACKEND_PROCESS_CWD_H

struct err;

/* The working directory envd would use: ~ and relative paths against home,
 * absolute paths literally; NULL with err set (invalid_argument). malloc'd. */
char *process_resolve_cwd(const char *cwd, const char *home, const char *user, struct err *err);

#endif
