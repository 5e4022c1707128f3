/* What the backend reads of an image: skopeo inspect's summary (platform,
 * layer sizes, the manifest's digest) and the image's config (platform,
 * diff ids, Env, WorkingDir). Pure functions over cJSON. */
#ifndef E2B_BACKEND_IMAGES_CONFIG_H
#define E2B_BACKEND_IMAGES_CONFIG_H

#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct err;

/* The OCI name of the machine's architecture ("amd64", "arm64", ...). */
const char *images_config_host_arch(void);
/* 0 when os/arch (the config's "os"/"architecture", or inspect's
 * "Os"/"Architecture") are linux and the machine's; else -1 with err
 * ("image 'x' is for linux/arm64, not linux/amd64"). */
int images_config_check_platform(const struct cJSON *doc, const char *shown, struct err *err);
/* An image index (OCI) or manifest list (Docker): the digest of its
 * linux/<this machine's arch> manifest, or NULL with err naming the
 * platforms it has. A pointer into index. */
const char *images_config_pick(const struct cJSON *index, const char *shown, struct err *err);
/* A manifest's layers: their count, and the sum of their sizes in *bytes;
 * -1 with err for a manifest that is not schema 2 with a config. */
int images_config_layers(const struct cJSON *manifest, double *bytes, struct err *err);
/* The config's rootfs.diff_ids, checked ("sha256:" and 64 lowercase hex
 * digits each, at least one): a new array, or NULL with err. */
struct cJSON *images_config_diff_ids(const struct cJSON *config, struct err *err);
/* The config's Env as E2B reads it: "KEY=VALUE" entries, trimmed, those
 * without '=' or with an empty key or value left out. A new object. */
struct cJSON *images_config_envs(const struct cJSON *config);
/* The config's WorkingDir when it is an absolute path, else NULL (a
 * pointer into config). */
const char *images_config_workdir(const struct cJSON *config);

#endif
