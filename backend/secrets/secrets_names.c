/* Secret names and identifiers (secrets_names.h). */
#include "secrets/secrets_names.h"

#include "lib/err.h"
#include "lib/random.h"

#include <string.h>

static bool lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int secrets_names_canonical(const char *name, char out[SECRETS_NAME_MAX + 1], struct err *err)
{
	size_t n = strlen(name);
	if (n == 0 || n > SECRETS_NAME_MAX)
		return err_set(err, 400, "name must be 1 to 128 bytes");
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!lower_alnum(c) && c != '.' && c != '_' && c != '-')
			return err_set(err, 400,
				"name may hold only letters, digits, '.', '_' and '-' (letters are lower-cased)");
		out[i] = c;
	}
	out[n] = '\0';
	if (!lower_alnum(out[0]))
		return err_set(err, 400, "name must start with a letter or a digit");
	/* Identifiers and names share the {secretID} path segment. */
	if (strncmp(out, SECRETS_ID_PREFIX, strlen(SECRETS_ID_PREFIX)) == 0)
		return err_set(err, 400, "the prefix sec_ is reserved for secret identifiers");
	return 0;
}

bool secrets_names_is_id(const char *id)
{
	size_t prefix = strlen(SECRETS_ID_PREFIX);
	if (strlen(id) != SECRETS_ID_LEN || strncmp(id, SECRETS_ID_PREFIX, prefix) != 0)
		return false;
	for (size_t i = prefix; i < SECRETS_ID_LEN; i++)
		if (!lower_alnum(id[i]))
			return false;
	return true;
}

int secrets_names_new_id(char out[SECRETS_ID_LEN + 1])
{
	size_t prefix = strlen(SECRETS_ID_PREFIX);
	memcpy(out, SECRETS_ID_PREFIX, prefix);
	return random_lower_alnum(out + prefix, SECRETS_ID_RANDOM_LEN);
}
