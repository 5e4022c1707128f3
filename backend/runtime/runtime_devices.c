/* The device nodes a sandbox may open, and their cgroup v2 program
 * (runtime_devices.h). */
#define _GNU_SOURCE
#include "runtime/runtime_devices.h"

#include "lib/err.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The harmless ones and its own ptys (Unix98 pty slaves are major 136; a
 * devpts of at most 256 never leaves it). Making any node needs CAP_MKNOD
 * over the machine as well, which no sandbox has. The kernel exempts
 * overlay's whiteouts (0:0) from the check. Everything else, such as the
 * template's /dev/console (5:1, the host's console), fails with EPERM. */
const struct runtime_device_rule runtime_devices_allowed[] = {
	{'c', 1, 3},    /* null */
	{'c', 1, 5},    /* zero */
	{'c', 1, 7},    /* full */
	{'c', 1, 8},    /* random */
	{'c', 1, 9},    /* urandom */
	{'c', 5, 0},    /* tty */
	{'c', 5, 2},    /* ptmx */
	{'c', 136, -1}, /* pts/N */
};
const size_t runtime_devices_count = sizeof runtime_devices_allowed / sizeof runtime_devices_allowed[0];

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	return (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
}

/* r2 = type (BPF_DEVCG_DEV_*), r4 = major, r5 = minor, from the context in
 * r1 (struct bpf_cgroup_dev_ctx); then per rule: unless the type, major
 * (and minor) differ, r0 = 1 and exit; after the last, r0 = 0 and exit. */
size_t runtime_devices_program(struct bpf_insn *out, size_t max)
{
	size_t n = 0;
#define EMIT(i) \
	do { \
		if (n >= max) \
			return 0; \
		out[n++] = (i); \
	} while (0)
	EMIT(insn(BPF_LDX | BPF_W | BPF_MEM, 2, 1, offsetof(struct bpf_cgroup_dev_ctx, access_type), 0));
	EMIT(insn(BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, 0xffff));
	EMIT(insn(BPF_LDX | BPF_W | BPF_MEM, 4, 1, offsetof(struct bpf_cgroup_dev_ctx, major), 0));
	EMIT(insn(BPF_LDX | BPF_W | BPF_MEM, 5, 1, offsetof(struct bpf_cgroup_dev_ctx, minor), 0));
	for (size_t r = 0; r < runtime_devices_count; r++) {
		const struct runtime_device_rule *d = &runtime_devices_allowed[r];
		int32_t type = d->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
		/* The jumps skip the rest of this rule: its checks after them and
		 * the two instructions that allow. */
		int16_t rest = d->minor >= 0 ? 4 : 3;
		EMIT(insn(BPF_JMP | BPF_JNE | BPF_K, 2, 0, rest, type));
		EMIT(insn(BPF_JMP | BPF_JNE | BPF_K, 4, 0, (int16_t)(rest - 1), d->major));
		if (d->minor >= 0)
			EMIT(insn(BPF_JMP | BPF_JNE | BPF_K, 5, 0, 2, d->minor));
		EMIT(insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1));
		EMIT(insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	}
	EMIT(insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0));
	EMIT(insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
#undef EMIT
	return n;
}

static int load(const struct bpf_insn *prog, size_t n, char *log, size_t log_size)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	attr.expected_attach_type = BPF_CGROUP_DEVICE;
	attr.insns = (uint64_t)(uintptr_t)prog;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uint64_t)(uintptr_t) "GPL";
	if (log) {
		attr.log_buf = (uint64_t)(uintptr_t)log;
		attr.log_size = (uint32_t)log_size;
		attr.log_level = 1;
	}
	snprintf(attr.prog_name, sizeof attr.prog_name, "e2b_devices");
	return (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
}

int runtime_devices_load(struct err *err)
{
	struct bpf_insn prog[64];
	size_t n = runtime_devices_program(prog, sizeof prog / sizeof prog[0]);
	int fd = n ? load(prog, n, NULL, 0) : -1;
	if (fd >= 0)
		return fd;
	int e = n ? errno : E2BIG;
	/* Again with the verifier's log, only to say why (a log too small for
	 * a whole verification fails a load that would pass). */
	char log[1024] = "";
	if (n && e != EPERM)
		load(prog, n, log, sizeof log);
	log[sizeof log - 1] = '\0';
	char *nl = strchr(log, '\n');
	if (nl)
		*nl = '\0';
	err_set(err, e, "cannot load the devices program (bpf BPF_PROG_LOAD): %s%s%s", strerror(e),
		log[0] ? ": " : "", log);
	errno = e;
	return -1;
}

int runtime_devices_attach(int prog_fd, int cgroup_fd)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.target_fd = (uint32_t)cgroup_fd;
	attr.attach_bpf_fd = (uint32_t)prog_fd;
	attr.attach_type = BPF_CGROUP_DEVICE;
	attr.attach_flags = BPF_F_ALLOW_MULTI;
	return syscall(SYS_bpf, BPF_PROG_ATTACH, &attr, sizeof attr) == 0 ? 0 : -1;
}
