/* volumeMounts of a create request ([{name, path}]): each volume named must
 * exist, each path be an absolute, clean path other than "/", used once.
 * Calls volumes/, runtime/ (is there isolation to mount into?), http/. */
#ifndef E2B_BACKEND_API_VOLUME_MOUNTS_H
#define E2B_BACKEND_API_VOLUME_MOUNTS_H

#include "http/http_body.h"

struct cJSON;
struct volumes;

#define API_VOLUME_MOUNTS_MAX 16
#define API_VOLUME_MOUNT_PATH_MAX 1024

/* *out: NULL when absent, else [{name, volumeID, path}] (the caller deletes
 * it). 0, or -1 with err (400). */
int api_volume_mounts_read(const struct cJSON *body, const struct volumes *vs, struct cJSON **out,
	struct err *err);
/* [{name, path}] of a sandbox's mounts, E2B's SandboxVolumeMount list. */
struct cJSON *api_volume_mounts_json(const struct cJSON *mounts);

#endif
