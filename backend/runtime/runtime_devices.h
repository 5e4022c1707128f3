/* The device nodes a sandbox may open, one list for both cgroup
 * hierarchies: cgroup v1's devices controller takes it as "c 1:3 rwm"
 * lines (runtime_cgroup_v1.c); cgroup v2 has no devices controller, so the
 * list becomes a BPF_PROG_TYPE_CGROUP_DEVICE program, attached to each
 * sandbox's cgroup (as crun and systemd do), which the kernel runs on every
 * open and mknod of a device node by a process in it. The program is a few
 * instructions made here and loaded with bpf(2), no library. Calls only the
 * kernel (and lib/err). */
#ifndef E2B_BACKEND_RUNTIME_DEVICES_H
#define E2B_BACKEND_RUNTIME_DEVICES_H

#include <linux/bpf.h>
#include <stddef.h>

struct err;

/* 'c' (character) or 'b' (block), major, minor (-1: any); access is always
 * "rwm" (read, write, mknod: overlayfs copies an allowed node up by making it). */
struct runtime_device_rule {
	char type;
	int major, minor;
};
extern const struct runtime_device_rule runtime_devices_allowed[];
extern const size_t runtime_devices_count;

/* The program: 1 (allow) for a node of the list, 0 (EPERM) for any other.
 * Its instructions into out (at most max): how many, 0 when max is too
 * small. */
size_t runtime_devices_program(struct bpf_insn *out, size_t max);
/* Loads the program: its descriptor, or -1 with err (status the errno; the
 * message has the verifier's first words when it refused). */
int runtime_devices_load(struct err *err);
/* Attaches it to a cgroup v2 directory (BPF_F_ALLOW_MULTI: programs of
 * ancestors, such as systemd's DevicePolicy, keep applying). 0, -1 errno. */
int runtime_devices_attach(int prog_fd, int cgroup_fd);

#endif
