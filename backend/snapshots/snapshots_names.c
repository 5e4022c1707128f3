/* Snapshot names (snapshots_names.h). */
#include "snapshots/snapshots_names.h"

#include "lib/err.h"

#include <stdio.h>
#include <string.h>

static bool lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool snapshots_name_valid(const char *text, size_t len)
{
	if (len == 0 || len > SNAPSHOTS_NAME_MAX || !lower_alnum(text[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!lower_alnum(text[i]) && text[i] != '_' && text[i] != '-')
			return false;
	return true;
}

bool snapshots_tag_valid(const char *text, size_t len)
{
	if (len == 0 || len > SNAPSHOTS_NAME_MAX || text[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (!lower_alnum(c) && !(c >= 'A' && c <= 'Z') && c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}

int snapshots_ref_parse(const char *text, struct snapshot_ref *ref, struct err *err)
{
	memset(ref, 0, sizeof *ref);
	const char *slash = strchr(text, '/');
	if (slash) {
		if ((size_t)(slash - text) != strlen(SNAPSHOTS_NAMESPACE) ||
			strncmp(text, SNAPSHOTS_NAMESPACE, (size_t)(slash - text)) != 0)
			return err_set(err, 400,
				"snapshots live in the namespace \"" SNAPSHOTS_NAMESPACE
				"\" of this backend");
		text = slash + 1;
	}
	const char *colon = strchr(text, ':');
	size_t name_len = colon ? (size_t)(colon - text) : strlen(text);
	if (!snapshots_name_valid(text, name_len))
		return err_set(err, 400,
			"a snapshot name is 1 to 64 of a-z 0-9 _ - and starts with a letter or a digit");
	memcpy(ref->name, text, name_len);
	if (colon) {
		if (!snapshots_tag_valid(colon + 1, strlen(colon + 1)))
			return err_set(err, 400,
				"a tag is 1 to 64 of A-Z a-z 0-9 . _ - and does not start with .");
		snprintf(ref->tag, sizeof ref->tag, "%s", colon + 1);
		ref->has_tag = true;
	} else {
		strcpy(ref->tag, SNAPSHOTS_DEFAULT_TAG);
	}
	return 0;
}

void snapshots_id_text(const char *name, const char *id, const char *tag, char *out)
{
	if (name)
		snprintf(out, SNAPSHOTS_ID_TEXT_MAX, SNAPSHOTS_NAMESPACE "/%s:%s", name, tag);
	else
		snprintf(out, SNAPSHOTS_ID_TEXT_MAX, "%s:%s", id, tag);
}
