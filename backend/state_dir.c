/* Creating and deleting the backend's directories on disk. */
#include "lib/err.h"
#include "state_dir.h"

#include "lib/text.h"
#include "lib/tree_remove.h"
#include "runtime/runtime.h"
#include "store/store_lock.h"

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
	sd->lock_fd = -1;
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
	struct err why;
	sd->lock_fd = store_lock_take(resolved, (int)runtime_host_pid(), &why);
	if (sd->lock_fd < 0) {
		fprintf(stderr, "e2b-local-backend: %.4199s\n", why.msg);
		return -1;
	}
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
	fprintf(stderr, "e2b-local-backend: cannot prepare state dir %s: %s\n", resolved, strerror(errno));
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
	if (sd->lock_fd >= 0)
		close(sd->lock_fd); /* last: the directory is free for another backend */
	memset(sd, 0, sizeof *sd);
	sd->lock_fd = -1;
}

int state_dir_remove_tree(const char *path)
{
	return tree_remove(path);
}
