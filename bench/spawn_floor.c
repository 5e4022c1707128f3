/* The floor under a sandbox's command on this machine, for
 * bench/sandbox-runtime.mjs: a bare vfork + chroot + setuid + exec + wait of
 * a command in a template's root, with none of a sandbox's machinery (no
 * namespaces, cgroups, seccomp or envd protocol); and what one CPUID
 * instruction costs, since glibc's start-up runs dozens of them (its cache
 * geometry) and in a virtual machine each one exits to the hypervisor.
 *
 *   spawn-floor ROOTFS UID RUNS CMD [ARG...]
 *   -> {"median_ms":1.06,"p10_ms":0.89,"runs":200,"cpuid_us":12.7}
 *
 * Needs root (chroot). The command's output goes to /dev/null. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Microseconds per CPUID (leaf 4, as glibc's cache probe asks); -1 where
 * the instruction does not exist. */
static double cpuid_us(void)
{
#if defined(__x86_64__) || defined(__i386__)
	enum {
		N = 2000
	};
	unsigned a, b, c, d;
	double t0 = now_ms();
	for (unsigned i = 0; i < N; i++)
		__cpuid_count(4, i & 3, a, b, c, d); /* asm volatile: never dropped */
	(void)a, (void)b, (void)c, (void)d;
	return (now_ms() - t0) * 1e3 / N;
#else
	return -1;
#endif
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: spawn-floor ROOTFS UID RUNS CMD [ARG...]\n");
		return 2;
	}
	const char *root = argv[1];
	uid_t uid = (uid_t)atoi(argv[2]);
	int runs = atoi(argv[3]);
	if (runs < 1 || runs > 100000)
		return 2;
	double *ms = calloc((size_t)runs, sizeof *ms);
	int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (!ms || null_fd < 0)
		return 1;
	char *env[] = {"HOME=/home/user", "USER=user", "PATH=/usr/local/bin:/usr/bin:/bin", NULL};
	for (int i = 0; i < runs; i++) {
		double t0 = now_ms();
		pid_t pid = vfork();
		if (pid == 0) {
			if (chroot(root) != 0 || chdir("/") != 0 || setgid(uid) != 0 || setuid(uid) != 0 ||
				dup2(null_fd, 1) < 0 || dup2(null_fd, 2) < 0)
				_exit(126);
			execve(argv[4], argv + 4, env);
			_exit(127);
		}
		int status = 0;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			WEXITSTATUS(status) != 0) {
			fprintf(stderr, "spawn-floor: %s failed (status %d)\n", argv[4], status);
			return 1;
		}
		ms[i] = now_ms() - t0;
	}
	qsort(ms, (size_t)runs, sizeof *ms, by_value);
	printf("{\"median_ms\":%.3f,\"p10_ms\":%.3f,\"runs\":%d,\"cpuid_us\":%.2f}\n", ms[runs / 2],
		ms[runs / 10], runs, cpuid_us());
	free(ms);
	return 0;
}
