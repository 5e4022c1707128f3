/* Test-only crash points: E2B_LOCAL_CRASH_AT=<name> in the backend's
 * environment makes it SIGKILL itself when it reaches the point of that
 * name, so tests can prove that a crash there leaves neither a half-made
 * object nor a lost one (docs/backend/state.md, "Crash safety"). Read once
 * at start and removed from the environment; unset, this costs a compare. */
#ifndef E2B_BACKEND_CRASHPOINT_H
#define E2B_BACKEND_CRASHPOINT_H

/* Reads and clears the variable (call once, before anything starts). */
void crashpoint_init(void);
/* Dies here (SIGKILL) when name is the point asked for. */
void crashpoint(const char *name);

#endif
