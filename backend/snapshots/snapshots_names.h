/* E2B's names for snapshots: a snapshot is a template of the team, named
 * "<namespace>/<name>:<tag>" (the local backend's one team is "local"), or,
 * unnamed, known by its raw id as "<id>:<tag>". The tag defaults to
 * "default". References accepted (create from it, delete, list filter):
 * "name", "name:tag", "local/name", "local/name:tag", "<id>", "<id>:tag".
 * Pure string work; calls only lib/err. */
#ifndef E2B_BACKEND_SNAPSHOTS_NAMES_H
#define E2B_BACKEND_SNAPSHOTS_NAMES_H

#include <stdbool.h>
#include <stddef.h>

struct err;

#define SNAPSHOTS_NAMESPACE "local"
#define SNAPSHOTS_DEFAULT_TAG "default"
#define SNAPSHOTS_NAME_MAX 64

struct snapshot_ref {
	char name[SNAPSHOTS_NAME_MAX + 1]; /* a name, or a raw id */
	char tag[SNAPSHOTS_NAME_MAX + 1];  /* SNAPSHOTS_DEFAULT_TAG when none was given */
	bool has_tag;
};

/* Whether text is a snapshot name: 1 to 64 of [a-z0-9_-], starting with a
 * letter or a digit. */
bool snapshots_name_valid(const char *text, size_t len);
/* Whether text is a tag: 1 to 64 of [A-Za-z0-9._-], not starting with '.'. */
bool snapshots_tag_valid(const char *text, size_t len);
/* Parses a reference (above). A namespace other than "local" is refused.
 * 0, or -1 with why in err (status 400). err may be NULL. */
int snapshots_ref_parse(const char *text, struct snapshot_ref *ref, struct err *err);
/* E2B's snapshotID: "local/<name>:<tag>" when named, else "<id>:<tag>".
 * out needs SNAPSHOTS_ID_TEXT_MAX bytes. */
#define SNAPSHOTS_ID_TEXT_MAX (sizeof SNAPSHOTS_NAMESPACE + 2 * SNAPSHOTS_NAME_MAX + 4)
void snapshots_id_text(const char *name, const char *id, const char *tag, char *out);

#endif
