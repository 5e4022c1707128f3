/* Id maps of a checkpoint image (runtime_checkpoint_ids.h). */
#define _GNU_SOURCE
#include "runtime/runtime_checkpoint_ids.h"

#include "lib/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* argv: dir, from, to, count. Exit 0, 3 for an extent outside the range
 * (that file left as it was), 4 for no userns image; any other failure a traceback
 * (its last line is the reason). Each file is written beside and renamed
 * over the old one. pycriu's message class and magic numbers alone, without
 * the package (its import loads every image type: seconds in a slow guest);
 * the framing is CRIU's: two magic words, then each entry's size and bytes. */
static const char SHIFT_SCRIPT[] =
	"import importlib.util, os, struct, sys\n"
	"sys.path.insert(0, os.path.join(importlib.util.find_spec('pycriu').submodule_search_locations[0], "
	"'images'))\n"
	"import magic, userns_pb2\n"
	"d, old, new, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])\n"
	"names = [f for f in os.listdir(d) if f.startswith('userns-') and f.endswith('.img')]\n"
	"if not names: sys.exit(4)\n"
	"for name in names:\n"
	"    data = open(os.path.join(d, name), 'rb').read()\n"
	"    if struct.unpack_from('<II', data) != (magic.by_name['IMG_COMMON'], magic.by_name['USERNS']):\n"
	"        raise ValueError(name + ': not a userns image')\n"
	"    out, at = [data[:8]], 8\n"
	"    while at < len(data):\n"
	"        size = struct.unpack_from('<I', data, at)[0]\n"
	"        e = userns_pb2.userns_entry()\n"
	"        e.ParseFromString(data[at + 4:at + 4 + size])\n"
	"        at += 4 + size\n"
	"        for x in list(e.uid_map) + list(e.gid_map):\n"
	"            if not (old <= x.lower_first and x.lower_first + x.count <= old + n): sys.exit(3)\n"
	"            x.lower_first += new - old\n"
	"        out.append(struct.pack('<I', e.ByteSize()) + e.SerializeToString())\n"
	"    with open(os.path.join(d, name + '.new'), 'wb') as f: f.write(b''.join(out))\n"
	"    os.rename(os.path.join(d, name + '.new'), os.path.join(d, name))\n";

int runtime_checkpoint_shift_ids(const char *dir, uid_t from, uid_t to, unsigned long count, struct err *err)
{
	char a_from[24], a_to[24], a_count[24];
	snprintf(a_from, sizeof a_from, "%lu", (unsigned long)from);
	snprintf(a_to, sizeof a_to, "%lu", (unsigned long)to);
	snprintf(a_count, sizeof a_count, "%lu", count);
	int out[2];
	if (pipe2(out, O_CLOEXEC) != 0)
		return err_set(err, 0, "cannot rewrite the image's id maps: %s", strerror(errno));
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null < 0 || dup2(null, 0) != 0 || dup2(null, 1) != 1 || dup2(out[1], 2) != 2)
			_exit(126);
		syscall(SYS_close_range, 3U, ~0U, 0U);
		execl("/usr/bin/python3", "python3", "-c", SHIFT_SCRIPT, dir, a_from, a_to, a_count,
			(char *)NULL);
		_exit(127);
	}
	close(out[1]);
	if (pid < 0) {
		close(out[0]);
		return err_set(err, 0, "cannot rewrite the image's id maps: %s", strerror(errno));
	}
	char text[4096];
	size_t len = 0;
	ssize_t n;
	while ((n = read(out[0], text + len, sizeof text - 1 - len)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && (len += (size_t)n) == sizeof text - 1)
			len = 0; /* its end holds the reason: keep reading over */
	text[len] = 0;
	close(out[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return err_set(err, 0, "cannot rewrite the image's id maps: %s", strerror(errno));
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (rc == 0)
		return 0;
	if (rc == 3)
		return err_set(err, 0, "the image's id maps are not its sandbox's range");
	if (rc == 4)
		return err_set(err, 0, "the image has no user namespace");
	if (rc == 127)
		return err_set(err, 0, "python3 is missing (pycriu rewrites the image's id maps)");
	/* A traceback: its last line says why (pycriu missing, a bad image). */
	while (len > 0 && text[len - 1] == '\n')
		text[--len] = 0;
	const char *last = strrchr(text, '\n');
	return err_set(err, 0, "cannot rewrite the image's id maps: %.160s",
		last              ? last + 1
			: text[0] ? text
				  : "python3 failed");
}
