/* A build's base from a registry image (fromImage other than E2B's base
 * image): the credentials of the request (fromImageRegistry) are checked,
 * the image is pulled (images/) and its layers become the bottom of the
 * build's stack; the image's Env, WorkingDir and accounts give the
 * configuration the steps start with (docs/templates.md, "Images from
 * registries"). Calls images/, runtime/ and the build's records. */
#ifndef E2B_BACKEND_TEMPLATES_IMAGE_H
#define E2B_BACKEND_TEMPLATES_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

/* An image may have this many layers (Docker's own overlay2 refuses to run
 * deeper ones): those above TEMPLATES_STACK_MAX are squashed at the end of
 * the build (templates_squash.h). */
#define TEMPLATES_IMAGE_MAX_LAYERS 128

struct cJSON;
struct err;
struct template_build;
struct template_config;
struct templates_image;

/* 400 text in err for fromImageRegistry that is not {type: "registry",
 * username, password} (AWS and GCP registries are refused by name). 0 ok. */
int templates_image_check(const struct cJSON *request, struct err *err);
/* The registry password leaves a request (zeroed, then removed with
 * fromImageRegistry): a build keeps no credential once its pull has its own. */
void templates_image_forget_credentials(struct cJSON *request);

/* Called on the loop: err NULL once cfg holds the image's stack;
 * lacks_user: its /etc/passwd has no account `user` (templates_accounts.h
 * provisions it). */
typedef void (*templates_image_done)(void *ctx, const struct err *err, bool lacks_user);
/* Starts pulling the request's fromImage for build b; done fills cfg (its
 * base, layers, envs, workdir, user) and logs what the pull did. NULL with
 * err when it cannot start. */
struct templates_image *templates_image_start(struct template_build *b, const struct cJSON *request,
	struct template_config *cfg, templates_image_done done, void *ctx, struct err *err);
/* Stops the pull; done is not called. */
void templates_image_cancel(struct templates_image *t);

#endif
