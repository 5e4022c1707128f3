/* libFuzzer target: the sandbox init's reader of a command
 * (backend/runtime/init/init_command.c), what an INIT_SPAWN's memfd holds.
 * The first input byte says whether the header's size is set to the
 * input's (else it stays as given, and must match); the rest is the blob.
 * Any bytes: no crash, no read past them; a command read has as many
 * arguments, environment entries and paths as its header says, at least one
 * argument and one path, each a string that ends inside the blob, in order
 * after the working directory and the groups. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/init/init_command.h"

#include "fuzz_require.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* v has n strings, each inside [*from, end), one after the other. */
static void require_strings(char **v, uint32_t n, const char **from, const char *end)
{
	for (uint32_t i = 0; i < n; i++) {
		REQUIRE(v[i] == *from, "string %u is not where the previous one ended", i);
		size_t len = strnlen(v[i], (size_t)(end - v[i]));
		REQUIRE(v[i] + len < end, "string %u runs past the blob", i);
		*from = v[i] + len + 1;
	}
	REQUIRE(v[n] == NULL, "a vector of %u strings does not end with NULL", n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int fix_size = data[0] & 1;
	data++;
	size--;
	/* An exact-size copy, aligned as a mapping is: ASan sees any read past it. */
	char *blob = malloc(size ? size : 1);
	memcpy(blob, data, size);
	if (fix_size && size >= sizeof(uint32_t)) {
		uint32_t n = (uint32_t)size;
		memcpy(blob, &n, sizeof n);
	}
	struct init_command c;
	if (init_command_parse(blob, size, &c) == 0) {
		const struct init_spawn_blob *h = c.head;
		REQUIRE(h->size == size && h->argc > 0 && h->npaths > 0 &&
				h->ngroups <= INIT_SPAWN_GROUPS_MAX,
			"a header read that should not be: size %u of %zu, argc %u, npaths %u, ngroups %u",
			h->size, size, h->argc, h->npaths, h->ngroups);
		REQUIRE((const char *)c.groups == blob + sizeof *h, "groups not after the header");
		const char *end = blob + size;
		REQUIRE(c.cwd == blob + sizeof *h + h->ngroups * sizeof(uint32_t),
			"cwd not after the groups");
		const char *at = c.cwd;
		char *cwd[] = {(char *)(uintptr_t)c.cwd, NULL};
		require_strings(cwd, 1, &at, end);
		require_strings(c.argv, h->argc, &at, end);
		require_strings(c.envp, h->envc, &at, end);
		require_strings(c.paths, h->npaths, &at, end);
		init_command_free(&c);
	}
	free(blob);
	return 0;
}
