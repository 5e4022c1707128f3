/* images/ — images from OCI/Docker registries as layers of the store:
 * fromImage(ref) of a template build (docs/templates.md, "Images from
 * registries"). A pull runs in a forked helper: Debian's skopeo reads the
 * image's manifest and config, copies its blobs (verifying their digests)
 * into an OCI layout in a scratch directory of the store, and each layer
 * the store lacks is unpacked (images_unpack.h) while it downloads
 * (images_follow.h) into a layer whose id is its diff id, so images sharing layers share them here too and a pull of an
 * image whose layers are all in the store downloads no blob.
 * Owns: pulls in progress, the registry options (mirrors, Docker Hub on or
 * off, the size limit).
 * May call: store/ (scratch directories, publishing layers, helpers), lib/,
 * cJSON, libarchive, libevent; runs /usr/bin/skopeo.
 * templates/ calls it. */
#ifndef E2B_BACKEND_IMAGES_H
#define E2B_BACKEND_IMAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct err;
struct event_base;

#define IMAGES_MAX_MIRRORS 8
#define IMAGES_DEFAULT_MAX_MB 16384

struct images_options {
	const char *mirrors[IMAGES_MAX_MIRRORS]; /* --registry-mirror URLs, in order */
	size_t mirror_count;
	bool no_docker_hub; /* Docker Hub names go to the mirrors only */
	long max_image_mb;  /* an image's download, and its layers unpacked */
};

/* Keeps a copy of the options. 0, or -1 for a mirror that is no URL
 * (images_mirror_parse). */
int images_init(struct event_base *base, const struct images_options *opt);
void images_shutdown(void);

struct images_pull_spec {
	const char *ref;      /* as fromImage gives it */
	const char *username; /* NULL: anonymous */
	const char *password; /* never logged, recorded or repeated in an error */
	const char *origin;   /* layer.json's origin of the layers made */
	int max_layers;       /* more layers than this fail the pull */
};

/* What a pull gives a build: valid during the done call only. */
struct images_pulled {
	const struct cJSON *layers; /* layer ids, bottom first (each in the store) */
	const struct cJSON *envs;   /* the image's Env, E2B's way (images_config_envs) */
	const char *workdir;        /* the image's WorkingDir, or NULL */
	const char *user;           /* "user" when the image has that account, else "root" */
	bool lacks_user;            /* it has an /etc/passwd, without "user" (E2B would provision it) */
	const struct cJSON *log;    /* strings, what the pull did, for the build's log */
};

/* err NULL: the image is pulled (got); else got is NULL and err says why
 * (never with the password in it). */
typedef void (*images_pull_done)(void *ctx, const struct images_pulled *got, const struct err *err);
struct images_pull;

/* Starts pulling; done runs on the loop once, after which the pull is
 * gone. NULL with err when it cannot start (a malformed reference, a Docker
 * Hub name with Docker Hub off and no mirror, no helper). */
struct images_pull *images_pull_start(const struct images_pull_spec *spec, images_pull_done done, void *ctx,
	struct err *err);
/* Stops a pull: skopeo and the helper are killed, what they made is
 * removed; done is not called. */
void images_pull_cancel(struct images_pull *p);
/* Kills every pull (the backend stops): each done then runs, once its
 * helper has exited, with the error "the backend stopped". */
void images_cancel_all(void);

#endif
