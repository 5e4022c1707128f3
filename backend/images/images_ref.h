/* Image references as Docker reads them, [host[:port]/]path[:tag][@digest],
 * and the registries a pull of one goes to: Docker Hub names
 * ("python:3.12", "library/debian", "docker.io/x/y") are tried on the
 * --registry-mirror hosts first, then on Docker Hub itself unless that is
 * turned off (--no-docker-hub). Pure functions. */
#ifndef E2B_BACKEND_IMAGES_REF_H
#define E2B_BACKEND_IMAGES_REF_H

#include <stdbool.h>
#include <stddef.h>

struct err;

#define IMAGES_REF_MAX 512
#define IMAGES_HOST_MAX 256
#define IMAGES_DOCKER_HUB "docker.io"

struct images_ref {
	char host[IMAGES_HOST_MAX]; /* "docker.io" for Docker Hub */
	char path[IMAGES_REF_MAX];  /* "library/debian" */
	char tag[129];              /* "latest" when neither tag nor digest is given */
	char digest[80];            /* "sha256:<64 hex>", or "" */
};

/* 0, or -1 with err ("image reference 'X': ..."). */
int images_ref_parse(const char *text, struct images_ref *ref, struct err *err);
bool images_ref_is_docker_hub(const struct images_ref *ref);
/* skopeo's name of the image on host (the ref's own, or a mirror's):
 * docker://host/path@digest when there is a digest, else docker://host/path:tag.
 * -1 when it does not fit. */
int images_ref_transport(const struct images_ref *ref, const char *host, char *out, size_t len);

/* A mirror as --registry-mirror takes it: http://HOST[:PORT], https://HOST[:PORT]
 * or HOST[:PORT] (https), a trailing '/' allowed, no path. host gets
 * HOST[:PORT]; *plain_http whether it is spoken to without TLS. 0, or -1. */
int images_mirror_parse(const char *url, char host[IMAGES_HOST_MAX], bool *plain_http);
/* localhost, 127.0.0.0/8 or [::1], with or without a port: registries there
 * may answer in plain HTTP (as Docker allows for them). */
bool images_host_is_loopback(const char *host);

#endif
