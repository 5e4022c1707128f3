/* libFuzzer target: the backend's image reference and registry mirror
 * parsers (backend/images/images_ref.c), which read what a template build
 * request names. Any text: no crash, every field ends inside its array, a
 * refusal says why; an accepted reference has a host and a path, a tag or a
 * well-formed digest, and skopeo's name for it (when within the length a
 * request may write) reads back as the same reference. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "images/images_ref.h"
#include "lib/err.h"

#include "fuzz_require.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int ended(const char *field, size_t cap)
{
	return memchr(field, '\0', cap) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[1200];
	if (size >= sizeof text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	struct images_ref ref;
	struct err why;
	err_clear(&why);
	if (images_ref_parse(text, &ref, &why) != 0) {
		REQUIRE(why.msg[0] && ended(why.msg, sizeof why.msg), "refused \"%s\" without a reason",
			text);
	} else {
		REQUIRE(ended(ref.host, sizeof ref.host) && ended(ref.path, sizeof ref.path) &&
				ended(ref.tag, sizeof ref.tag) && ended(ref.digest, sizeof ref.digest),
			"a field of \"%s\" runs past its array", text);
		REQUIRE(ref.host[0] && ref.path[0], "\"%s\": no host or path", text);
		REQUIRE(ref.tag[0] || ref.digest[0], "\"%s\": neither tag nor digest", text);
		REQUIRE(!ref.digest[0] ||
				(strncmp(ref.digest, "sha256:", 7) == 0 && strlen(ref.digest) == 71),
			"\"%s\": digest '%s'", text, ref.digest);
		char name[2048];
		if (images_ref_transport(&ref, ref.host, name, sizeof name) == 0) {
			REQUIRE(strncmp(name, "docker://", 9) == 0, "\"%s\": transport '%s'", text, name);
		}
		/* The full name of a short one (docker.io/library/ added) may pass the
     * limit on what a request may write: read back only what fits it. */
		if (images_ref_transport(&ref, ref.host, name, sizeof name) == 0 &&
			strlen(name + 9) < IMAGES_REF_MAX) {
			struct images_ref again;
			struct err why2;
			REQUIRE(images_ref_parse(name + 9, &again, &why2) == 0,
				"\"%s\": '%s' does not read back: %s", text, name + 9, why2.msg);
			REQUIRE(strcmp(again.host, ref.host) == 0 && strcmp(again.path, ref.path) == 0 &&
					strcmp(again.digest, ref.digest) == 0 &&
					(ref.digest[0] || strcmp(again.tag, ref.tag) == 0),
				"\"%s\": '%s' reads back as another reference", text, name + 9);
		}
		(void)images_ref_is_docker_hub(&ref);
	}

	char host[IMAGES_HOST_MAX];
	bool plain = false;
	if (images_mirror_parse(text, host, &plain) == 0)
		REQUIRE(host[0] && ended(host, sizeof host), "mirror \"%s\"", text);
	(void)images_host_is_loopback(text);
	return 0;
}
