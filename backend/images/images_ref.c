/* Image references (images_ref.h), read the way Docker's distribution
 * reference grammar reads them. */
#include "images/images_ref.h"

#include "lib/err.h"

#include <stdio.h>
#include <string.h>

static bool lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* One component: [a-z0-9]+ joined by '.', '_', '__' or runs of '-'. */
static bool component_ok(const char *c, size_t n)
{
	size_t i = 0;
	while (i < n) {
		size_t run = 0;
		while (i + run < n && lower_alnum(c[i + run]))
			run++;
		if (run == 0)
			return false;
		i += run;
		if (i == n)
			return true;
		size_t sep = 0;
		while (i + sep < n && c[i + sep] == '-')
			sep++;
		if (sep == 0)
			sep = c[i] == '.' ? 1 : c[i] == '_' ? (i + 1 < n && c[i + 1] == '_' ? 2 : 1) : 0;
		if (sep == 0)
			return false;
		i += sep;
	}
	return false; /* ended on a separator */
}

/* Components separated by '/'. */
static bool path_ok(const char *p)
{
	for (;;) {
		size_t n = strcspn(p, "/");
		if (!component_ok(p, n))
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

static bool host_ok(const char *h)
{
	size_t n = strlen(h);
	if (n == 0 || n >= IMAGES_HOST_MAX)
		return false;
	const char *port = NULL;
	if (h[0] == '[') {
		const char *close = strchr(h, ']');
		if (!close || close == h + 1 || (close[1] && close[1] != ':'))
			return false;
		for (const char *c = h + 1; c < close; c++)
			if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') ||
				    (*c >= 'A' && *c <= 'F') || *c == ':'))
				return false;
		port = close[1] ? close + 2 : NULL;
	} else {
		const char *colon = strchr(h, ':');
		for (const char *c = h; *c && c != colon; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
				    (*c >= '0' && *c <= '9') || *c == '.' || *c == '-'))
				return false;
		if (colon == h)
			return false;
		port = colon ? colon + 1 : NULL;
	}
	if (port) {
		size_t digits = strspn(port, "0123456789");
		if (digits == 0 || digits > 5 || port[digits])
			return false;
	}
	return true;
}

static bool tag_ok(const char *t)
{
	size_t n = strlen(t);
	if (n == 0 || n > 128 || t[0] == '.' || t[0] == '-')
		return false;
	for (const char *c = t; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			    *c == '_' || *c == '.' || *c == '-'))
			return false;
	return true;
}

static int bad(const char *text, const char *what, struct err *err)
{
	err_set(err, 0, "image reference '%.200s': %s", text, what);
	return -1;
}

int images_ref_parse(const char *text, struct images_ref *ref, struct err *err)
{
	char name[IMAGES_REF_MAX];
	memset(ref, 0, sizeof *ref);
	if (!text || !*text)
		return bad("", "empty", err);
	if (strlen(text) >= sizeof name)
		return bad(text, "too long", err);
	snprintf(name, sizeof name, "%s", text);
	char *at = strchr(name, '@');
	if (at) {
		*at = '\0';
		const char *d = at + 1;
		if (strncmp(d, "sha256:", 7) != 0 || strlen(d + 7) != 64 ||
			strspn(d + 7, "0123456789abcdef") != 64)
			return bad(text, "a digest must be sha256: and 64 lowercase hex digits", err);
		snprintf(ref->digest, sizeof ref->digest, "%s", d);
	}
	char *slash = strchr(name, '/');
	char *path = name;
	if (slash &&
		(memchr(name, '.', (size_t)(slash - name)) || memchr(name, ':', (size_t)(slash - name)) ||
			(slash - name == 9 && strncmp(name, "localhost", 9) == 0) || name[0] == '[')) {
		*slash = '\0';
		if (!host_ok(name))
			return bad(text, "the registry host is malformed", err);
		snprintf(ref->host, sizeof ref->host, "%.255s",
			strcmp(name, "index.docker.io") == 0 ? IMAGES_DOCKER_HUB : name);
		path = slash + 1;
	} else {
		snprintf(ref->host, sizeof ref->host, "%s", IMAGES_DOCKER_HUB);
	}
	char *last = strrchr(path, '/');
	char *colon = strchr(last ? last : path, ':');
	if (colon) {
		*colon = '\0';
		if (!tag_ok(colon + 1))
			return bad(text, "a tag is 1 to 128 of [A-Za-z0-9_.-], not starting with '.' or '-'",
				err);
		snprintf(ref->tag, sizeof ref->tag, "%s", colon + 1);
	} else if (!ref->digest[0]) {
		snprintf(ref->tag, sizeof ref->tag, "latest");
	}
	if (!path_ok(path))
		return bad(text,
			"the repository must be lowercase letters and digits, in parts joined by "
			"'.', '_' or '-' and separated by '/'",
			err);
	bool hub = strcmp(ref->host, IMAGES_DOCKER_HUB) == 0;
	int n = snprintf(ref->path, sizeof ref->path, "%s%s", hub && !strchr(path, '/') ? "library/" : "",
		path);
	if (n < 0 || (size_t)n >= sizeof ref->path)
		return bad(text, "too long", err);
	return 0;
}

bool images_ref_is_docker_hub(const struct images_ref *ref)
{
	return strcmp(ref->host, IMAGES_DOCKER_HUB) == 0;
}

int images_ref_transport(const struct images_ref *ref, const char *host, char *out, size_t len)
{
	int n = ref->digest[0] ? snprintf(out, len, "docker://%s/%s@%s", host, ref->path, ref->digest)
			       : snprintf(out, len, "docker://%s/%s:%s", host, ref->path, ref->tag);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int images_mirror_parse(const char *url, char host[IMAGES_HOST_MAX], bool *plain_http)
{
	const char *h = url;
	*plain_http = false;
	if (strncmp(url, "http://", 7) == 0) {
		h = url + 7;
		*plain_http = true;
	} else if (strncmp(url, "https://", 8) == 0) {
		h = url + 8;
	}
	size_t n = strlen(h);
	if (n > 0 && h[n - 1] == '/')
		n--;
	if (n == 0 || n >= IMAGES_HOST_MAX || memchr(h, '/', n))
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	return host_ok(host) ? 0 : -1;
}

bool images_host_is_loopback(const char *host)
{
	size_t n = strcspn(host, host[0] == '[' ? "]" : ":");
	if (host[0] == '[')
		return strncmp(host, "[::1]", 5) == 0;
	if (n == 9 && strncmp(host, "localhost", 9) == 0)
		return true;
	if (strncmp(host, "127.", 4) != 0)
		return false;
	int dots = 0;
	for (size_t i = 4; i < n; i++) {
		if (host[i] == '.')
			dots++;
		else if (host[i] < '0' || host[i] > '9')
			return false;
	}
	return dots == 2;
}
