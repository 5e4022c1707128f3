/* Reading the Basic-auth user name (see envd_user.h). */
#include "http/http_request.h"

#include "lib/base64.h"

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
	if (colon) {
		/* A NUL cannot be in an account name; C strings would cut it. */
		found = memchr(raw, '\0', (size_t)(colon - raw)) ? -1 : 1;
		if (found > 0)
			snprintf(out, cap, "%.*s", (int)(colon - raw), (const char *)raw);
	}
	free(raw);
	return found;
}
