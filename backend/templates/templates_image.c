/* Registry images as a build's base (templates_image.h). */
#include "templates/templates_image.h"

#include "images/images.h"
#include "lib/err.h"
#include "runtime/runtime.h"
#include "templates/templates_build.h"
#include "templates/templates_stack.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct templates_image {
	struct images_pull *pull;
	struct template_build *b;
	struct template_config *cfg;
	templates_image_done done;
	void *ctx;
};

int templates_image_check(const cJSON *request, struct err *err)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(request, "fromImageRegistry");
	if (!r || cJSON_IsNull(r))
		return 0;
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "type"));
	const char *user = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "username"));
	const char *password = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "password"));
	if (!cJSON_IsObject(r) || !type) {
		err_set(err, 0, "fromImageRegistry must be an object with a type");
		return -1;
	}
	if (strcmp(type, "aws") == 0 || strcmp(type, "gcp") == 0) {
		err_set(err, 0,
			"fromImageRegistry of type '%s' is not supported by this backend: give the "
			"registry's username and password (type 'registry')",
			type);
		return -1;
	}
	if (strcmp(type, "registry") != 0) {
		err_set(err, 0, "fromImageRegistry.type must be 'registry', 'aws' or 'gcp'");
		return -1;
	}
	if (!user || !*user || !password || !*password) {
		err_set(err, 0, "fromImageRegistry needs a username and a password");
		return -1;
	}
	return 0;
}

static int take(struct template_config *cfg, const struct images_pulled *got)
{
	cJSON *layers = cJSON_Duplicate(got->layers, true);
	cJSON *envs = got->envs ? cJSON_Duplicate(got->envs, true) : cJSON_CreateObject();
	char *user = strdup(got->user ? got->user : "root");
	char *workdir = got->workdir ? strdup(got->workdir) : NULL;
	/* The runtime's checks of a create name a built-in template: the
	 * image's layers are the stack, base's files are not used. */
	char *base = strdup("base");
	if (!layers || !envs || !user || (got->workdir && !workdir) || !base) {
		cJSON_Delete(layers);
		cJSON_Delete(envs);
		free(user);
		free(workdir);
		free(base);
		return -1;
	}
	/* The start and ready commands the request gave stay. */
	cJSON_Delete(cfg->layers);
	cJSON_Delete(cfg->envs);
	free(cfg->user);
	free(cfg->workdir);
	free(cfg->base);
	cfg->layers = layers;
	cfg->envs = envs;
	cfg->user = user;
	cfg->workdir = workdir;
	cfg->base = base;
	return 0;
}

static void pulled(void *ctx, const struct images_pulled *got, const struct err *err)
{
	struct templates_image *t = ctx;
	struct err no_memory;
	const cJSON *line, *log = got ? got->log : NULL;
	cJSON_ArrayForEach(line, log)
		build_log(t->b, "info", "base", "%s", cJSON_GetStringValue(line) ? line->valuestring : "");
	if (got && take(t->cfg, got) != 0) {
		err_set(&no_memory, 0, "out of memory");
		err = &no_memory;
	}
	if (got && !err)
		build_log(t->b, "info", "base",
			"Base: image, user '%s', working directory '%s', %d variables", t->cfg->user,
			t->cfg->workdir ? t->cfg->workdir : "(home)", cJSON_GetArraySize(t->cfg->envs));
	templates_image_done done = t->done;
	void *done_ctx = t->ctx;
	free(t);
	done(done_ctx, err, got && got->lacks_user);
}

struct templates_image *templates_image_start(struct template_build *b, const cJSON *request,
	struct template_config *cfg, templates_image_done done, void *ctx, struct err *err)
{
	if (strcmp(runtime_isolation_name(), "full") != 0) {
		err_set(err, 0,
			"images from registries need the backend's full isolation (it is %s): their "
			"files are unpacked with the owners they have inside a sandbox",
			runtime_isolation_name());
		return NULL;
	}
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(request, "fromImageRegistry");
	struct images_pull_spec spec = {.ref = cJSON_GetStringValue(
						cJSON_GetObjectItemCaseSensitive(request, "fromImage")),
		.username = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "username")),
		.password = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "password")),
		.origin = TEMPLATES_ORIGIN_IMAGE,
		.max_layers = TEMPLATES_IMAGE_MAX_LAYERS};
	struct templates_image *t = calloc(1, sizeof *t);
	if (!t) {
		err_set(err, 0, "out of memory");
		return NULL;
	}
	*t = (struct templates_image){.b = b, .cfg = cfg, .done = done, .ctx = ctx};
	t->pull = images_pull_start(&spec, pulled, t, err);
	if (!t->pull) {
		free(t);
		return NULL;
	}
	return t;
}

void templates_image_cancel(struct templates_image *t)
{
	images_pull_cancel(t->pull);
	free(t);
}

void templates_image_forget_credentials(cJSON *request)
{
	cJSON *password = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(request,
								   "fromImageRegistry"),
		"password");
	if (cJSON_IsString(password))
		explicit_bzero(password->valuestring, strlen(password->valuestring));
	cJSON_DeleteItemFromObjectCaseSensitive(request, "fromImageRegistry");
}
