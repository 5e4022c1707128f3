/* runtime/runtime_cgroup_parse.c and the devices program of
 * runtime/runtime_devices.c: which hierarchy /sys/fs/cgroup is, a
 * process's cgroup v2 path, controller lists, flat keyed files
 * (cgroup.events, cpu.stat, memory.stat); and the BPF program, run here
 * by a small interpreter of the instructions it uses over every device
 * class, so its decisions are checked, not only its shape. */
#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "runtime/runtime_cgroup_parse.h"
#include "runtime/runtime_devices.h"
#include "suites.h"

static void self_is(const char *text, const char *want)
{
	char out[64] = "untouched";
	int rc = runtime_cgroup_parse_self(text, out, sizeof out);
	if (want) {
		CHECK_NUM(rc, 0);
		CHECK_STR(out, want);
	} else {
		CHECK_NUM(rc, -1);
	}
}

static void keyed_is(const char *text, const char *key, int rc, uint64_t want)
{
	uint64_t v = 12345;
	CHECK_NUM(runtime_cgroup_keyed(text, key, &v), rc);
	if (rc == 0)
		CHECK(v == want);
	else
		CHECK(v == 12345); /* untouched */
}

/* Runs prog on one device access: r0 at exit, or -1 when the program does
 * something this interpreter (and so the program's design) does not
 * expect: an unknown instruction, a jump out of it, no exit. */
static int run(const struct bpf_insn *prog, size_t n, uint32_t type, uint32_t access, uint32_t major,
	uint32_t minor)
{
	struct bpf_cgroup_dev_ctx ctx = {.access_type = (access << 16) | type,
		.major = major,
		.minor = minor};
	uint64_t r[11] = {0};
	size_t steps = 0;
	for (size_t pc = 0; pc < n && steps < 1000; pc++, steps++) {
		const struct bpf_insn *i = &prog[pc];
		switch (i->code) {
		case BPF_LDX | BPF_W | BPF_MEM: {
			if (i->src_reg != 1 || i->off < 0 || (size_t)i->off + 4 > sizeof ctx || i->off % 4)
				return -1;
			uint32_t v;
			memcpy(&v, (const char *)&ctx + i->off, 4);
			r[i->dst_reg] = v;
			break;
		}
		case BPF_ALU | BPF_AND | BPF_K:
			r[i->dst_reg] = (uint32_t)r[i->dst_reg] & (uint32_t)i->imm;
			break;
		case BPF_ALU64 | BPF_MOV | BPF_K:
			r[i->dst_reg] = (uint64_t)(int64_t)i->imm;
			break;
		case BPF_JMP | BPF_JNE | BPF_K:
		case BPF_JMP | BPF_JEQ | BPF_K: {
			bool eq = r[i->dst_reg] == (uint64_t)(int64_t)i->imm;
			if (eq == ((i->code & 0xf0) == BPF_JEQ)) {
				if (i->off < 0 || pc + 1 + (size_t)i->off >= n)
					return -1;
				pc += (size_t)i->off;
			}
			break;
		}
		case BPF_JMP | BPF_EXIT:
			return (int)r[0];
		default:
			return -1;
		}
	}
	return -1;
}

static bool listed(uint32_t type, uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < runtime_devices_count; i++) {
		const struct runtime_device_rule *d = &runtime_devices_allowed[i];
		uint32_t t = d->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
		if (t == type && (uint32_t)d->major == major && (d->minor < 0 || (uint32_t)d->minor == minor))
			return true;
	}
	return false;
}

static void suite_devices_program(void)
{
	struct bpf_insn prog[64];
	size_t n = runtime_devices_program(prog, 64);
	CHECK(n > 4 && n < 64);
	CHECK_NUM(runtime_devices_program(prog, n - 1), 0); /* too small: nothing, not a cut program */
	CHECK_NUM(runtime_devices_program(prog, 64), n);

	/* The promise, device by device. */
	const uint32_t rwm = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 1, 3), 1);   /* null */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_WRITE, 1, 9), 1);  /* urandom */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, rwm, 5, 2), 1);                  /* ptmx */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 136, 0), 1); /* pts/0 */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 136, 255), 1);
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_WRITE, 5, 1), 0);   /* the host's console */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 1, 1), 0);    /* mem */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 1, 2), 0);    /* kmem */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 4, 0), 0);    /* tty0 */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 10, 237), 0); /* loop-control */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_BLOCK, BPF_DEVCG_ACC_READ, 1, 3),
		0); /* a block 1:3 is not null */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_BLOCK, BPF_DEVCG_ACC_READ, 7, 0), 0); /* loop0 */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_BLOCK, BPF_DEVCG_ACC_READ, 8, 0), 0); /* sda */
	CHECK_NUM(run(prog, n, BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_MKNOD, 5, 1), 0);

	/* And every device class: exactly the list. */
	int wrong = 0;
	for (uint32_t type = BPF_DEVCG_DEV_BLOCK; type <= BPF_DEVCG_DEV_CHAR; type++)
		for (uint32_t major = 0; major < 300; major++)
			for (uint32_t minor = 0; minor < 270; minor += (minor < 16 ? 1 : 37)) {
				int got = run(prog, n, type, BPF_DEVCG_ACC_READ, major, minor);
				if (got != (listed(type, major, minor) ? 1 : 0))
					wrong++;
			}
	CHECK_NUM(wrong, 0);
}

void suite_cgroup(void)
{
	CHECK_NUM(runtime_cgroup_version_of(0x63677270UL), RT_CGROUP_V2); /* CGROUP2_SUPER_MAGIC */
	CHECK_NUM(runtime_cgroup_version_of(0x01021994UL), RT_CGROUP_V1); /* TMPFS_MAGIC: v1 or hybrid */
	CHECK_NUM(runtime_cgroup_version_of(0x27e0ebUL),
		RT_CGROUP_NONE); /* cgroup v1's own magic: no tmpfs above */
	CHECK_NUM(runtime_cgroup_version_of(0xEF53UL), RT_CGROUP_NONE); /* ext4: no cgroups mounted there */

	/* /proc/self/cgroup: v2's "0::" line, wherever it is. */
	self_is("0::/\n", "/");
	self_is("0::/system.slice/e2b.service\n", "/system.slice/e2b.service");
	self_is("12:pids:/x\n1:name=systemd:/user.slice\n0::/user.slice/user-1000.slice/session-2.scope\n",
		"/user.slice/user-1000.slice/session-2.scope");
	self_is("0::/a/b", "/a/b");                       /* no newline at the end */
	self_is("9:name=systemd:/\n4:memory:/x\n", NULL); /* v1 only */
	self_is("0::\n", NULL);
	self_is("0::relative\n", NULL);
	self_is("0::/../..\n", NULL); /* outside the cgroup namespace */
	self_is("0::/a/../b\n", NULL);
	self_is("0::/a/..\n", NULL);
	self_is("0::/a/..b/c\n", "/a/..b/c"); /* a name, not "..": fine */
	self_is("0::/a/b..\n", "/a/b..");
	self_is("", NULL);
	char longer[200];
	memset(longer, 'x', sizeof longer);
	memcpy(longer, "0::/", 4);
	longer[sizeof longer - 1] = '\0';
	self_is(longer, NULL); /* does not fit in 64 */

	/* Controller lists. */
	CHECK(runtime_cgroup_lists("cpuset cpu io memory hugetlb pids rdma misc\n", "cpu"));
	CHECK(runtime_cgroup_lists("cpuset cpu io memory hugetlb pids rdma misc\n", "misc"));
	CHECK(runtime_cgroup_lists("memory pids", "pids"));
	CHECK(!runtime_cgroup_lists("cpuset io memory", "cpu")); /* a prefix of cpuset is not cpu */
	CHECK(!runtime_cgroup_lists("cpuset cpu io", "cpus"));
	CHECK(!runtime_cgroup_lists("", "memory"));
	CHECK(!runtime_cgroup_lists("\n", "memory"));
	CHECK(!runtime_cgroup_lists("memory", ""));

	/* cgroup.events */
	keyed_is("populated 1\nfrozen 0\n", "populated", 0, 1);
	keyed_is("populated 1\nfrozen 0\n", "frozen", 0, 0);
	keyed_is("populated 0\nfrozen 1", "frozen", 0, 1);
	keyed_is("populated 1\n", "frozen", -1, 0); /* a kernel before the v2 freezer */
	/* cpu.stat */
	keyed_is("usage_usec 123456789\nuser_usec 100\nsystem_usec 23\n", "usage_usec", 0, 123456789);
	keyed_is("usage_usec 18446744073709551615\n", "usage_usec", 0, UINT64_MAX);
	keyed_is("usage_usec 18446744073709551616\n", "usage_usec", -1, 0); /* past 64 bits */
	keyed_is("usage_usec -5\n", "usage_usec", -1, 0);
	keyed_is("usage_usec 5x\n", "usage_usec", -1, 0);
	keyed_is("usage_usec\n", "usage_usec", -1, 0);
	/* memory.stat: whole keys only (file, not file_mapped; v1's total_cache, not cache) */
	const char *v2 = "anon 1000\nfile_mapped 7\nfile 4096\nkernel 9\n";
	keyed_is(v2, "file", 0, 4096);
	keyed_is(v2, "file_mapped", 0, 7);
	keyed_is(v2, "fil", -1, 0);
	const char *v1 = "cache 10\nrss 20\ntotal_cache 30\ntotal_rss 40\n";
	keyed_is(v1, "total_cache", 0, 30);
	keyed_is(v1, "cache", 0, 10);
	keyed_is("", "file", -1, 0);
	keyed_is("x 1\n", "", -1, 0);

	suite_devices_program();
}
