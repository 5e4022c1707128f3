/* Records: one small JSON document per object of the backend's state, at
 * <state-dir>/records/<kind>/<id>.json (kind: sandboxes, templates, builds,
 * snapshots, volumes). A record is written atomically (<id>.json.tmp,
 * rename): a reader, or the backend after a crash, sees the old record or
 * the new one, never half of one. STORE_DURABLE adds an fsync of the file
 * and of its directory, so the record also outlives a power failure; a
 * running sandbox's records go without (STORE_VOLATILE: its processes and
 * unsynced files do not outlive one either, and the two fsyncs cost 1-2 ms
 * of every create and kill). Calls lib/ and cJSON. The backend is
 * single-threaded; these block on the disk (one small file each) and are
 * meant for the loop. */
#ifndef E2B_BACKEND_STORE_RECORDS_H
#define E2B_BACKEND_STORE_RECORDS_H

struct cJSON;

enum store_sync {
	STORE_VOLATILE,
	STORE_DURABLE
};

/* Kinds and ids are one path element of [A-Za-z0-9._:-], not starting with
 * '.', at most STORE_NAME_MAX bytes. */
#define STORE_NAME_MAX 128
int store_name_valid(const char *name);

/* Writes json to path atomically (path.tmp, rename; STORE_DURABLE: with an
 * fsync before the rename and of the directory after). 0 ok, -1 with errno. */
int store_json_write(const char *path, const struct cJSON *json, enum store_sync sync);
/* The JSON object in path (at most 1 MiB), or NULL with errno (ENOENT,
 * EINVAL for a file that is not a JSON object). The caller deletes it. */
struct cJSON *store_json_read(const char *path);

/* Writes records/<kind>/<id>.json (the directories are made when missing).
 * 0 ok, -1 with errno (EINVAL for a bad kind or id). */
int store_records_write(const char *state_root, const char *kind, const char *id, const struct cJSON *record,
	enum store_sync sync);
/* The record, or NULL with errno (ENOENT when there is none). */
struct cJSON *store_records_read(const char *state_root, const char *kind, const char *id);
/* Removes the record (STORE_DURABLE: and fsyncs the directory). A missing
 * record is not an error. 0 ok, -1 with errno. */
int store_records_delete(const char *state_root, const char *kind, const char *id, enum store_sync sync);

/* Calls fn for each record of kind, in no particular order; record is the
 * callee's to keep or delete. Files that are not a valid <id>.json object
 * (leftover .tmp files, garbage) are skipped with one line on stderr. fn
 * returning non-zero stops the walk. The number of records passed to fn,
 * or -1 with errno when the kind's directory cannot be read (a missing one
 * holds no records: 0). */
typedef int (*store_records_fn)(void *ctx, const char *id, struct cJSON *record);
int store_records_each(const char *state_root, const char *kind, store_records_fn fn, void *ctx);

#endif
