/* template_context.c — see template_context.h. */
#include "template_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "errors.h"
#include "sha256.h"
#include "targz.h"

int e2bw_context_path(e2bw_buf *out, const char *path)
{
	if (path[0] == '/')
		return -1;
	size_t start = out->len;
	int rc = e2bw_buf_append(out, "", 0);
	for (const char *p = path; *p && !rc;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (out->len == start)
				return -1; /* leaves the context */
			while (out->len > start && out->data[out->len - 1] != '/')
				out->len--;
			if (out->len > start)
				out->len--; /* the '/' before the segment */
			out->data[out->len] = '\0';
		} else if (n && !(n == 1 && p[0] == '.')) {
			rc = (out->len > start && e2bw_buf_append_char(out, '/')) ||
				e2bw_buf_append(out, p, n);
		}
		p += n + (p[n] == '/');
	}
	return rc ? -2 : 0;
}

/* A stable merge sort (musl's qsort is 1.6 KB of core.wasm). -1 when out
 * of memory. */
static int sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *a = base, *tmp = malloc(n * size + 1);
	if (!tmp)
		return -1;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n,
			       hi = lo + 2 * width < n ? lo + 2 * width : n, i = lo, j = mid, k = lo;
			while (i < mid || j < hi) {
				int left = j >= hi || (i < mid && cmp(a + i * size, a + j * size) <= 0);
				memcpy(tmp + k++ * size, a + (left ? i++ : j++) * size, size);
			}
		}
		memcpy(a, tmp, n * size);
	}
	free(tmp);
	return 0;
}

/* Go's filepath.Match, which Docker's COPY uses: * and ? never match a
 * '/'; [a-z], [^a-z] (or [!a-z]) classes; \ escapes. One backtracking
 * point, so no pattern takes more than length x length steps. */
static int one(const char **pp, char c)
{
	const char *p = *pp;
	int hit;
	if (*p == '?') {
		hit = c != '/';
	} else if (*p == '[') {
		int neg = p[1] == '^' || p[1] == '!';
		hit = 0;
		for (p += 1 + neg; *p && (*p != ']' || p == *pp + 1 + neg); p++) {
			char lo = *p == '\\' && p[1] ? *++p : *p, hi = lo;
			if (p[1] == '-' && p[2] && p[2] != ']') {
				p += 2;
				hi = *p == '\\' && p[1] ? *++p : *p;
			}
			hit |= (unsigned char)c >= (unsigned char)lo && (unsigned char)c <= (unsigned char)hi;
		}
		if (!*p)
			return 0; /* no closing ']': a bad pattern matches nothing */
		hit = hit != neg && c != '/';
	} else {
		if (*p == '\\' && p[1])
			p++;
		hit = *p == c;
	}
	*pp = p + 1;
	return hit;
}

static int glob(const char *p, const char *s)
{
	const char *star_p = NULL, *star_s = NULL;
	while (*s) {
		const char *q = p;
		if (*p == '*') {
			star_p = ++p;
			star_s = s;
		} else if (*p && one(&q, *s)) {
			p = q;
			s++;
		} else if (star_p && *star_s != '/') {
			p = star_p;
			s = ++star_s;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

static const char *path_of(const cJSON *item)
{
	return cJSON_GetObjectItemCaseSensitive(item, "path")->valuestring;
}

/* Orders paths so that a directory's contents follow it at once ('/' sorts
 * first): a path that is also a directory of another is then a neighbour. */
static int tree_order(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)path_of(*(const cJSON *const *)a);
	const unsigned char *y = (const unsigned char *)path_of(*(const cJSON *const *)b);
	for (;; x++, y++) {
		unsigned cx = *x == '/' ? 1 : *x, cy = *y == '/' ? 1 : *y;
		if (cx != cy || !cx)
			return (int)cx - (int)cy;
	}
}

static cJSON *item_error(int i, const char *member, const char *what, int *oom)
{
	char field[64];
	snprintf(field, sizeof field, "context[%d].%s", i, member);
	cJSON *e = e2bw_error_set_str(e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid params: '%s' %s",
					      field, what),
		"field", field);
	if (!e)
		*oom = 1;
	return e;
}

/* What is wrong with a context item (its member and how), or NULL. */
static const char *item_problem(const cJSON *item, const char **member)
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(item, "path");
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(item, "content");
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(item, "mode");
	*member = "path";
	if (!cJSON_IsObject(item))
		return "is missing: each context item is {path, content (base64), mode?}";
	if (!cJSON_IsString(path) || !path->valuestring[0])
		return "must be a non-empty relative path";
	*member = "content";
	if (!cJSON_IsString(content))
		return "must be the file's bytes in base64";
	if (!e2bw_base64_valid(content->valuestring, strlen(content->valuestring)))
		return "is not base64";
	*member = "mode";
	if (mode && !cJSON_IsNull(mode) &&
		!(cJSON_IsNumber(mode) && mode->valuedouble >= 0 && mode->valuedouble <= 07777 &&
			mode->valuedouble == (int)mode->valuedouble))
		return "must be POSIX permission bits: an integer from 0 to 0o7777 (4095)";
	return NULL;
}

static cJSON *check_item(cJSON *item, int i, int *oom)
{
	const char *member, *problem = item_problem(item, &member);
	if (problem)
		return item_error(i, member, problem, oom);
	cJSON *path = cJSON_GetObjectItemCaseSensitive(item, "path");
	e2bw_buf norm = {0};
	int rc = e2bw_context_path(&norm, path->valuestring);
	cJSON *error = NULL;
	if (rc == -1)
		error = item_error(i, "path",
			"must stay inside the context: relative, and no '..' that leaves it", oom);
	else if (rc == 0 && !norm.data[0])
		error = item_error(i, "path", "must name a file, not the context itself", oom);
	else if (rc == 0 && !e2bw_tar_fits(norm.data))
		error = item_error(i, "path",
			"is too long for the upload's tar format (at most 100 bytes after the last '/', 255 in all)",
			oom);
	else if (rc == 0)
		cJSON_SetValuestring(path, norm.data); /* never longer: in place */
	else
		*oom = 1;
	e2bw_buf_free(&norm);
	return error;
}

cJSON *e2bw_context_check(cJSON *context, int *oom)
{
	int n = cJSON_GetArraySize(context);
	cJSON *item, *error = NULL;
	int i = 0;
	cJSON_ArrayForEach(item, context) {
		if ((error = check_item(item, i++, oom)) || *oom)
			return error;
	}
	if (n < 2)
		return NULL;
	const cJSON **sorted = malloc((size_t)n * sizeof *sorted);
	if (!sorted) {
		*oom = 1;
		return NULL;
	}
	i = 0;
	cJSON_ArrayForEach(item, context)
		sorted[i++] = item;
	int found = 0;
	if (sort(sorted, (size_t)n, sizeof *sorted, tree_order)) {
		free(sorted);
		*oom = 1;
		return NULL;
	}
	for (i = 0; i + 1 < n && !found; i++) {
		const char *a = path_of(sorted[i]), *b = path_of(sorted[i + 1]);
		size_t la = strlen(a);
		found = 1;
		if (!strcmp(a, b))
			error = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
				"Invalid params: context path '%.200s' appears twice", a);
		else if (!strncmp(a, b, la) && b[la] == '/')
			error = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
				"Invalid params: context path '%.200s' is a file and also a directory of '%.200s'",
				a, b);
		else
			found = 0;
	}
	free(sorted);
	error = e2bw_error_set_str(error, "field", "context");
	if (found && !error)
		*oom = 1;
	return error;
}

/* --- selection ----------------------------------------------------------- */

typedef struct list {
	e2bw_context_entry *e;
	size_t n, cap;
	int oom;
} list;

static void add(list *l, const char *path, size_t len, const cJSON *file)
{
	if (l->oom)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		e2bw_context_entry *e = realloc(l->e, cap * sizeof *e);
		if (!e) {
			l->oom = 1;
			return;
		}
		l->e = e;
		l->cap = cap;
	}
	char *copy = malloc(len + 1);
	if (!copy) {
		l->oom = 1;
		return;
	}
	memcpy(copy, path, len);
	copy[len] = '\0';
	l->e[l->n].path = copy;
	l->e[l->n++].file = file;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const e2bw_context_entry *)a)->path, ((const e2bw_context_entry *)b)->path);
}

/* Sorted, each directory once (a file path is unique: e2bw_context_check). */
static void sort_unique(list *l)
{
	if (l->oom || !l->n)
		return;
	if (sort(l->e, l->n, sizeof *l->e, by_path)) {
		l->oom = 1;
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (k && !strcmp(l->e[k - 1].path, l->e[i].path))
			free(l->e[i].path);
		else
			l->e[k++] = l->e[i];
	}
	l->n = k;
}

/* Every file and every directory of the context, the context itself ("")
 * included. */
static void everything(const cJSON *context, list *all)
{
	const cJSON *item;
	add(all, "", 0, NULL);
	cJSON_ArrayForEach(item, context) {
		const char *p = path_of(item);
		for (const char *slash = strchr(p, '/'); slash; slash = strchr(slash + 1, '/'))
			add(all, p, (size_t)(slash - p), NULL);
		add(all, p, strlen(p), item);
	}
	sort_unique(all);
}

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !n ? path[0] != '\0' : !strncmp(path, dir, n) && path[n] == '/';
}

int e2bw_context_select(const cJSON *context, const char *src, e2bw_context_entry **out, size_t *n)
{
	list all = {0}, picked = {0};
	e2bw_buf norm = {0};
	*out = NULL;
	*n = 0;
	int rc = e2bw_context_path(&norm, src);
	if (rc) {
		e2bw_buf_free(&norm);
		return rc == -2 ? -1 : 0; /* -1: names nothing inside the context */
	}
	everything(context, &all);
	int pattern = strpbrk(norm.data, "*?[") != NULL;
	for (size_t i = 0; i < all.n && !all.oom; i++) {
		const e2bw_context_entry *c = &all.e[i];
		int hit = pattern ? glob(norm.data, c->path) && c->path[0] : !strcmp(norm.data, c->path);
		if (!hit)
			continue;
		add(&picked, c->path, strlen(c->path), c->file);
		for (size_t k = 0; !c->file && k < all.n; k++)
			if (under(all.e[k].path, c->path))
				add(&picked, all.e[k].path, strlen(all.e[k].path), all.e[k].file);
	}
	sort_unique(&picked);
	int oom = all.oom || picked.oom;
	e2bw_context_entries_free(all.e, all.n);
	e2bw_buf_free(&norm);
	if (oom) {
		e2bw_context_entries_free(picked.e, picked.n);
		return -1;
	}
	*out = picked.e;
	*n = picked.n;
	return 0;
}

void e2bw_context_entries_free(e2bw_context_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].path);
	free(e);
}

/* --- hash and archive -------------------------------------------------------- */

static unsigned mode_of(const e2bw_context_entry *e)
{
	const cJSON *mode = e->file ? cJSON_GetObjectItemCaseSensitive(e->file, "mode") : NULL;
	if (!e->file)
		return E2BW_CONTEXT_DIR_MODE;
	return cJSON_IsNumber(mode) ? (unsigned)mode->valuedouble : E2BW_CONTEXT_FILE_MODE;
}

/* A file's bytes, decoded into b (reset first). */
static int bytes_of(const e2bw_context_entry *e, e2bw_buf *b)
{
	const char *content = cJSON_GetObjectItemCaseSensitive(e->file, "content")->valuestring;
	e2bw_buf_reset(b);
	return e2bw_buf_append(b, "", 0) || e2bw_base64_decode(b, content, strlen(content)) ? -1 : 0;
}

int e2bw_context_hash(const e2bw_context_entry *e, size_t n, const char *src, const char *dest, char hex[65])
{
	e2bw_sha256 h;
	e2bw_buf bytes = {0};
	char num[24];
	e2bw_sha256_init(&h);
	e2bw_sha256_update(&h, "COPY ", 5);
	e2bw_sha256_update(&h, src, strlen(src));
	e2bw_sha256_update(&h, " ", 1);
	e2bw_sha256_update(&h, dest, strlen(dest));
	for (size_t i = 0; i < n; i++) {
		e2bw_sha256_update(&h, e[i].path, strlen(e[i].path));
		if (e[i].file && bytes_of(&e[i], &bytes)) {
			e2bw_buf_free(&bytes);
			return -1;
		}
		/* st_mode: the type bits (regular file 0100000, directory 040000) and the permissions */
		snprintf(num, sizeof num, "%u", (e[i].file ? 0100000u : 040000u) | mode_of(&e[i]));
		e2bw_sha256_update(&h, num, strlen(num));
		snprintf(num, sizeof num, "%lu",
			(unsigned long)(e[i].file ? bytes.len : E2BW_CONTEXT_DIR_SIZE));
		e2bw_sha256_update(&h, num, strlen(num));
		if (e[i].file)
			e2bw_sha256_update(&h, bytes.data, bytes.len);
	}
	e2bw_buf_free(&bytes);
	uint8_t digest[32];
	e2bw_sha256_final(&h, digest);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	return 0;
}

int e2bw_context_targz(const e2bw_context_entry *e, size_t n, e2bw_buf *out)
{
	e2bw_buf tar = {0}, bytes = {0};
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (!e[i].path[0])
			continue; /* the context itself: its contents are relative to it */
		if (e[i].file && bytes_of(&e[i], &bytes))
			rc = -1;
		else
			rc = e2bw_tar_add(&tar, e[i].path, mode_of(&e[i]), (const uint8_t *)bytes.data,
				e[i].file ? bytes.len : 0, !e[i].file);
	}
	if (!rc)
		rc = e2bw_tar_end(&tar) || e2bw_gzip_stored(out, (const uint8_t *)tar.data, tar.len) ? -1 : 0;
	e2bw_buf_free(&tar);
	e2bw_buf_free(&bytes);
	return rc;
}
