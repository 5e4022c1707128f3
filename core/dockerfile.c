/* dockerfile.c — see dockerfile.h. One pass over the logical lines (comments
 * dropped, `\` continuations joined); each instruction's words go through
 * one scanner that knows Docker's quotes, escapes and variables
 * (dockerfile_words.h). */
#include "dockerfile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "buf.h"
#include "dockerfile_words.h"
#include "errors.h"
#include "json_add.h"
#include "names.h"
#include "template_context.h"

/* What the SDK's fromDockerfile gives CMD/ENTRYPOINT as the ready check
 * (waitForTimeout(20_000)). */
#define READY_AFTER_CMD "sleep 20"

static cJSON *fail(e2bw_df *d, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
static cJSON *fail(e2bw_df *d, const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	cJSON *e = d->line ? e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid params: dockerfile line %d: %s",
				     d->line, what)
			   : e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid params: dockerfile: %s", what);
	e2bw_error_set_str(e, "field", "dockerfile");
	if (d->line)
		e2bw_error_set_num(e, "line", d->line);
	if (!e)
		d->oom = 1;
	return e;
}

static size_t blanks(const char *p)
{
	size_t n = 0;
	while (p[n] == ' ' || p[n] == '\t')
		n++;
	return n;
}

static int add_step(e2bw_df *d, const char *type, cJSON *args)
{
	cJSON *step = cJSON_CreateObject();
	if (!args || !step || !cJSON_AddStringToObject(step, "type", type)) {
		cJSON_Delete(args);
		cJSON_Delete(step);
		d->oom = 1;
		return -1;
	}
	/* e2bw_add and e2bw_push take what they are given, even when they fail */
	if (!e2bw_add(step, "args", args) || !cJSON_AddFalseToObject(step, "force")) {
		cJSON_Delete(step);
		d->oom = 1;
		return -1;
	}
	if (!e2bw_push(d->steps, step) || !e2bw_push(d->lines, cJSON_CreateNumber(d->line))) {
		d->oom = 1;
		return -1;
	}
	return 0;
}

/* A step whose args are the given strings (NULL-terminated). */
static int add_simple(e2bw_df *d, const char *type, const char *a, const char *b)
{
	cJSON *args = cJSON_CreateArray();
	if (args && a)
		e2bw_push(args, cJSON_CreateString(a));
	if (args && b)
		e2bw_push(args, cJSON_CreateString(b));
	return add_step(d, type, args);
}

/* --- instructions ------------------------------------------------------- */

static cJSON *do_from(e2bw_df *d, const char *rest)
{
	if (d->froms++)
		return fail(d, "a second FROM: multi-stage builds are not supported (E2B builds one stage)");
	if (rest[0] == '-' && rest[1] == '-')
		return fail(d,
			"FROM takes no flags here ('%.40s'): the provider builds for its own architecture",
			rest);
	cJSON *w = e2bw_dockerfile_words(d, rest);
	int n = cJSON_GetArraySize(w);
	cJSON *error = NULL;
	if (w && n != 1 && !(n == 3 && e2bw_name_equal_nocase(cJSON_GetArrayItem(w, 1)->valuestring, "as")))
		error = fail(d, "FROM takes an image and an optional 'AS name'");
	else if (w && !cJSON_AddStringToObject(d->plan, "fromImage", cJSON_GetArrayItem(w, 0)->valuestring))
		d->oom = 1;
	cJSON_Delete(w);
	/* ARGs before FROM belong to no stage: only `ARG NAME` brings one in */
	cJSON_Delete(d->globals);
	d->globals = d->vars;
	d->vars = cJSON_CreateObject();
	cJSON_Delete(d->argvars);
	d->argvars = cJSON_CreateObject();
	if (!d->vars || !d->argvars)
		d->oom = 1;
	if (error || d->oom)
		return error;
	/* E2B's step "base" is this line; the two steps the SDK puts first are
   * of no line */
	cJSON_SetNumberValue(cJSON_GetArrayItem(d->lines, 0), d->line);
	int line = d->line;
	d->line = 0;
	add_simple(d, "USER", "root", NULL);
	add_simple(d, "WORKDIR", "/", NULL);
	d->line = line;
	return NULL;
}

static void set_var(e2bw_df *d, const char *name, const char *value, int is_arg)
{
	cJSON *v = cJSON_CreateString(value);
	if (!v) {
		d->oom = 1;
		return;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(d->vars, name);
	e2bw_add(d->vars, name, v);
	cJSON_DeleteItemFromObjectCaseSensitive(d->argvars, name);
	if (is_arg)
		cJSON_AddTrueToObject(d->argvars, name);
}

static cJSON *do_arg(e2bw_df *d, const char *rest)
{
	cJSON *w = e2bw_dockerfile_words(d, rest), *error = NULL;
	const cJSON *word;
	if (w && !cJSON_GetArraySize(w))
		error = fail(d, "ARG needs a name");
	cJSON_ArrayForEach(word, w) {
		if (error)
			break;
		char *eq = strchr(word->valuestring, '=');
		if (eq)
			*eq = '\0';
		const char *name = word->valuestring;
		const cJSON *global = cJSON_GetObjectItemCaseSensitive(d->globals, name);
		if (!e2bw_dockerfile_name_char(name[0], 1))
			error = fail(d, "ARG '%.60s' is not a variable name", name);
		else if (cJSON_HasObjectItem(d->vars, name) && !cJSON_HasObjectItem(d->argvars, name))
			continue; /* an ENV wins */
		else if (eq)
			set_var(d, name, eq + 1, 1);
		else if (d->froms && cJSON_IsString(global))
			set_var(d, name, global->valuestring, 1);
		else
			error = fail(d,
				"ARG %.60s has no default, and templates.build takes no build arguments: give it one (ARG %.60s=value)",
				name, name);
	}
	cJSON_Delete(w);
	return error;
}

static cJSON *do_env(e2bw_df *d, const char *rest)
{
	cJSON *w = e2bw_dockerfile_words(d, rest), *args = cJSON_CreateArray(), *error = NULL;
	const cJSON *word;
	if (!w || !args)
		d->oom = 1;
	else if (!cJSON_GetArraySize(w))
		error = fail(d, "ENV needs KEY=value (or KEY value)");
	else if (!strchr(cJSON_GetArrayItem(w, 0)->valuestring, '=')) { /* ENV KEY rest of the line */
		const char *key = cJSON_GetArrayItem(w, 0)->valuestring;
		const char *value = rest + strcspn(rest, " \t");
		value += blanks(value);
		char *v = *value ? e2bw_dockerfile_string(d, value) : NULL;
		if (!*value)
			error = fail(d, "ENV %.60s needs a value", key);
		else if (v && e2bw_push(args, cJSON_CreateString(key)) &&
			e2bw_push(args, cJSON_CreateString(v)))
			set_var(d, key, v, 0);
		free(v);
	} else {
		cJSON_ArrayForEach(word, w) {
			char *eq = strchr(word->valuestring, '=');
			if (!eq || eq == word->valuestring) {
				error = fail(d,
					"ENV '%.60s' is not KEY=value (a line of KEY=value pairs, or one KEY and its value)",
					word->valuestring);
				break;
			}
			*eq = '\0';
			if (e2bw_push(args, cJSON_CreateString(word->valuestring)) &&
				e2bw_push(args, cJSON_CreateString(eq + 1)))
				set_var(d, word->valuestring, eq + 1, 0);
		}
	}
	cJSON_Delete(w);
	if (error || d->oom) {
		cJSON_Delete(args);
		return error;
	}
	add_step(d, "ENV", args);
	return NULL;
}

static int is_archive(const char *src)
{
	static const char *const ext[] = {".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tbz", ".tar.xz",
		".txz", ".tar.zst", ".tzst"};
	size_t n = strlen(src);
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		size_t k = strlen(ext[i]);
		if (n > k && e2bw_name_equal_nocase(src + n - k, ext[i]))
			return 1;
	}
	return 0;
}

/* --chown=, --chmod= (and --link, which changes nothing here) before the
 * sources; user and mode are the COPY step's third and fourth args. */
static cJSON *copy_flags(e2bw_df *d, const char **rest, const char *kw, char **user, char *mode)
{
	while ((*rest)[0] == '-' && (*rest)[1] == '-') {
		size_t n = strcspn(*rest, " \t");
		const char *flag = *rest + 2, *eq = memchr(flag, '=', n - 2);
		size_t name_len = eq ? (size_t)(eq - flag) : n - 2;
		char *value = NULL;
		if (eq) {
			char raw[512];
			snprintf(raw, sizeof raw, "%.*s", (int)(*rest + n - eq - 1), eq + 1);
			value = e2bw_dockerfile_string(d, raw);
			if (!value)
				return NULL;
		}
#define FLAG(s) (name_len == sizeof s - 1 && !memcmp(flag, s, name_len))
		cJSON *error = NULL;
		if (FLAG("chown") && value) {
			free(*user);
			*user = value;
			value = NULL;
		} else if (FLAG("chmod") && value) {
			unsigned bits = 0;
			size_t digits = 0;
			while (value[digits] >= '0' && value[digits] <= '7')
				bits = bits * 8 + (unsigned)(value[digits++] - '0');
			if (!digits || digits > 4 || value[digits])
				error = fail(d, "%s --chmod takes octal permission bits, e.g. --chmod=755",
					kw);
			else
				snprintf(mode, 5, "%04o", bits);
		} else if (FLAG("from")) {
			error = fail(d,
				"%s --from copies from another stage: multi-stage builds are not supported",
				kw);
		} else if (!FLAG("link")) {
			error = fail(d, "%s does not support the flag '%.*s' here (only --chown, --chmod)",
				kw, (int)(n > 40 ? 40 : n), *rest);
		}
#undef FLAG
		free(value);
		if (error)
			return error;
		*rest += n;
		*rest += blanks(*rest);
	}
	return NULL;
}

static cJSON *do_copy(e2bw_df *d, const char *rest, int is_add)
{
	const char *kw = is_add ? "ADD" : "COPY";
	char *user = NULL, mode[5] = "";
	cJSON *error = copy_flags(d, &rest, kw, &user, mode);
	if (!error && rest[0] == '<' && rest[1] == '<')
		error = fail(d, "%s with a heredoc is not supported", kw);
	cJSON *w = error || d->oom ? NULL : e2bw_dockerfile_exec_form(rest);
	if (!w && !error && !d->oom)
		w = e2bw_dockerfile_words(d, rest);
	int n = cJSON_GetArraySize(w);
	if (!error && w && n < 2)
		error = fail(d, "%s needs a source and a destination", kw);
	const char *dest = n >= 2 ? cJSON_GetArrayItem(w, n - 1)->valuestring : "";
	for (int i = 0; !error && !d->oom && i < n - 1; i++) {
		const char *src = cJSON_GetArrayItem(w, i)->valuestring;
		e2bw_buf norm = {0};
		int bad = e2bw_context_path(&norm, src);
		e2bw_buf_free(&norm);
		if (is_add && (strstr(src, "://") || !strncmp(src, "git@", 4)))
			error = fail(d, "ADD of a URL ('%.100s') is not supported: download it in a RUN step",
				src);
		else if (is_add && is_archive(src))
			error = fail(d,
				"ADD would unpack the archive '%.100s', which E2B's template steps cannot: COPY it and unpack it in a RUN step",
				src);
		else if (bad == -1)
			error = fail(d,
				"%s source '%.100s' is not inside the build context (absolute, or leaves it with '..')",
				kw, src);
		else if (bad == -2)
			d->oom = 1;
		else {
			cJSON *args = cJSON_CreateArray();
			e2bw_push(args, cJSON_CreateString(src));
			e2bw_push(args, cJSON_CreateString(dest));
			e2bw_push(args, cJSON_CreateString(user ? user : ""));
			e2bw_push(args, cJSON_CreateString(mode));
			add_step(d, "COPY", args);
		}
	}
	free(user);
	cJSON_Delete(w);
	return error;
}

/* WORKDIR and USER: the whole rest, unquoted, as the step's one arg. */
static cJSON *do_one(e2bw_df *d, const char *rest, const char *type, int *seen)
{
	char *value = e2bw_dockerfile_string(d, rest);
	cJSON *error = value && !value[0] ? fail(d, "%s needs a value", type) : NULL;
	if (value && !error)
		add_simple(d, type, value, NULL);
	free(value);
	*seen = 1;
	return error;
}

static cJSON *instruction(e2bw_df *d, const char *kw, const char *rest)
{
#define IS(s) e2bw_name_equal_nocase(kw, s)
	if (IS("ARG"))
		return do_arg(d, rest);
	if (IS("FROM"))
		return do_from(d, rest);
	if (!d->froms)
		return fail(d, "%.20s before FROM: only ARG may come first", kw);
	if (IS("RUN")) {
		int exec;
		if (rest[0] == '-' && rest[1] == '-')
			return fail(d, "RUN flags ('%.40s') are not supported", rest);
		if (rest[0] == '<' && rest[1] == '<')
			return fail(d,
				"RUN with a heredoc is not supported: write the script with COPY and run it");
		char *cmd = e2bw_dockerfile_command(d, rest, E2BW_DF_ARGS_ONLY, &exec);
		cJSON *error = cmd && !cmd[0] ? fail(d, "RUN needs a command") : NULL;
		if (cmd && !error)
			add_simple(d, "RUN", cmd, NULL);
		free(cmd);
		return error;
	}
	if (IS("COPY") || IS("ADD"))
		return do_copy(d, rest, IS("ADD"));
	if (IS("ENV"))
		return do_env(d, rest);
	if (IS("WORKDIR"))
		return do_one(d, rest, "WORKDIR", &d->workdir_set);
	if (IS("USER"))
		return do_one(d, rest, "USER", &d->user_set);
	if (IS("CMD") || IS("ENTRYPOINT")) {
		int exec, entry = IS("ENTRYPOINT");
		char *cmd = e2bw_dockerfile_command(d, rest, E2BW_DF_NO_VARS, &exec);
		char **slot = entry ? &d->entry : &d->cmd;
		free(*slot);
		*slot = cmd;
		if (entry)
			d->entry_exec = exec;
		return NULL;
	}
	/* no effect on the template's files or start: as the SDK, ignored */
	if (IS("EXPOSE") || IS("VOLUME") || IS("LABEL") || IS("MAINTAINER") || IS("STOPSIGNAL"))
		return NULL;
	if (IS("SHELL"))
		return fail(d, "SHELL is not supported: RUN steps run with /bin/sh -c");
	if (IS("HEALTHCHECK"))
		return fail(d, "HEALTHCHECK is not supported: give templates.build a ready_cmd");
	if (IS("ONBUILD"))
		return fail(d, "ONBUILD is not supported");
	return fail(d, "unknown instruction '%.40s'", kw);
#undef IS
}

/* One logical line: KEYWORD rest. */
static cJSON *logical_line(e2bw_df *d, char *text)
{
	char *kw = text + blanks(text);
	char *rest = kw + strcspn(kw, " \t");
	if (*rest)
		*rest++ = '\0';
	rest += blanks(rest);
	size_t n = strlen(rest);
	while (n && (rest[n - 1] == ' ' || rest[n - 1] == '\t'))
		rest[--n] = '\0';
	return instruction(d, kw, rest);
}

/* The start command: ENTRYPOINT, followed by CMD's arguments when the
 * ENTRYPOINT is the exec form (as Docker runs them), else CMD alone. */
static void finish(e2bw_df *d)
{
	e2bw_buf start = {0};
	int rc = e2bw_buf_append(&start, "", 0);
	if (d->entry)
		rc |= e2bw_buf_append_str(&start, d->entry);
	if (d->cmd && (!d->entry || d->entry_exec))
		rc |= (start.len && e2bw_buf_append_char(&start, ' ')) || e2bw_buf_append_str(&start, d->cmd);
	if (rc)
		d->oom = 1;
	else if (start.len &&
		(!cJSON_AddStringToObject(d->plan, "startCmd", start.data) ||
			!cJSON_AddStringToObject(d->plan, "readyCmd", READY_AFTER_CMD)))
		d->oom = 1;
	e2bw_buf_free(&start);
	d->line = 0;
	if (!d->user_set)
		add_simple(d, "USER", "user", NULL);
	if (!d->workdir_set)
		add_simple(d, "WORKDIR", "/home/user", NULL);
}

/* A parser directive `# escape=X` (at the top) with X other than `\`. */
static int other_escape(const char *p, size_t len)
{
	size_t i = 1 + blanks(p + 1);
	char word[7] = "";
	if (len >= i + 6)
		memcpy(word, p + i, 6);
	if (!e2bw_name_equal_nocase(word, "escape"))
		return 0;
	i += 6;
	i += blanks(p + i);
	if (i >= len || p[i] != '=')
		return 0;
	i += 1 + blanks(p + i + 1);
	return i < len && !(len - i == 1 && p[i] == '\\');
}

/* Physical lines into logical ones: comments and blank lines dropped (inside
 * a continuation too), a trailing `\` joins the next line. */
static cJSON *walk(e2bw_df *d, const char *text)
{
	e2bw_buf line = {0};
	cJSON *error = NULL;
	int continued = 0, number = 0, start = 0;
	if (!strncmp(text, "\xEF\xBB\xBF", 3))
		text += 3;
	for (const char *p = text; *p && !error && !d->oom;) {
		size_t len = strcspn(p, "\n");
		const char *next = p + len + (p[len] == '\n');
		number++;
		while (len && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		size_t lead = blanks(p);
		if (lead >= len || p[lead] == '#') {
			if (!start && lead < len && other_escape(p + lead, len - lead)) {
				d->line = number;
				error = fail(d,
					"only the default escape character '\\' is supported (a parser directive sets another)");
			}
			p = next;
			continue;
		}
		if (!continued) {
			e2bw_buf_reset(&line);
			start = number;
		}
		continued = p[len - 1] == '\\';
		if (e2bw_buf_append(&line, p, len - continued))
			d->oom = 1;
		p = next;
		if (continued || d->oom)
			continue;
		d->line = start;
		error = logical_line(d, line.data);
	}
	if (continued && !error && !d->oom) {
		d->line = start;
		error = logical_line(d, line.data);
	}
	e2bw_buf_free(&line);
	return error;
}

cJSON *e2bw_dockerfile_parse(const char *text, cJSON **plan, cJSON **lines)
{
	unsigned long failures = e2bw_alloc_failures();
	e2bw_df d = {0};
	d.plan = cJSON_CreateObject();
	d.steps = cJSON_AddArrayToObject(d.plan, "steps");
	d.lines = cJSON_CreateArray();
	d.vars = cJSON_CreateObject();
	d.argvars = cJSON_CreateObject();
	d.oom = !d.steps || !d.lines || !d.vars || !d.argvars;
	/* lines[0]: the FROM (E2B's step "base"); set when it comes */
	if (!d.oom && !e2bw_push(d.lines, cJSON_CreateNumber(0)))
		d.oom = 1;
	cJSON *error = d.oom ? NULL : walk(&d, text);
	if (!error && !d.oom && !d.froms)
		error = fail(&d, "there is no FROM instruction");
	if (!error && !d.oom)
		finish(&d);
	cJSON_Delete(d.vars);
	cJSON_Delete(d.argvars);
	cJSON_Delete(d.globals);
	free(d.entry);
	free(d.cmd);
	if (!error && !d.oom && e2bw_alloc_failures() == failures) {
		*plan = d.plan;
		*lines = d.lines;
		return NULL;
	}
	cJSON_Delete(d.plan);
	cJSON_Delete(d.lines);
	*plan = NULL;
	*lines = NULL;
	return error;
}
