/* System calls without glibc's wrappers, for a command's child while it
 * shares the init's memory (init_child.h): a wrapper that fails writes
 * errno, which is the init's own (one thread's storage, shared), and the
 * init runs on meanwhile. These return what the kernel does: a value, or
 * -errno. */
#ifndef E2B_INIT_RAW_H
#define E2B_INIT_RAW_H

#if defined(__x86_64__)
static inline long init_raw6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
static inline long init_raw6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}
#else
#error "the sandbox init's raw system calls know x86_64 and aarch64"
#endif

#define init_raw(n, a, b, c) init_raw6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)

#endif
