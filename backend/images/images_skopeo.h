/* Running Debian's skopeo from a forked helper: its arguments, an
 * environment of its own (a private HOME and temporary directory, an empty
 * registries.conf, so nothing of the host's container configuration or
 * credentials applies), the registry credentials as an auth file that is
 * never on disk (a memfd, /dev/fd/3 in skopeo, not on its command line),
 * its standard output, and its error message. Blocking. Calls lib/. */
#ifndef E2B_BACKEND_IMAGES_SKOPEO_H
#define E2B_BACKEND_IMAGES_SKOPEO_H

#include <stddef.h>

struct err;

#define IMAGES_SKOPEO_AUTHFILE "/dev/fd/3"

struct images_skopeo {
	const char *home; /* a private directory: HOME, TMPDIR, registries.conf */
	int auth_fd;      /* a containers auth.json (images_skopeo_auth), or -1 */
	int timeout_s;    /* skopeo is killed past it */
	/* While skopeo runs, on_watch(watch_ctx) is called whenever watch_fd
	 * is readable (on_watch NULL: nothing watched). */
	int watch_fd;
	void (*on_watch)(void *ctx);
	void *watch_ctx;
};

/* A memfd holding {"auths":{host:{"auth":base64(user:password)}}}, or -1
 * with errno. The caller closes it. */
int images_skopeo_auth(const char *host, const char *username, const char *password);
/* Runs skopeo with args (NULL-terminated, without "skopeo"). 0 when it
 * exited 0, with its standard output in *out (malloc'd, NUL-terminated, at
 * most 8 MiB); else -1 with its error message in err (the text of its
 * msg="..." when it has one). */
int images_skopeo_run(const struct images_skopeo *how, const char *const *args, char **out, struct err *err);

#endif
