/* The pull job, in the helper (images_pull.h). */
#define _GNU_SOURCE
#include "images/images_pull.h"

#include "images/images_config.h"
#include "images/images_follow.h"
#include "images/images_skopeo.h"
#include "images/images_unpack.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/text.h"
#include "store/store_layers.h"
#include "store/store_records.h"

#include <cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#define INSPECT_TIMEOUT_S 120
#define COPY_TIMEOUT_S 3600
#define MIB(x) ((double)(x) / 1048576.0)

/* One registry's attempt. */
struct attempt {
	struct images_pull *p;
	const char *host;
	bool plain_http;
	struct images_skopeo how;
	char pinned[IMAGES_REF_MAX + IMAGES_HOST_MAX + 100]; /* docker://host/path@digest */
	cJSON *config, *diff_ids, *log;
	int64_t started_ms;
};

static cJSON *run_json(struct attempt *a, const char *const *args, int timeout_s, struct err *err)
{
	char *out = NULL;
	a->how.timeout_s = timeout_s;
	if (images_skopeo_run(&a->how, args, &out, err) != 0)
		return NULL;
	cJSON *j = cJSON_Parse(out);
	free(out);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		err_set(err, 0, "the registry's answer is not an image manifest or config");
		return NULL;
	}
	return j;
}

static void note(struct attempt *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct attempt *a, const char *fmt, ...)
{
	char line[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	cJSON_AddItemToArray(a->log, cJSON_CreateString(line));
}

static cJSON *raw_manifest(struct attempt *a, const char *name, struct err *err)
{
	const char *tls = a->plain_http ? "--tls-verify=false" : "--tls-verify=true";
	const bool creds = a->how.auth_fd >= 0;
	const char *args[] = {"inspect", "--raw", tls, creds ? "--authfile" : "--no-creds",
		creds ? IMAGES_SKOPEO_AUTHFILE : name, creds ? name : NULL, NULL};
	return run_json(a, args, INSPECT_TIMEOUT_S, err);
}

/* The manifest (of this machine's platform, from an index), its size and
 * layer count within the limits, and the name to pin the rest of the pull
 * to. 0, -1 (this registry failed), -2 (the image will not do). */
static int inspect(struct attempt *a, const char *name, struct err *err)
{
	cJSON *m = raw_manifest(a, name, err);
	snprintf(a->pinned, sizeof a->pinned, "%s", name);
	if (m && cJSON_GetObjectItemCaseSensitive(m, "manifests")) {
		const char *digest = images_config_pick(m, a->p->shown, err);
		struct images_ref pinned = a->p->ref;
		if (!digest) {
			cJSON_Delete(m);
			return -2;
		}
		snprintf(pinned.digest, sizeof pinned.digest, "%s", digest);
		images_ref_transport(&pinned, a->host, a->pinned, sizeof a->pinned);
		cJSON_Delete(m);
		m = raw_manifest(a, a->pinned, err);
	}
	if (!m)
		return -1;
	double bytes;
	int n = images_config_layers(m, &bytes, err), rc = n < 0 ? -2 : 0;
	cJSON_Delete(m);
	if (rc == 0 && bytes > (double)a->p->max_bytes) {
		err_set(err, 0,
			"image '%.200s' is %.0f MiB to download, more than the limit (%llu MiB, "
			"--max-image-mb)",
			a->p->shown, MIB(bytes), (unsigned long long)(a->p->max_bytes >> 20));
		rc = -2;
	} else if (rc == 0 && n > a->p->max_layers) {
		err_set(err, 0, "image '%.200s' has %d layers, more than a template may have (%d)",
			a->p->shown, n, a->p->max_layers);
		rc = -2;
	} else if (rc == 0) {
		note(a, "Image %s: %d layers, %.1f MiB to download at most", a->pinned + 9, n, MIB(bytes));
	}
	return rc;
}

static int read_config(struct attempt *a, struct err *err)
{
	const char *tls = a->plain_http ? "--tls-verify=false" : "--tls-verify=true";
	const bool creds = a->how.auth_fd >= 0;
	const char *args[] = {"--override-os", "linux", "--override-arch", images_config_host_arch(),
		"inspect", "--config", "--raw", tls, creds ? "--authfile" : "--no-creds",
		creds ? IMAGES_SKOPEO_AUTHFILE : a->pinned, creds ? a->pinned : NULL, NULL};
	a->config = run_json(a, args, INSPECT_TIMEOUT_S, err);
	if (!a->config)
		return -1;
	if (images_config_check_platform(a->config, a->p->shown, err) != 0 ||
		!(a->diff_ids = images_config_diff_ids(a->config, err)))
		return -2;
	return 0;
}

/* The config's inspection runs beside the manifest's, in a child of the
 * helper (the two are a round trip to the registry each): by the
 * reference as given, which skopeo resolves for this machine's platform as
 * inspect() does; copy() checks that the image copied has the config read
 * here. The answer ({rc, why, config}) goes in <scratch>/config-answer.json. */
static pid_t config_start(struct attempt *a, const char *name)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct err why;
	err_clear(&why);
	snprintf(a->pinned, sizeof a->pinned, "%s", name);
	int rc = read_config(a, &why);
	char *path = text_printf("%s/config-answer.json", a->p->scratch);
	cJSON *answer = cJSON_CreateObject();
	bool kept = path && answer && cJSON_AddNumberToObject(answer, "rc", rc) &&
		cJSON_AddStringToObject(answer, "why", why.msg) &&
		(!a->config || cJSON_AddItemReferenceToObject(answer, "config", a->config)) &&
		store_json_write(path, answer, STORE_VOLATILE) == 0;
	_exit(kept ? 0 : 1);
}

/* The child's answer: as read_config's. */
static int config_finish(struct attempt *a, pid_t pid, struct err *err)
{
	int status = -1;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	char *path = text_printf("%s/config-answer.json", a->p->scratch);
	cJSON *answer = path && pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0
		? store_json_read(path)
		: NULL;
	if (path)
		unlink(path);
	free(path);
	const cJSON *rc = cJSON_GetObjectItemCaseSensitive(answer, "rc");
	int r = cJSON_IsNumber(rc) ? rc->valueint : -1;
	const char *said = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(answer, "why"));
	err_set(err, 0, "%s", said && *said ? said : "cannot read the image's config");
	if (r == 0) {
		a->config = cJSON_DetachItemFromObjectCaseSensitive(answer, "config");
		a->diff_ids = a->config ? images_config_diff_ids(a->config, err) : NULL;
		r = a->diff_ids ? 0 : -2;
	}
	cJSON_Delete(answer);
	return r;
}

static bool in_store(const char *id)
{
	char *dir = store_layer_path(id);
	char *json = dir ? text_printf("%s/layer.json", dir) : NULL;
	bool there = json && access(json, F_OK) == 0;
	free(dir);
	free(json);
	return there;
}

static char *blob_path(const char *layout, const char *digest)
{
	return digest && strncmp(digest, "sha256:", 7) == 0 && strlen(digest) == 71 &&
			!strchr(digest + 7, '/')
		? text_printf("%s/blobs/sha256/%s", layout, digest + 7)
		: NULL;
}

static cJSON *read_blob(const char *layout, const char *digest)
{
	char *path = blob_path(layout, digest);
	cJSON *j = path ? store_json_read(path) : NULL;
	free(path);
	return j;
}

/* skopeo copy into <scratch>/oci, its layers unpacked as they come where
 * that works (images_follow.h), then the manifest's layer digests. */
static cJSON *copy(struct attempt *a, char **layout, struct images_follow **follow, struct err *err)
{
	const char *tls = a->plain_http ? "--src-tls-verify=false" : "--src-tls-verify=true";
	const bool creds = a->how.auth_fd >= 0;
	*layout = text_printf("%s/oci", a->p->scratch);
	char *dest = *layout ? text_printf("oci:%s:image", *layout) : NULL;
	/* Without followers (none could start) every layer is unpacked from its blob. */
	*follow = *layout && (mkdir(*layout, 0700) == 0 || errno == EEXIST)
		? images_follow_start(*layout, a->p->scratch, a->p->max_bytes)
		: NULL;
	if (*follow) {
		a->how.watch_fd = images_follow_fd(*follow);
		a->how.on_watch = images_follow_events;
		a->how.watch_ctx = *follow;
	}
	const char *args[] = {"--insecure-policy", "--override-os", "linux", "--override-arch",
		images_config_host_arch(), "copy", "--quiet", "--dest-oci-accept-uncompressed-layers", tls,
		creds ? "--src-authfile" : "--src-no-creds", creds ? IMAGES_SKOPEO_AUTHFILE : a->pinned,
		creds ? a->pinned : dest, creds ? dest : NULL, NULL};
	char *out = NULL;
	a->how.timeout_s = COPY_TIMEOUT_S;
	int64_t t0 = clock_now_ms();
	int rc = dest ? images_skopeo_run(&a->how, args, &out, err) : -1;
	a->how.on_watch = NULL;
	if (*follow)
		images_follow_end(*follow, rc == 0);
	free(out);
	free(dest);
	if (rc != 0)
		return NULL;
	note(a, "Downloaded in %lld ms (the blobs' digests checked by skopeo)",
		(long long)(clock_now_ms() - t0));
	char *index_path = text_printf("%s/index.json", *layout);
	cJSON *index = index_path ? store_json_read(index_path) : NULL;
	free(index_path);
	const char *mdigest = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(index,
									    "manifests"),
							 0),
			"digest"));
	cJSON *manifest = read_blob(*layout, mdigest);
	cJSON *config = read_blob(*layout,
		cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(manifest, "config"),
				"digest")));
	cJSON *ids = config ? images_config_diff_ids(config, err) : NULL;
	cJSON *layers = cJSON_DetachItemFromObjectCaseSensitive(manifest, "layers");
	bool same = ids && cJSON_Compare(ids, a->diff_ids, true) &&
		cJSON_GetArraySize(layers) == cJSON_GetArraySize(ids);
	cJSON_Delete(index);
	cJSON_Delete(manifest);
	cJSON_Delete(config);
	cJSON_Delete(ids);
	if (!same) {
		cJSON_Delete(layers);
		err_set(err, 0, "the image copied is not the one inspected (its layers differ)");
		return NULL;
	}
	return layers;
}

static const char *compression(const cJSON *desc)
{
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(desc, "mediaType"));
	return type && strstr(type, "zstd") ? "zstd" : type && strstr(type, "gzip") ? "gzip" : "uncompressed";
}

/* Layer i of the copy as a new layer of the store: the tree a follower
 * unpacked while skopeo downloaded it when there is one of that blob and
 * diff id, else unpacked from its blob now. */
static int unpack(struct attempt *a, const char *layout, struct images_follow *follow, const cJSON *desc,
	int i, uint64_t *budget, struct err *err)
{
	const char *id = cJSON_GetStringValue(cJSON_GetArrayItem(a->diff_ids, i));
	const char *parent = i ? cJSON_GetStringValue(cJSON_GetArrayItem(a->diff_ids, i - 1)) : NULL;
	const char *digest = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(desc, "digest"));
	char *blob = blob_path(layout, digest);
	struct images_unpack_stats st;
	const char *followed = images_follow_take(follow, blob, id, &st);
	if (followed && st.tar_bytes > *budget)
		followed = NULL; /* unpacked again below, to fail with the limit */
	char *dir = followed ? strdup(followed) : text_printf("%s/layer-%d", a->p->scratch, i);
	char *root = dir ? text_printf("%s/root", dir) : NULL;
	int64_t t0 = clock_now_ms();
	int rc = -1;
	if (followed && root)
		rc = 0;
	else if (!blob || !root || mkdir(dir, 0700) != 0 || mkdir(root, 0755) != 0)
		err_set(err, errno, "cannot make a layer for %.80s: %s", id, strerror(errno));
	else
		rc = images_unpack_layer(blob, root, id, *budget, &st, err);
	if (rc == 0)
		rc = store_layer_publish(dir, id, parent, a->p->origin, st.file_bytes, err);
	if (rc == 0) {
		*budget -= st.tar_bytes;
		note(a, "Layer %s: unpacked %s(%.1f MiB, %s; %u entries, %u whiteouts, %u opaque directories%s)%s %lld ms",
			id, followed ? "as it downloaded " : "", MIB(st.tar_bytes), compression(desc),
			st.entries, st.whiteouts, st.opaque, st.dropped ? ", device nodes left out" : "",
			followed ? ", published in" : " in", (long long)(clock_now_ms() - t0));
		unlink(blob); /* its room back at once */
	}
	free(blob);
	free(dir);
	free(root);
	return rc;
}

/* What the stack's /etc/passwd says of the account name, looked up from
 * the top layer down as the overlay would: a whiteout, a non-directory
 * /etc or an opaque /etc hides what is below. An /etc or a passwd that is
 * a symbolic link is not followed (on the host it could lead out of the
 * layer): it counts as no passwd. */
enum account {
	ACCOUNT_FOUND,
	ACCOUNT_MISSING,
	ACCOUNT_NO_PASSWD
};

static bool opaque_dir(const char *dir)
{
	char y = 0;
	return lgetxattr(dir, "trusted.overlay.opaque", &y, 1) == 1 && y == 'y';
}

/* One layer's say; *below: it says nothing, ask the layer under it. */
static enum account account_in(const char *root, const char *name, bool *below)
{
	char *etc = text_printf("%s/etc", root);
	char *passwd = etc ? text_printf("%s/passwd", etc) : NULL;
	struct stat e = {0}, p = {0};
	enum account found = ACCOUNT_NO_PASSWD;
	*below = false;
	if (passwd && lstat(etc, &e) != 0) {
		*below = true; /* no /etc in this layer */
	} else if (passwd && S_ISDIR(e.st_mode) && lstat(passwd, &p) != 0) {
		*below = !opaque_dir(etc);
	} else if (passwd && S_ISDIR(e.st_mode) && S_ISREG(p.st_mode)) {
		FILE *f = fopen(passwd, "re");
		char line[1024];
		found = f ? ACCOUNT_MISSING : ACCOUNT_NO_PASSWD;
		while (f && found == ACCOUNT_MISSING && fgets(line, sizeof line, f))
			if (strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ':')
				found = ACCOUNT_FOUND;
		if (f)
			fclose(f);
	}
	free(etc);
	free(passwd);
	return found;
}

static enum account has_account(const cJSON *ids, const char *name)
{
	bool below = true;
	enum account found = ACCOUNT_NO_PASSWD;
	for (int i = cJSON_GetArraySize(ids) - 1; i >= 0 && below; i--) {
		char *dir = store_layer_path(cJSON_GetStringValue(cJSON_GetArrayItem(ids, i)));
		char *root = dir ? text_printf("%s/root", dir) : NULL;
		found = root ? account_in(root, name, &below) : ACCOUNT_NO_PASSWD;
		below = below && root;
		free(dir);
		free(root);
	}
	return found;
}

static int write_result(struct attempt *a, struct err *err)
{
	cJSON *r = cJSON_CreateObject();
	const char *workdir = images_config_workdir(a->config);
	enum account account = has_account(a->diff_ids, "user");
	char *path = text_printf("%s/result.json", a->p->scratch);
	int rc = -1;
	if (r && path && cJSON_AddItemToObject(r, "layers", cJSON_Duplicate(a->diff_ids, true)) &&
		cJSON_AddItemToObject(r, "envs", images_config_envs(a->config)) &&
		(!workdir || cJSON_AddStringToObject(r, "workdir", workdir)) &&
		cJSON_AddStringToObject(r, "user", account == ACCOUNT_FOUND ? "user" : "root") &&
		cJSON_AddBoolToObject(r, "lacksUser", account == ACCOUNT_MISSING) &&
		cJSON_AddItemReferenceToObject(r, "log", a->log))
		rc = store_json_write(path, r, STORE_DURABLE);
	if (rc != 0)
		err_set(err, errno, "cannot keep the pull's result: %s", strerror(errno));
	cJSON_Delete(r);
	free(path);
	return rc;
}

/* 0 pulled, -1 failed here (another registry may have it), -2 failed for good. */
static int attempt(struct attempt *a, struct err *err)
{
	char name[sizeof a->pinned];
	if (images_ref_transport(&a->p->ref, a->host, name, sizeof name) != 0) {
		err_set(err, 0, "the image reference is too long");
		return -2;
	}
	note(a, "Pulling %s from %s", a->p->shown, a->host);
	int64_t t0 = clock_now_ms();
	pid_t config = config_start(a, name);
	int rc = inspect(a, name, err);
	if (rc != 0 && config > 0)
		kill(config, SIGKILL); /* its answer no longer matters */
	struct err config_why;
	int config_rc = config < 0 ? (rc == 0 ? read_config(a, &config_why) : -1) /* no child: in turn */
				   : config_finish(a, config, &config_why);
	if (rc == 0 && config_rc != 0) {
		*err = config_why;
		rc = config_rc;
	}
	if (rc != 0)
		return rc;
	note(a, "Manifest and config read in %lld ms", (long long)(clock_now_ms() - t0));
	int n = cJSON_GetArraySize(a->diff_ids), missing = 0;
	for (int i = 0; i < n; i++)
		missing += !in_store(cJSON_GetStringValue(cJSON_GetArrayItem(a->diff_ids, i)));
	char *layout = NULL;
	struct images_follow *follow = NULL;
	cJSON *layers = missing ? copy(a, &layout, &follow, err) : NULL;
	if (missing && !layers) {
		images_follow_free(follow);
		free(layout);
		return -2;
	}
	uint64_t budget = a->p->max_bytes;
	for (int i = 0; i < n && rc == 0; i++) {
		const char *id = cJSON_GetStringValue(cJSON_GetArrayItem(a->diff_ids, i));
		if (in_store(id))
			note(a, "Layer %s: in the store already", id);
		else if (!layers) {
			err_set(err, 0, "layer %.80s left the store during the pull; build again", id);
			rc = -2;
		} else
			rc = unpack(a, layout, follow, cJSON_GetArrayItem(layers, i), i, &budget, err) != 0
				? -2
				: 0;
	}
	images_follow_free(follow);
	cJSON_Delete(layers);
	free(layout);
	return rc == 0 ? write_result(a, err) == 0 ? 0 : -2 : rc;
}

int images_pull_run(void *arg, struct err *err)
{
	struct images_pull *p = arg;
	char *conf = text_printf("%s/registries.conf", p->scratch);
	FILE *f = conf ? fopen(conf, "w") : NULL;
	free(conf);
	if (!f || fclose(f) != 0) {
		err_set(err, errno, "cannot prepare the pull: %s", strerror(errno));
		return -1;
	}
	char first[400] = "";
	for (size_t i = 0; i < p->host_count; i++) {
		struct attempt a = {.p = p,
			.host = p->hosts[i],
			.plain_http = p->plain_http[i],
			.how = {.home = p->scratch, .auth_fd = -1},
			.log = cJSON_CreateArray()};
		if (p->username &&
			(a.how.auth_fd = images_skopeo_auth(a.host, p->username, p->password)) < 0) {
			err_set(err, errno, "cannot pass the credentials to skopeo: %s", strerror(errno));
			cJSON_Delete(a.log);
			return -1;
		}
		struct err here;
		err_set(&here, 0, "out of memory");
		int rc = a.log ? attempt(&a, &here) : -2;
		if (a.how.auth_fd >= 0)
			close(a.how.auth_fd);
		cJSON_Delete(a.config);
		cJSON_Delete(a.diff_ids);
		cJSON_Delete(a.log);
		if (rc == 0)
			return 0;
		if (!first[0] || rc == -2)
			snprintf(first, sizeof first, "%.80s: %.300s", p->hosts[i], here.msg);
		if (rc == -2)
			break;
	}
	if (p->host_count > 1)
		err_set(err, 0, "cannot pull '%.120s' (%zu registries tried) from %s", p->shown,
			p->host_count, first);
	else
		err_set(err, 0, "cannot pull '%.120s' from %s", p->shown, first);
	return -1;
}
