/* One pull, as the forked helper runs it (images.h): for each registry the
 * reference may come from (a Docker Hub name: the mirrors, then Docker Hub
 * unless it is off), skopeo inspect (platform, sizes, the manifest's digest)
 * and inspect --config (diff ids), then, for the layers the store lacks,
 * skopeo copy into an OCI layout, each layer unpacked as it downloads
 * (images_follow.h) or else from its blob (images_unpack_layer), and
 * published as a new layer. Writes result.json in the scratch directory.
 * Blocking. */
#ifndef E2B_BACKEND_IMAGES_PULL_H
#define E2B_BACKEND_IMAGES_PULL_H

#include "images/images.h"
#include "images/images_ref.h"

struct err;

#define IMAGES_MAX_HOSTS (IMAGES_MAX_MIRRORS + 1)

struct images_pull {
	struct images_pull *next;
	struct images_ref ref;
	char shown[IMAGES_REF_MAX]; /* the reference as given */
	char hosts[IMAGES_MAX_HOSTS][IMAGES_HOST_MAX];
	bool plain_http[IMAGES_MAX_HOSTS];
	size_t host_count;
	char *username, *password;
	char origin[64];
	int max_layers;
	uint64_t max_bytes;
	char *scratch; /* the store's scratch directory */
	images_pull_done done;
	void *ctx;
	bool cancelled;
};

/* The helper's job (store_helper_job): 0, or -1 with err. */
int images_pull_run(void *arg, struct err *err);

#endif
