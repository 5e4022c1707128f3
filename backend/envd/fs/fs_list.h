/* envd's ListDir walk (filepath.WalkDir order) in slices on the event loop:
 * at most FS_LIST_SLICE entries per turn, so listing a huge tree never
 * stalls other clients' requests and streams. The answer is built as JSON
 * text entry by entry and sent when the walk ends. */
#ifndef E2B_BACKEND_FS_LIST_H
#define E2B_BACKEND_FS_LIST_H

#include <stdint.h>

struct fs_ctx;
struct evhttp_request;
struct sandbox;

#define FS_LIST_MAX_ENTRIES 100000 /* bounds one answer (resource_exhausted above) */
#define FS_LIST_SLICE 1000

/* Lists the directory at path (already checked to be one) depth levels
 * deep and answers req later. Takes root_fd in every case. 0 when started
 * (the caller returns FS_STATUS_PENDING), -1 when out of memory (nothing
 * sent). If the sandbox is removed meanwhile, the connection is cut, as
 * E2B's proxy cuts it. */
int fs_list_start(struct fs_ctx *ctx, struct evhttp_request *req, const struct sandbox *sb, int root_fd,
	const char *path, uint32_t depth);
/* Ends every listing in progress, unanswered; called before the envd
 * listener is freed. */
void fs_list_shutdown(void);

#endif
