/* clone3(2) (clone3.h). */
#define _GNU_SOURCE
#include "lib/clone3.h"

#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define CLONE3_SHARED_VM 1
/* clone3_raw(args, size, fn, arg): the system call, after which the child
 * (rax 0, on its new stack) calls fn(arg) and exits with its result; the
 * parent returns the pid or -errno. fn stays in rdx and arg is kept in r8,
 * registers the system call preserves (it clobbers rcx and r11): the child
 * has none of the caller's stack to find them on. As glibc's own clone3. */
long clone3_raw(const struct clone3_args *args, size_t size, int (*fn)(void *), void *arg)
	__attribute__((visibility("hidden")));
__asm__(".text\n"
	".p2align 4\n"
	".globl clone3_raw\n"
	".hidden clone3_raw\n"
	".type clone3_raw, @function\n"
	"clone3_raw:\n"
	"	mov %rcx, %r8\n"
	"	mov $435, %eax\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"
	"	ret\n"
	"1:	xor %ebp, %ebp\n"
	"	and $-16, %rsp\n"
	"	mov %r8, %rdi\n"
	"	call *%rdx\n"
	"	mov %eax, %edi\n"
	"	mov $60, %eax\n"
	"	syscall\n"
	"	hlt\n"
	".size clone3_raw, .-clone3_raw\n");
#else
#define CLONE3_SHARED_VM 0
#endif

pid_t clone3_start(struct clone3_args *args, int (*fn)(void *arg), void *arg)
{
#if CLONE3_SHARED_VM
	long r = clone3_raw(args, sizeof *args, fn, arg);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (pid_t)r;
#else
	/* A copy has its own stack and memory: the word CLONE_CHILD_CLEARTID
	 * would clear is the copy's, so the caller's is cleared here, as the
	 * kernel would once the child no longer needs the caller's stack. */
	struct clone3_args copy = *args;
	copy.flags &= ~(uint64_t)(CLONE_VM | CLONE_CHILD_CLEARTID);
	copy.stack = copy.stack_size = copy.child_tid = 0;
	long r = syscall(SYS_clone3, &copy, sizeof copy);
	if (r == 0)
		_exit(fn(arg));
	if (r > 0 && (args->flags & CLONE_CHILD_CLEARTID) && args->child_tid)
		__atomic_store_n((int *)(uintptr_t)args->child_tid, 0, __ATOMIC_RELEASE);
	return r < 0 ? -1 : (pid_t)r;
#endif
}
