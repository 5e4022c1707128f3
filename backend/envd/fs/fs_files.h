/* What GET and POST /files share: the query, envd's token-or-signature
 * check (fs_files_auth.h), the user (`username`, by default the sandbox's
 * default user) and the path expanded for that user (an empty one: the
 * sandbox's default workdir), and the sandbox's root descriptor. */
#ifndef E2B_BACKEND_FILES_REQUEST_H
#define E2B_BACKEND_FILES_REQUEST_H

#include "envd/fs/fs_path.h"
#include "lib/query.h"

#include <stdbool.h>

struct evhttp_request;
struct sandbox;

struct files_req {
	struct query q;
	struct fs_user user;
	int root_fd;
	bool has_path;
	char path[FS_PATH_MAX];
};

/* 0 when the request may go on (f filled; the caller calls files_req_free
 * later); else the status it answered with, f already freed. op: "read" or
 * "write". */
int files_prelude(struct evhttp_request *req, struct sandbox *sb, const char *op, struct files_req *f);
void files_req_free(struct files_req *f);

/* The last component of a path ("/" for "/"). */
const char *files_base_name(const char *path);

#endif
