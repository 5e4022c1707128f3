/* volumes/ — E2B's volumes: named, persistent storage that sandboxes mount
 * at create (volumeMounts) and clients reach through the volume content API
 * with the volume's own token.
 * Owns: the volumes (id, name, size) and their data under
 * <state>/volumes/<id>/: with full isolation an ext4 image of the volume's
 * size (disk.img) mounted at data/ in the backend's mount namespace, so the
 * size is the limit; otherwise data/ is a plain directory without a limit.
 * Files on a volume carry the ids they have inside a sandbox (root 0, user
 * 1000); each sandbox mounts it idmapped (runtime_volumes.h). Also owns the
 * tokens (never stored: HMAC-SHA256 of the API key and the volume's id) and
 * the rule that a volume a sandbox mounts cannot be deleted.
 * May call: registry/ (which sandboxes mount a volume), runtime/ (disk
 * images, the data directory), store/ (records), lib/. */
#ifndef E2B_BACKEND_VOLUMES_H
#define E2B_BACKEND_VOLUMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

struct registry;
struct volumes;

#define VOLUME_ID_LEN 20
#define VOLUME_TOKEN_LEN 64
#define VOLUME_DEFAULT_SIZE_MB 1024
#define VOLUME_MIN_SIZE_MB 64
#define VOLUME_MAX_SIZE_MB (1024 * 1024)

struct volume {
	char id[VOLUME_ID_LEN + 1];
	char *name;
	int size_mb;
	int64_t created_ms;
	char *data_dir; /* <state>/volumes/<id>/data */
	int loop;       /* the image's loop device, -1 none */
	bool mounted;   /* the image is mounted at data_dir */
};

/* Opens <state_root>/volumes (images: full isolation's ext4 images). The
 * token key is the API key. persist (--state-dir): each volume has a record
 * (records/volumes/<id>.json, store/store_records.h), written once its data
 * is made and removed before its data is; the volumes of the records are
 * brought back (their images mounted again) and data without a record (a
 * crash half-way) is removed. NULL with a message on stderr. */
struct volumes *volumes_open(const char *state_root, struct registry *reg, const char *token_key, bool images,
	bool persist);
/* Unmounts every volume (what was written is kept). */
void volumes_close(struct volumes *vs);

/* Refusals are a struct err (lib/err.h) whose status is 400 bad name or
 * size, 409 name taken or volume in use, 404 unknown, 507 no room, 500
 * otherwise. */
/* Whether name is a volume name: 1 to 64 of [A-Za-z0-9._-], not starting
 * with '.' or '-'. */
bool volumes_name_valid(const char *name);
const struct volume *volumes_create(struct volumes *vs, const char *name, int size_mb, struct err *err);
const struct volume *volumes_find(const struct volumes *vs, const char *id);
const struct volume *volumes_find_name(const struct volumes *vs, const char *name);
size_t volumes_count(const struct volumes *vs);
const struct volume *volumes_at(const struct volumes *vs, size_t i);
/* Deletes the volume and its data; refused (409) while a sandbox, running
 * or paused, mounts it. 0 or -1 with err. */
int volumes_delete(struct volumes *vs, const char *id, struct err *err);
/* The volume's content token (hex, VOLUME_TOKEN_LEN + 1 bytes). */
void volumes_token(const struct volumes *vs, const struct volume *v, char *out);
/* Whether an Authorization header value is "Bearer <the volume's token>". */
bool volumes_authorized(const struct volumes *vs, const struct volume *v, const char *authorization);

#endif
