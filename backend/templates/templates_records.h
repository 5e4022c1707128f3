/* Templates on disk: one record per template at
 * <state-dir>/records/templates/<id>.json (store_records.h, written
 * atomically) with its name, tags and ready builds, each build with its
 * configuration and its stack of layer ids. At start the catalog is made
 * from them, so templates survive a restart with --state-dir; build logs
 * and builds that were not ready are not kept. Calls the catalog, the
 * builds (templates_build.h), store/ and lib/. */
#ifndef E2B_BACKEND_TEMPLATES_RECORDS_H
#define E2B_BACKEND_TEMPLATES_RECORDS_H

struct template;
struct template_build;
struct template_config;
struct templates;

/* 0, or -1 with errno. */
int templates_records_save(const char *state_root, const struct template *tpl);
/* The build b is ready with the configuration cfg (taken: it is zeroed):
 * its tags point at it, its log says so, its template's record is written
 * (a failure to write it is a line on stderr). */
void templates_records_build_ready(const char *state_root, struct templates *catalog,
	struct template_build *b, struct template_config *cfg);
int templates_records_delete(const char *state_root, const char *template_id);
/* Adds every recorded template to the catalog; a build whose layers are
 * not all in the store is left out, with a line on stderr. The number of
 * templates loaded. */
int templates_records_load(const char *state_root, struct templates *catalog);

#endif
