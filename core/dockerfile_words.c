/* dockerfile_words.c — see dockerfile_words.h. One scanner (scan) knows
 * Docker's quotes, escapes and variables; words, strings and shell-form
 * commands are its modes. */
#include "dockerfile_words.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json_add.h"

/* scan() flags */
enum {
	SPLIT = 1,                     /* into words (else one string) */
	KEEP_QUOTES = 2,               /* shell form: quotes and backslashes stay, for the shell */
	COLLAPSE = 4,                  /* runs of unquoted blanks become one space (as the SDK's words) */
	ARGS_ONLY = E2BW_DF_ARGS_ONLY, /* substitute ARG values only */
	NO_VARS = E2BW_DF_NO_VARS      /* substitute nothing */
};

int e2bw_dockerfile_name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		(!first && c >= '0' && c <= '9');
}

/* $NAME or ${NAME} at p: appends the value and returns the characters it
 * took, or 0 to leave the text as it is (not a variable, or none known). */
static size_t variable(const e2bw_df *d, const char *p, int flags, e2bw_buf *out)
{
	size_t start = p[1] == '{' ? 2 : 1, n = 0;
	while (e2bw_dockerfile_name_char(p[start + n], n == 0))
		n++;
	if (!n || (start == 2 && p[start + n] != '}'))
		return 0;
	char name[128];
	if (n >= sizeof name)
		return 0;
	memcpy(name, p + start, n);
	name[n] = '\0';
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(d->vars, name);
	if (!cJSON_IsString(v) || ((flags & ARGS_ONLY) && !cJSON_HasObjectItem(d->argvars, name)))
		return 0;
	return e2bw_buf_append_str(out, v->valuestring) ? 0 : start + n + (start == 2);
}

/* Docker's reading of an instruction's text: words (SPLIT) or one string,
 * quotes and escapes removed (or kept, for the shell), variables of this
 * stage substituted outside single quotes. Returns -1 when out of memory. */
static int scan(const e2bw_df *d, const char *s, int flags, cJSON *words, e2bw_buf *out)
{
	e2bw_buf w = {0};
	e2bw_buf *o = (flags & SPLIT) ? &w : out;
	int rc = e2bw_buf_append(o, "", 0), in_word = 0, blank = 0;
	char quote = 0;
	for (const char *p = s; *p && !rc; p++) {
		char c = *p;
		if (!quote && (c == ' ' || c == '\t')) {
			if (flags & SPLIT) {
				if (in_word)
					rc = !e2bw_push(words, cJSON_CreateString(w.data));
				e2bw_buf_reset(&w);
				rc |= e2bw_buf_append(&w, "", 0);
				in_word = 0;
			} else if (flags & COLLAPSE) {
				blank = in_word;
			} else {
				rc = e2bw_buf_append_char(o, c);
			}
			continue;
		}
		if (blank)
			rc = e2bw_buf_append_char(o, ' ');
		blank = 0;
		in_word = 1;
		int keep = flags & KEEP_QUOTES;
		if (quote == '\'' || (!quote && c == '\'')) {
			if (c == '\'')
				quote = quote ? 0 : '\'';
			if (c != '\'' || keep)
				rc |= e2bw_buf_append_char(o, c);
			continue;
		}
		if (c == '"') {
			quote = quote ? 0 : '"';
			if (keep)
				rc |= e2bw_buf_append_char(o, c);
			continue;
		}
		if (c == '\\' && p[1]) {
			/* unquoted, \x is x; in double quotes only \" \\ \$ are escapes */
			if (keep || (quote && !strchr("\"\\$", p[1])))
				rc |= e2bw_buf_append_char(o, c);
			rc |= e2bw_buf_append_char(o, *++p);
			continue;
		}
		size_t took = c == '$' && !(flags & NO_VARS) ? variable(d, p, flags, o) : 0;
		if (took)
			p += took - 1;
		else
			rc |= e2bw_buf_append_char(o, c);
	}
	if ((flags & SPLIT) && in_word && !rc)
		rc = !e2bw_push(words, cJSON_CreateString(w.data));
	e2bw_buf_free(&w);
	return rc ? -1 : 0;
}

cJSON *e2bw_dockerfile_words(e2bw_df *d, const char *s)
{
	cJSON *words = cJSON_CreateArray();
	if (!words || scan(d, s, SPLIT, words, NULL)) {
		cJSON_Delete(words);
		d->oom = 1;
		return NULL;
	}
	return words;
}

static char *string_of(e2bw_df *d, const char *s, int flags)
{
	e2bw_buf b = {0};
	if (scan(d, s, flags, NULL, &b)) {
		e2bw_buf_free(&b);
		d->oom = 1;
		return NULL;
	}
	size_t n;
	char *text = e2bw_buf_take(&b, &n);
	if (!text)
		d->oom = 1;
	return text;
}

cJSON *e2bw_dockerfile_exec_form(const char *s)
{
	if (*s != '[')
		return NULL;
	cJSON *a = cJSON_Parse(s);
	const cJSON *item;
	int ok = cJSON_IsArray(a);
	cJSON_ArrayForEach(item, a)
		ok &= cJSON_IsString(item);
	if (ok)
		return a;
	cJSON_Delete(a);
	return NULL;
}

/* argv as one shell command line: a word of safe characters as it is (so
 * ["python", "app.py"] is `python app.py`, as the SDK joins it), any other
 * single-quoted, so the command means what the exec form meant. */
static char *shell_join(e2bw_df *d, const cJSON *argv)
{
	e2bw_buf b = {0};
	const cJSON *item;
	int rc = e2bw_buf_append(&b, "", 0);
	cJSON_ArrayForEach(item, argv) {
		const char *s = item->valuestring;
		int safe = s[0] != '\0';
		for (const char *p = s; *p; p++)
			safe &= e2bw_dockerfile_name_char(*p, 0) || strchr("@%+=:,./-", *p) != NULL;
		if (b.len)
			rc |= e2bw_buf_append_char(&b, ' ');
		if (safe) {
			rc |= e2bw_buf_append_str(&b, s);
			continue;
		}
		rc |= e2bw_buf_append_char(&b, '\'');
		for (const char *p = s; *p; p++)
			rc |= *p == '\'' ? e2bw_buf_append_str(&b, "'\\''") : e2bw_buf_append_char(&b, *p);
		rc |= e2bw_buf_append_char(&b, '\'');
	}
	size_t n;
	char *text = rc ? NULL : e2bw_buf_take(&b, &n);
	e2bw_buf_free(&b);
	if (!text)
		d->oom = 1;
	return text;
}

char *e2bw_dockerfile_command(e2bw_df *d, const char *rest, int vars, int *exec)
{
	cJSON *argv = e2bw_dockerfile_exec_form(rest);
	*exec = argv != NULL;
	char *cmd = argv ? shell_join(d, argv) : string_of(d, rest, KEEP_QUOTES | COLLAPSE | vars);
	cJSON_Delete(argv);
	return cmd;
}

char *e2bw_dockerfile_string(e2bw_df *d, const char *s)
{
	return string_of(d, s, 0);
}
