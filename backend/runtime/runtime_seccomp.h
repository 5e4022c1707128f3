/* The syscall policy of every process in a sandbox: Docker's default seccomp
 * profile for a process with Docker's default capabilities (docs/backend/runtime-and-isolation.md,
 * "Syscall policy"). Built once at start with libseccomp and kept as the BPF
 * program the kernel takes, so installing it in a forked child is one
 * async-signal-safe prctl. The sandbox's init, which must mount first, gets
 * the same program on a descriptor and installs it itself. Calls only
 * libseccomp, the kernel and lib/err. */
#ifndef E2B_BACKEND_RUNTIME_SECCOMP_H
#define E2B_BACKEND_RUNTIME_SECCOMP_H

#include <stdbool.h>

struct err;

/* Builds the policy, exports it and checks that the kernel accepts it (in a
 * throwaway child). 0, or -1 with err (status an errno, or 0). */
int runtime_seccomp_build(struct err *err);
/* Whether sandboxes run under the policy (it was built). */
bool runtime_seccomp_active(void);
/* In a forked child, before exec: installs the policy for this process and
 * everything it starts. Needs CAP_SYS_ADMIN (no NO_NEW_PRIVS is set, so setuid
 * programs such as sudo keep working): call it before dropping capabilities.
 * Async-signal-safe. -1 with errno (EINVAL when no policy was built). */
int runtime_seccomp_apply(void);
/* A sealed, close-on-exec memfd holding the BPF program (struct sock_filter
 * array); -1 when no policy was built. Read it with pread or mmap: its offset
 * is shared by every copy. */
int runtime_seccomp_fd(void);
/* Frees the program and closes the memfd. */
void runtime_seccomp_release(void);

#endif
