/* Reading the Basic-auth user name (see envd_user.h). */
#include "envd_user.h"

#include "base64.h"

#include <event2/http.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int envd_basic_user(struct evhttp_request *req, char *out, size_t cap)
{
	out[0] = '\0';
	const char *h = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
	if (!h || strncasecmp(h, "Basic ", 6) != 0)
		return 0;
	uint8_t *raw;
	size_t len;
	if (base64_decode(h + 6, strlen(h + 6), &raw, &len) != 0)
		return 0;
	uint8_t *colon = memchr(raw, ':', len);
	int found = 0;
	if (colon && !memchr(raw, '\0', (size_t)(colon - raw))) {
		snprintf(out, cap, "%.*s", (int)(colon - raw), (const char *)raw);
		found = 1;
	}
	free(raw);
	return found;
}
