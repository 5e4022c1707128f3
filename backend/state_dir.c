/* Creating and deleting the backend's directories on disk. */
#include "state_dir.h"

#include "text.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p, for a --state-dir that does not exist yet. */
static int make_dirs(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return -1;
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0700) != 0 && errno != EEXIST) {
			free(copy);
			return -1;
		}
		*p = '/';
	}
	int rc = mkdir(copy, 0700) != 0 && errno != EEXIST ? -1 : 0;
	free(copy);
	return rc;
}

int state_dir_open(struct state_dir *sd, const char *requested)
{
	memset(sd, 0, sizeof *sd);
	char *made = NULL;
	if (requested) {
		if (make_dirs(requested) != 0) {
			fprintf(stderr, "e2b-local-backend: cannot create --state-dir %s: %s\n", requested,
				strerror(errno));
			return -1;
		}
	} else {
		const char *tmp = getenv("TMPDIR");
		if (!tmp || !*tmp)
			tmp = "/tmp";
		made = text_printf("%s/e2b-local-backend.XXXXXX", tmp);
		if (!made || !mkdtemp(made)) {
			fprintf(stderr, "e2b-local-backend: cannot create a state dir under %s: %s\n", tmp,
				strerror(errno));
			free(made);
			return -1;
		}
		sd->owns_root = true;
	}

	char resolved[PATH_MAX];
	if (!realpath(requested ? requested : made, resolved)) {
		fprintf(stderr, "e2b-local-backend: cannot resolve state dir: %s\n", strerror(errno));
		if (made)
			rmdir(made);
		free(made);
		return -1;
	}
	free(made);
	sd->root = strdup(resolved);
	sd->sandboxes = text_printf("%s/sandboxes", resolved);
	if (!sd->root || !sd->sandboxes)
		goto fail;
	if (mkdir(sd->sandboxes, 0700) == 0)
		sd->owns_sandboxes = true;
	else if (errno != EEXIST)
		goto fail;
	return 0;

fail:
	fprintf(stderr, "e2b-local-backend: cannot prepare state dir %s: %s\n", resolved,
		strerror(errno));
	state_dir_close(sd);
	return -1;
}

void state_dir_close(struct state_dir *sd)
{
	if (sd->owns_root && sd->root)
		state_dir_remove_tree(sd->root);
	else if (sd->owns_sandboxes && sd->sandboxes)
		rmdir(sd->sandboxes); /* only if the sandboxes inside are gone */
	free(sd->root);
	free(sd->sandboxes);
	memset(sd, 0, sizeof *sd);
}

/* Empties the directory open as dirfd (consumed), depth-first. */
static int empty_dir(int dirfd, int depth)
{
	DIR *dir = fdopendir(dirfd);
	if (!dir) {
		close(dirfd);
		return -1;
	}
	int rc = 0;
	struct dirent *ent;
	while ((ent = readdir(dir)) != NULL) {
		const char *name = ent->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (unlinkat(dirfd, name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			rc = -1;
			continue;
		}
		if (depth >= 256) { /* bounded recursion: give up, report failure */
			rc = -1;
			continue;
		}
		/* A directory: O_NOFOLLOW refuses to enter it through a link. */
		int child = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (child < 0 || empty_dir(child, depth + 1) != 0) {
			rc = -1;
			continue;
		}
		if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0)
			rc = -1;
	}
	closedir(dir);
	return rc;
}

int state_dir_remove_tree(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : (unlink(path) == 0 ? 0 : -1);
	if (empty_dir(fd, 0) != 0)
		return -1;
	return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
}
