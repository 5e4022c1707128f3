/* clone3(2), which glibc (2.36) does not wrap: what starting a process
 * directly in a cgroup (CLONE_INTO_CGROUP, cgroup v2) needs. The child runs
 * fn(arg) and ends with its result; with CLONE_VM it runs on the stack the
 * caller gives (lib/child_stack.h), as glibc's clone() child does. Calls
 * only the kernel. */
#ifndef E2B_BACKEND_CLONE3_H
#define E2B_BACKEND_CLONE3_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* The kernel's struct clone_args (its second version, Linux 5.7). */
struct clone3_args {
	uint64_t flags;
	uint64_t pidfd;
	uint64_t child_tid; /* CLONE_CHILD_CLEARTID's word */
	uint64_t parent_tid;
	uint64_t exit_signal;
	uint64_t stack; /* the lowest address of the child's stack, 0 with fork's semantics */
	uint64_t stack_size;
	uint64_t tls;
	uint64_t set_tid;
	uint64_t set_tid_size;
	uint64_t cgroup; /* a descriptor of the cgroup's directory, with CLONE_INTO_CGROUP */
};

/* Starts the child: its pid, or -1 with errno. On an architecture without
 * the assembly it needs (x86-64 only), and under ThreadSanitizer (which
 * cannot follow a CLONE_VM child), CLONE_VM and the stack are dropped: the
 * child is then a copy (fork's semantics), slower but the same to fn. */
pid_t clone3_start(struct clone3_args *args, int (*fn)(void *arg), void *arg);

#endif
