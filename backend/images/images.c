/* Pulls on the loop (images.h): the options, starting a pull in a store
 * helper, reading its result, cancelling. */
#define _GNU_SOURCE
#include "images/images.h"

#include "images/images_pull.h"
#include "lib/err.h"
#include "lib/text.h"
#include "store/store_helper.h"
#include "store/store_layers.h"
#include "store/store_records.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	struct event_base *base;
	char mirrors[IMAGES_MAX_MIRRORS][IMAGES_HOST_MAX];
	bool mirror_http[IMAGES_MAX_MIRRORS];
	size_t mirror_count;
	bool no_docker_hub;
	uint64_t max_bytes;
	struct images_pull *running;
	bool stopping; /* images_cancel_all: pulls end with "the backend stopped" */
} g;

int images_init(struct event_base *base, const struct images_options *opt)
{
	memset(&g, 0, sizeof g);
	g.base = base;
	for (size_t i = 0; i < opt->mirror_count && i < IMAGES_MAX_MIRRORS; i++)
		if (images_mirror_parse(opt->mirrors[i], g.mirrors[i], &g.mirror_http[i]) != 0)
			return -1;
	g.mirror_count = opt->mirror_count < IMAGES_MAX_MIRRORS ? opt->mirror_count : IMAGES_MAX_MIRRORS;
	g.no_docker_hub = opt->no_docker_hub;
	g.max_bytes = (uint64_t)(opt->max_image_mb > 0 ? opt->max_image_mb : IMAGES_DEFAULT_MAX_MB) << 20;
	return 0;
}

static void pull_free(struct images_pull *p)
{
	for (struct images_pull **pp = &g.running; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	if (p->password)
		explicit_bzero(p->password, strlen(p->password));
	free(p->username);
	free(p->password);
	if (p->scratch)
		store_scratch_remove(p->scratch);
	free(p);
}

/* text with every occurrence of the password replaced by "***". */
static void scrub(char *text, const char *password)
{
	size_t n = password ? strlen(password) : 0;
	for (char *hit; n && (hit = strstr(text, password)) != NULL;) {
		memcpy(hit, "***", 3);
		memmove(hit + 3, hit + n, strlen(hit + n) + 1);
	}
}

/* The helper has ended. */
static void pulled(void *ctx, const struct err *err)
{
	struct images_pull *p = ctx;
	if (p->cancelled) {
		pull_free(p);
		return;
	}
	struct err why;
	cJSON *result = NULL;
	if (g.stopping && err) {
		err_set(&why, 0, "the backend stopped");
	} else if (err) {
		err_set(&why, err->status, "%s", err->msg);
	} else {
		char *path = text_printf("%s/result.json", p->scratch);
		result = path ? store_json_read(path) : NULL;
		free(path);
		err_set(&why, 0, "the pull of '%.200s' left no result", p->shown);
	}
	const cJSON *layers = cJSON_GetObjectItemCaseSensitive(result, "layers"), *id;
	cJSON_ArrayForEach(id, layers) {
		/* Collected meanwhile is possible (another template's last user
		 * deleted while this pull found the layer in the store). */
		if (!store_layer_adopt(cJSON_GetStringValue(id))) {
			err_set(&why, 0, "layer %.80s of '%.200s' is not in the store any more; build again",
				cJSON_GetStringValue(id) ? id->valuestring : "?", p->shown);
			cJSON_Delete(result);
			result = NULL;
			break;
		}
	}
	if (result && cJSON_IsArray(layers)) {
		const cJSON *workdir = cJSON_GetObjectItemCaseSensitive(result, "workdir");
		struct images_pulled got = {.layers = layers,
			.envs = cJSON_GetObjectItemCaseSensitive(result, "envs"),
			.workdir = cJSON_GetStringValue(workdir),
			.user = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, "user")),
			.lacks_user = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "lacksUser")),
			.log = cJSON_GetObjectItemCaseSensitive(result, "log")};
		p->done(p->ctx, &got, NULL);
	} else {
		scrub(why.msg, p->password);
		p->done(p->ctx, NULL, &why);
	}
	cJSON_Delete(result);
	pull_free(p);
}

/* The registries ref may come from, in the order they are tried. */
static int hosts(struct images_pull *p, struct err *err)
{
	if (!images_ref_is_docker_hub(&p->ref)) {
		snprintf(p->hosts[0], sizeof p->hosts[0], "%s", p->ref.host);
		p->plain_http[0] = images_host_is_loopback(p->ref.host);
		p->host_count = 1;
		return 0;
	}
	for (size_t i = 0; i < g.mirror_count; i++) {
		memcpy(p->hosts[i], g.mirrors[i], sizeof p->hosts[i]);
		p->plain_http[i] = g.mirror_http[i] || images_host_is_loopback(g.mirrors[i]);
	}
	p->host_count = g.mirror_count;
	if (!g.no_docker_hub)
		snprintf(p->hosts[p->host_count++], sizeof p->hosts[0], "%s", IMAGES_DOCKER_HUB);
	if (p->host_count == 0) {
		err_set(err, 0,
			"'%.200s' is a Docker Hub image and this backend pulls none from Docker Hub "
			"(--no-docker-hub) and has no --registry-mirror",
			p->shown);
		return -1;
	}
	return 0;
}

struct images_pull *images_pull_start(const struct images_pull_spec *spec, images_pull_done done, void *ctx,
	struct err *err)
{
	struct images_pull *p = calloc(1, sizeof *p);
	if (!p) {
		err_set(err, 0, "out of memory");
		return NULL;
	}
	snprintf(p->shown, sizeof p->shown, "%s", spec->ref ? spec->ref : "");
	if (images_ref_parse(spec->ref, &p->ref, err) != 0 || hosts(p, err) != 0) {
		free(p);
		return NULL;
	}
	snprintf(p->origin, sizeof p->origin, "%s", spec->origin ? spec->origin : "image");
	p->max_layers = spec->max_layers;
	p->max_bytes = g.max_bytes;
	p->done = done;
	p->ctx = ctx;
	p->next = g.running;
	g.running = p;
	bool creds = spec->username && spec->password;
	if ((creds && (!(p->username = strdup(spec->username)) || !(p->password = strdup(spec->password)))) ||
		!(p->scratch = store_scratch_new())) {
		err_set(err, errno, "cannot start the pull: %s", strerror(errno));
		pull_free(p);
		return NULL;
	}
	if (store_helper_run(g.base, "e2b-image-pull", images_pull_run, p, pulled, p) != 0) {
		err_set(err, errno, "cannot start the pull: %s", strerror(errno));
		pull_free(p);
		return NULL;
	}
	return p;
}

void images_pull_cancel(struct images_pull *p)
{
	p->cancelled = true; /* pulled() frees it once the helper is gone */
	store_helper_kill(p);
}

void images_cancel_all(void)
{
	g.stopping = true;
	for (struct images_pull *p = g.running; p; p = p->next)
		store_helper_kill(p);
}

void images_shutdown(void)
{
	images_cancel_all();
	memset(g.mirrors, 0, sizeof g.mirrors);
}
