/* The sandboxes' host id ranges (runtime_ids.h): the pool of full isolation
 * and the one shared range of rootless. */
#define _GNU_SOURCE
#include "runtime/runtime_ids.h"

#include "lib/err.h"
#include "runtime/runtime_userns.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
	unsigned long start, count; /* the pool (full isolation) */
	unsigned slots;             /* count / RUNTIME_IDS_PER_SANDBOX */
	unsigned char *used;        /* per slot: taken by this backend */
	int *userns;                /* per slot: its idmap namespace, or -1 */
	int lock_fd;                /* RUNTIME_IDS_LOCK_FILE, or -1 */
	bool shared;                /* rootless: one range for all */
	uid_t shared_base;
	unsigned long shared_count;
	char describe[48];
} ids = {.start = RUNTIME_IDS_DEFAULT_START, .count = RUNTIME_IDS_DEFAULT_COUNT, .lock_fd = -1};

static int parse_ulong(const char *text, size_t len, unsigned long *out)
{
	char buf[24];
	if (len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return -1;
	errno = 0;
	unsigned long long v = strtoull(buf, NULL, 10);
	if (errno || v > UINT32_MAX)
		return -1;
	*out = (unsigned long)v;
	return 0;
}

int runtime_ids_configure(const char *spec, struct err *err)
{
	if (!spec)
		return 0;
	const char *colon = strchr(spec, ':');
	unsigned long start, count;
	if (!colon || parse_ulong(spec, (size_t)(colon - spec), &start) != 0 ||
		parse_ulong(colon + 1, strlen(colon + 1), &count) != 0)
		return err_set(err, EINVAL, "--id-range must be START:COUNT (decimal host ids)");
	/* Below 65536 are the host's own accounts; 2^32-1 is no id at all. */
	if (start < RUNTIME_IDS_PER_SANDBOX || count < RUNTIME_IDS_PER_SANDBOX ||
		count % RUNTIME_IDS_PER_SANDBOX != 0 || (uint64_t)start + count > UINT32_MAX)
		return err_set(err, EINVAL,
			"--id-range: START must be at least 65536, COUNT a multiple "
			"of 65536 (one range per sandbox), and START+COUNT at most 4294967295");
	ids.start = start;
	ids.count = count;
	return 0;
}

/* -1 with the first line of an /etc/sub[ug]id file whose range meets the
 * pool in err. */
static int overlap_in(const char *file, struct err *err)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return 0; /* no file: no subordinate ids to collide with */
	char line[512];
	int found = 0;
	for (int n = 1; !found && fgets(line, sizeof line, f); n++) {
		line[strcspn(line, "\n")] = '\0';
		char *first = strchr(line, ':'), *second = first ? strchr(first + 1, ':') : NULL;
		unsigned long s, c;
		if (line[0] == '#' || !second ||
			parse_ulong(first + 1, (size_t)(second - first - 1), &s) != 0 ||
			parse_ulong(second + 1, strlen(second + 1), &c) != 0)
			continue;
		if ((uint64_t)s < (uint64_t)ids.start + ids.count && (uint64_t)s + c > ids.start)
			found = err_set(err, EEXIST,
				"the sandboxes' id range %lu:%lu overlaps %s line %d "
				"(%.200s): choose another with --id-range START:COUNT",
				ids.start, ids.count, file, n, line);
	}
	fclose(f);
	return found;
}

int runtime_ids_init_pool(struct err *err)
{
	if (overlap_in("/etc/subuid", err) != 0 || overlap_in("/etc/subgid", err) != 0)
		return -1;
	/* Every sandbox needs one (user.max_user_namespaces, or a kernel
	 * without them, would only show at the first create). */
	int probe = runtime_userns_new((uid_t)ids.start, (gid_t)ids.start, RUNTIME_IDS_PER_SANDBOX);
	if (probe < 0)
		return err_set(err, errno,
			"no user namespaces (CONFIG_USER_NS, sysctl user.max_user_namespaces)");
	close(probe);
	ids.slots = (unsigned)(ids.count / RUNTIME_IDS_PER_SANDBOX);
	ids.used = calloc(ids.slots, 1);
	ids.userns = malloc(ids.slots * sizeof *ids.userns);
	if (!ids.used || !ids.userns)
		return err_set(err, ENOMEM, "out of memory");
	for (unsigned i = 0; i < ids.slots; i++)
		ids.userns[i] = -1;
	/* Without the lock file (no /run) ranges are still unique within this
	 * backend, only not across backends. */
	ids.lock_fd = open(RUNTIME_IDS_LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (ids.lock_fd < 0)
		fprintf(stderr,
			"e2b-local-backend: cannot open %s (%s): id ranges are not "
			"coordinated with other backends\n",
			RUNTIME_IDS_LOCK_FILE, strerror(errno));
	snprintf(ids.describe, sizeof ids.describe, "%lu:%lu", ids.start, ids.count);
	return 0;
}

void runtime_ids_init_shared(uid_t base, unsigned long count)
{
	ids.shared = true;
	ids.shared_base = base;
	ids.shared_count = count;
	snprintf(ids.describe, sizeof ids.describe, "%lu:%lu", (unsigned long)base, count);
}

/* A POSIX record lock on the byte of the range's absolute number (its first
 * id / 65536), so backends with different --id-range agree on which range a
 * byte stands for: released by the kernel when this process exits, never
 * inherited by its children. */
static int lock_slot(unsigned slot, short type)
{
	if (ids.lock_fd < 0)
		return 0;
	off_t range = (off_t)(ids.start / RUNTIME_IDS_PER_SANDBOX) + (off_t)slot;
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = range, .l_len = 1};
	return fcntl(ids.lock_fd, F_SETLK, &fl);
}

int runtime_ids_take(struct runtime_ids *out)
{
	if (ids.shared) {
		*out = (struct runtime_ids){.slot = -1, .base = ids.shared_base, .count = ids.shared_count};
		return 0;
	}
	for (unsigned i = 0; i < ids.slots; i++) {
		if (ids.used[i] || lock_slot(i, F_WRLCK) != 0)
			continue; /* ours, or another backend's */
		ids.used[i] = 1;
		*out = (struct runtime_ids){.slot = (int)i,
			.base = (uid_t)(ids.start + i * RUNTIME_IDS_PER_SANDBOX),
			.count = RUNTIME_IDS_PER_SANDBOX};
		return 0;
	}
	errno = EAGAIN;
	return -1;
}

int runtime_ids_take_base(uid_t base, struct runtime_ids *out)
{
	if (ids.shared) {
		if (base != ids.shared_base) {
			errno = ERANGE;
			return -1;
		}
		return runtime_ids_take(out);
	}
	if (base < ids.start || (base - ids.start) % RUNTIME_IDS_PER_SANDBOX != 0 ||
		(base - ids.start) / RUNTIME_IDS_PER_SANDBOX >= ids.slots) {
		errno = ERANGE; /* not in this backend's --id-range */
		return -1;
	}
	unsigned i = (unsigned)((base - ids.start) / RUNTIME_IDS_PER_SANDBOX);
	if (ids.used[i] || lock_slot(i, F_WRLCK) != 0) {
		errno = EBUSY;
		return -1;
	}
	ids.used[i] = 1;
	*out = (struct runtime_ids){.slot = (int)i, .base = base, .count = RUNTIME_IDS_PER_SANDBOX};
	return 0;
}

uid_t runtime_ids_rebase(uid_t id, const struct runtime_ids *to)
{
	if (ids.shared || id < ids.start || id - ids.start >= ids.count)
		return id;
	return to->base + (uid_t)((id - ids.start) % RUNTIME_IDS_PER_SANDBOX);
}

void runtime_ids_release(int slot)
{
	if (slot < 0 || (unsigned)slot >= ids.slots || !ids.used[slot])
		return;
	ids.used[slot] = 0;
	lock_slot((unsigned)slot, F_UNLCK);
}

int runtime_ids_userns(const struct runtime_ids *r)
{
	if (r->slot < 0 || (unsigned)r->slot >= ids.slots) {
		errno = EINVAL;
		return -1;
	}
	int *fd = &ids.userns[r->slot];
	if (*fd < 0)
		*fd = runtime_userns_new(r->base, r->base, r->count);
	return *fd;
}

unsigned long runtime_ids_ranges(void)
{
	return ids.shared ? ULONG_MAX : ids.slots;
}

const char *runtime_ids_describe(void)
{
	return ids.describe;
}

void runtime_ids_shutdown(void)
{
	for (unsigned i = 0; ids.userns && i < ids.slots; i++)
		if (ids.userns[i] >= 0)
			close(ids.userns[i]);
	free(ids.userns);
	free(ids.used);
	if (ids.lock_fd >= 0)
		close(ids.lock_fd);
	unsigned long start = ids.start, count = ids.count;
	memset(&ids, 0, sizeof ids);
	ids.start = start;
	ids.count = count;
	ids.lock_fd = -1;
}
