/* Request heads: the routers' view of a request, and the gate's strict
 * parser and rebuilder (http_head.h). */
#include "http/http_head.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <strings.h>

void http_head_of_request(struct evhttp_request *req, struct http_head *out)
{
	out->method = evhttp_request_get_command(req);
	out->uri = evhttp_request_get_evhttp_uri(req);
	out->headers = evhttp_request_get_input_headers(req);
}

const char *http_head_path(const struct http_head *h)
{
	const char *path = h->uri ? evhttp_uri_get_path(h->uri) : NULL;
	return path ? path : "";
}

const char *http_head_query(const struct http_head *h)
{
	return h->uri ? evhttp_uri_get_query(h->uri) : NULL;
}

const char *http_head_find(const struct http_head *h, const char *name)
{
	return evhttp_find_header(h->headers, name);
}

long http_head_end(struct evbuffer *src, size_t *skip)
{
	size_t len = evbuffer_get_length(src);
	/* A few empty lines before a request line are ignored (RFC 9112, 2.2). */
	unsigned char first[8];
	ev_ssize_t got = evbuffer_copyout(src, first, sizeof first);
	size_t lead = 0;
	while (lead < (size_t)(got > 0 ? got : 0) && (first[lead] == '\r' || first[lead] == '\n'))
		lead++;
	*skip = lead;
	struct evbuffer_ptr start;
	evbuffer_ptr_set(src, &start, lead, EVBUFFER_PTR_SET);
	struct evbuffer_ptr crlf = evbuffer_search(src, "\n\r\n", 3, &start);
	struct evbuffer_ptr lf = evbuffer_search(src, "\n\n", 2, &start);
	long end = -1;
	if (crlf.pos >= 0)
		end = (long)crlf.pos + 3;
	if (lf.pos >= 0 && (end < 0 || (long)lf.pos + 2 < end))
		end = (long)lf.pos + 2;
	if (end >= 0)
		return end - (long)lead > HTTP_HEAD_MAX_BYTES ? -1 : end;
	return len - lead > HTTP_HEAD_MAX_BYTES ? -1 : 0;
}

static const struct {
	const char *name;
	enum evhttp_cmd_type type;
} methods[] = {
	{"GET", EVHTTP_REQ_GET},
	{"POST", EVHTTP_REQ_POST},
	{"HEAD", EVHTTP_REQ_HEAD},
	{"PUT", EVHTTP_REQ_PUT},
	{"DELETE", EVHTTP_REQ_DELETE},
	{"OPTIONS", EVHTTP_REQ_OPTIONS},
	{"TRACE", EVHTTP_REQ_TRACE},
	{"CONNECT", EVHTTP_REQ_CONNECT},
	{"PATCH", EVHTTP_REQ_PATCH},
};

/* "METHOD SP uri SP HTTP/1.x" as evhttp reads it (the URI may hold spaces). */
static int parse_request_line(char *line, struct http_head_parsed *h)
{
	size_t len = strlen(line);
	while (len > 0 && line[len - 1] == ' ')
		line[--len] = '\0';
	char *sp = strchr(line, ' ');
	char *last = strrchr(line, ' ');
	if (!sp || last == sp)
		return -1;
	size_t mlen = (size_t)(sp - line);
	bool known = false;
	for (size_t i = 0; i < sizeof methods / sizeof methods[0] && !known; i++) {
		if (strlen(methods[i].name) == mlen && strncmp(methods[i].name, line, mlen) == 0) {
			h->view.method = methods[i].type;
			known = true;
		}
	}
	const char *v = last + 1;
	if (!known || strncmp(v, "HTTP/", 5) != 0 || (v[5] != '0' && v[5] != '1') || v[6] != '.' ||
		v[7] < '0' || v[7] > '9' || v[8])
		return -1;
	char *uri = strndup(sp + 1, (size_t)(last - sp - 1));
	if (!uri)
		return -1;
	h->uri = evhttp_uri_parse_with_flags(uri, EVHTTP_URI_NONCONFORMANT);
	free(uri);
	if (!h->uri)
		return -1;
	h->line = strdup(line);
	return h->line ? 0 : -1;
}

static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		(c && strchr("!#$%&'*+-.^_`|~", c));
}

static int parse_header(char *line, struct evkeyvalq *headers)
{
	char *colon = strchr(line, ':');
	if (!colon || colon == line)
		return -1;
	for (char *p = line; p < colon; p++)
		if (!is_tchar(*p))
			return -1;
	*colon = '\0';
	char *value = colon + 1;
	value += strspn(value, " \t");
	size_t n = strlen(value);
	while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
		value[--n] = '\0';
	return evhttp_add_header(headers, line, value);
}

static bool has_token(const char *list, const char *token)
{
	size_t n = strlen(token);
	for (const char *p = list; p && *p;) {
		p += strspn(p, " \t,");
		size_t len = strcspn(p, ",");
		size_t trimmed = len;
		while (trimmed > 0 && (p[trimmed - 1] == ' ' || p[trimmed - 1] == '\t'))
			trimmed--;
		if (trimmed == n && strncasecmp(p, token, n) == 0)
			return true;
		p += len;
	}
	return false;
}

/* One Content-Length or one "Transfer-Encoding: chunked", never both. */
static int parse_framing(struct http_head_parsed *h)
{
	const char *cl = NULL, *te = NULL;
	int cl_count = 0, te_count = 0;
	for (struct evkeyval *kv = h->headers.tqh_first; kv; kv = kv->next.tqe_next) {
		if (strcasecmp(kv->key, "Content-Length") == 0) {
			cl = kv->value;
			cl_count++;
		} else if (strcasecmp(kv->key, "Transfer-Encoding") == 0) {
			te = kv->value;
			te_count++;
		}
	}
	if (cl_count > 1 || te_count > 1 || (cl && te))
		return -1;
	if (te) {
		if (strcasecmp(te, "chunked") != 0)
			return -1;
		http_framing_init(&h->framing, HTTP_FRAMING_CHUNKED, 0);
	} else if (cl) {
		size_t digits = strspn(cl, "0123456789");
		if (digits == 0 || digits > 18 || cl[digits])
			return -1;
		http_framing_init(&h->framing, HTTP_FRAMING_LENGTH, strtoull(cl, NULL, 10));
	} else {
		http_framing_init(&h->framing, HTTP_FRAMING_NONE, 0);
	}
	/* evhttp reads no body for these whatever the headers say. */
	if (h->view.method == EVHTTP_REQ_HEAD || h->view.method == EVHTTP_REQ_TRACE)
		http_framing_init(&h->framing, HTTP_FRAMING_NONE, 0);
	return 0;
}

static int parse_lines(char *text, struct http_head_parsed *h)
{
	char *line = text;
	for (bool first = true;; first = false) {
		char *nl = strchr(line, '\n');
		if (!nl)
			return -1;
		*nl = '\0';
		if (nl > line && nl[-1] == '\r')
			nl[-1] = '\0';
		if (!*line)
			return first ? -1 : 0;
		if (first ? parse_request_line(line, h) != 0
			  : (*line == ' ' || *line == '\t' || parse_header(line, &h->headers) != 0))
			return -1; /* obsolete folding (a line starting with blanks) included */
		line = nl + 1;
	}
}

int http_head_parse(struct evbuffer *src, size_t len, struct http_head_parsed *out)
{
	memset(out, 0, sizeof *out);
	TAILQ_INIT(&out->headers);
	out->view.headers = &out->headers;
	char *text = malloc(len + 1);
	if (!text)
		return -1;
	evbuffer_copyout(src, text, len);
	text[len] = '\0';
	int rc = strlen(text) != len ? -1 : parse_lines(text, out);
	free(text);
	if (rc == 0)
		rc = parse_framing(out);
	out->view.uri = out->uri;
	if (rc != 0)
		return -1;
	const char *conn = evhttp_find_header(&out->headers, "Connection");
	out->upgrade = evhttp_find_header(&out->headers, "Upgrade") && has_token(conn, "upgrade");
	const char *expect = evhttp_find_header(&out->headers, "Expect");
	out->expect_continue = expect && strcasecmp(expect, "100-continue") == 0;
	return 0;
}

void http_head_clear(struct http_head_parsed *h)
{
	evhttp_clear_headers(&h->headers);
	if (h->uri)
		evhttp_uri_free(h->uri);
	free(h->line);
	memset(h, 0, sizeof *h);
	TAILQ_INIT(&h->headers);
}

int http_head_rebuild(const struct http_head_parsed *h, uint64_t body_len, struct evbuffer *out)
{
	int rc = evbuffer_add_printf(out, "%s\r\n", h->line) < 0;
	for (struct evkeyval *kv = h->headers.tqh_first; kv; kv = kv->next.tqe_next) {
		if (strcasecmp(kv->key, "Content-Length") == 0 ||
			strcasecmp(kv->key, "Transfer-Encoding") == 0 || strcasecmp(kv->key, "Expect") == 0)
			continue;
		rc |= evbuffer_add_printf(out, "%s: %s\r\n", kv->key, kv->value) < 0;
	}
	if (h->view.method != EVHTTP_REQ_HEAD && h->view.method != EVHTTP_REQ_TRACE)
		rc |= evbuffer_add_printf(out, "Content-Length: %llu\r\n", (unsigned long long)body_len) < 0;
	rc |= evbuffer_add(out, "\r\n", 2) != 0;
	return rc ? -1 : 0;
}
