/* The common start of GET and POST /files (see fs_files.h). */
#include "envd/fs/fs_files.h"

#include "envd/fs/fs_files_auth.h"
#include "http/http_head.h"
#include "http/http_reply.h"
#include "lib/err.h"
#include "registry/registry.h"

#include <event2/http.h>
#include <string.h>
#include <unistd.h>

void files_req_free(struct files_req *f)
{
	query_free(&f->q);
	if (f->root_fd >= 0)
		close(f->root_fd);
}

static int prelude(struct evhttp_request *req, struct sandbox *sb, const char *op, struct files_req *f)
{
	f->root_fd = -1;
	f->q.pairs = NULL;
	f->q.count = 0;
	if (query_parse(evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req)), &f->q) != 0)
		return reply_error(req, 400, "invalid query string");
	struct err err;
	struct http_head head;
	http_head_of_request(req, &head);
	if (files_auth_check(sb, &head, &f->q, op, &err) != 0)
		return reply_error(req, err.status, err.msg);
	/* No username: the sandbox's default user (its template's), looked up
	 * and refused alike. */
	const char *name = query_get(&f->q, "username");
	if (!name || !*name)
		name = registry_default_user(sb);
	if (fs_user_lookup(sb, name, &f->user) != 0)
		return reply_errorf(req, 401, "error looking up user '%.64s': user: unknown user %.64s", name,
			name);
	const char *path = query_get(&f->q, "path");
	f->has_path = path != NULL;
	if (fs_expand(path ? path : "", &f->user, f->path, sizeof f->path) != 0)
		return reply_errorf(req, 400, "error resolving path '%.200s'", path ? path : "");
	f->root_fd = fs_root_open(sb);
	if (f->root_fd < 0)
		return reply_error(req, 500, "sandbox root filesystem unavailable");
	return 0;
}

int files_prelude(struct evhttp_request *req, struct sandbox *sb, const char *op, struct files_req *f)
{
	int st = prelude(req, sb, op, f);
	if (st)
		files_req_free(f);
	return st;
}

const char *files_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}
