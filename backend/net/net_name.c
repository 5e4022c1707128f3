/* DNS names of the egress settings (net_name.h). */
#include "net/net_name.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

bool net_name_domain(const char *text, char *out, size_t cap)
{
	size_t n = strlen(text);
	if (n == 0 || n > 253 || n >= cap)
		return false;
	const char *name = strncmp(text, "*.", 2) == 0 ? text + 2 : text;
	size_t label = 0;
	for (const char *c = name;; c++) {
		if (*c == '.' || *c == '\0') {
			if (label == 0 || c[-1] == '-')
				return false;
			if (*c == '\0')
				break;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)*c) || (*c == '-' && label > 0)) || ++label > 63)
			return false;
	}
	for (size_t i = 0; i <= n; i++)
		out[i] = (char)tolower((unsigned char)text[i]);
	return true;
}

bool net_name_matches(const char *pattern, const char *host)
{
	if (strncmp(pattern, "*.", 2) != 0)
		return strcasecmp(pattern, host) == 0;
	size_t n = strlen(host), k = strlen(pattern) - 1; /* ".x.y" */
	return n > k && strcasecmp(host + n - k, pattern + 1) == 0;
}
