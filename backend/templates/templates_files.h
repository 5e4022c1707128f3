/* The files a build's COPY steps take: the SDK uploads each step's files as
 * a gzipped tar, named by the step's filesHash, to a link the API hands out
 * (GET /templates/{id}/files/{hash}). They are kept under
 * <state-dir>/template-files/<hash>, written atomically. A link carries a
 * token derived from the hash and a secret of this backend run, so only
 * links it gave out can upload and the API key never travels with the
 * upload. A COPY step's command puts them in place in the build sandbox.
 * Calls lib/, templates_steps.h and runtime/ (putting a file in a build
 * sandbox). */
#ifndef E2B_BACKEND_TEMPLATES_FILES_H
#define E2B_BACKEND_TEMPLATES_FILES_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct err;
struct sandbox;

#define TEMPLATES_HASH_LEN 64 /* sha256, hex */
#define TEMPLATES_TOKEN_LEN 64
#define TEMPLATES_MAX_UPLOAD_BYTES (256LL * 1024 * 1024)

int templates_files_init(const char *state_root);
void templates_files_shutdown(void);
bool templates_files_valid_hash(const char *hash);
bool templates_files_present(const char *hash);
/* The file's host path (static buffer), for a valid hash. */
const char *templates_files_path(const char *hash);
/* The upload token of hash (TEMPLATES_TOKEN_LEN + 1 bytes). */
void templates_files_token(const char *hash, char *out);
bool templates_files_token_ok(const char *hash, const char *token);
/* Stores an upload. 0, or -1 with errno. */
int templates_files_store(const char *hash, const void *data, size_t len);
/* Puts the upload of hash into the sandbox as a file of its root, at the
 * path written to inside (its /tmp). 0, or -1 with errno. */
int templates_files_place(struct sandbox *sb, const char *hash, char *inside, size_t len);
/* A COPY step's root shell script in the build sandbox sb, its upload put
 * there first (templates_steps_copy_script): what it copies belongs to the
 * step's user, else to user; a relative dest is from workdir (NULL: the
 * home, /home/user). malloc'd, or NULL with the reason the build fails in
 * err (an upload that never arrived, ...). */
char *templates_files_copy_command(struct sandbox *sb, const struct cJSON *step, const char *user,
	const char *workdir, struct err *err);

#endif
