/* Deleting a directory tree completely: without following symbolic links,
 * at any depth (one descriptor open at a time, a stack of names instead of
 * recursion), and through immutable or append-only flags (cleared first). */
#include "lib/tree_remove.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Clears FS_IMMUTABLE_FL / FS_APPEND_FL of name in dirfd (best effort). */
static void clear_flags_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	int flags;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
		flags &= ~(FS_IMMUTABLE_FL | FS_APPEND_FL);
		ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	close(fd);
}

static int unlink_entry(int dirfd, const char *name, int flags)
{
	if (unlinkat(dirfd, name, flags) == 0 || errno == ENOENT)
		return 0;
	if (errno != EPERM && errno != EACCES)
		return -1;
	clear_flags_at(dirfd, name);
	/* The directory itself may be immutable or append-only as well. */
	clear_flags_at(dirfd, ".");
	return unlinkat(dirfd, name, flags) == 0 || errno == ENOENT ? 0 : -1;
}

struct name_stack {
	char **names;
	size_t count, cap;
};

static int push(struct name_stack *s, const char *name)
{
	if (s->count == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **n = realloc(s->names, cap * sizeof *n);
		if (!n)
			return -1;
		s->names = n;
		s->cap = cap;
	}
	s->names[s->count] = strdup(name);
	if (!s->names[s->count])
		return -1;
	s->count++;
	return 0;
}

/* Empties the directory fd (consumed) and everything below it. */
static int empty_tree(int fd)
{
	struct name_stack stack = {0};
	int rc = 0;
	for (;;) {
		DIR *dir = fdopendir(fd);
		if (!dir) {
			close(fd);
			rc = -1;
			break;
		}
		struct dirent *ent;
		int child = -1;
		while ((ent = readdir(dir)) != NULL) {
			const char *name = ent->d_name;
			if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				continue;
			if (ent->d_type != DT_DIR && ent->d_type != DT_UNKNOWN) {
				if (unlink_entry(fd, name, 0) != 0)
					rc = -1;
				continue;
			}
			if (unlink_entry(fd, name, 0) == 0)
				continue;
			if (errno != EISDIR && errno != EPERM)
				continue;
			/* An empty directory goes at once; otherwise descend into it. */
			if (unlink_entry(fd, name, AT_REMOVEDIR) == 0)
				continue;
			child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (child < 0) {
				rc = -1;
				continue;
			}
			if (push(&stack, name) != 0) {
				close(child);
				child = -1;
				rc = -1;
				continue;
			}
			break;
		}
		if (child >= 0) {
			closedir(dir);
			fd = child;
			continue;
		}
		/* This directory is empty (or what is left cannot go): climb up. */
		if (stack.count == 0) {
			closedir(dir);
			break;
		}
		int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		closedir(dir);
		char *name = stack.names[--stack.count];
		if (parent < 0) {
			free(name);
			rc = -1;
			break;
		}
		if (unlink_entry(parent, name, AT_REMOVEDIR) != 0) {
			/* Could not remove it: do not loop on it forever. */
			rc = -1;
			free(name);
			close(parent);
			break;
		}
		free(name);
		fd = parent;
	}
	while (stack.count > 0)
		free(stack.names[--stack.count]);
	free(stack.names);
	return rc;
}

int tree_remove_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return unlink_entry(dirfd, name, 0);
	}
	int rc = empty_tree(fd);
	if (unlink_entry(dirfd, name, AT_REMOVEDIR) != 0)
		rc = -1;
	return rc;
}

int tree_remove(const char *path)
{
	return tree_remove_at(AT_FDCWD, path);
}
