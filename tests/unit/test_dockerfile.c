/* Dockerfiles → E2B template steps (dockerfile.c), the build context
 * (template_context.c: paths, COPY sources, the SDK's files hash) and the
 * upload archive (targz.c). Expected steps and hashes are what the official
 * SDK (e2b 2.51) gives for the same input: Template().fromDockerfile(text)
 * and Template.toJSON(t, true) over the same files on disk (ext4). */
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "check.h"
#include "dockerfile.h"
#include "suites.h"
#include "targz.h"
#include "template_context.h"
#include "template_plan.h"

static cJSON *parse_ok(const char *text, cJSON **lines)
{
	cJSON *plan = NULL, *l = NULL;
	cJSON *error = e2bw_dockerfile_parse(text, &plan, &l);
	CHECK(error == NULL);
	if (error) {
		char *t = cJSON_PrintUnformatted(error);
		fprintf(stderr, "    unexpected error: %s\n", t);
		free(t);
		cJSON_Delete(error);
	}
	if (lines)
		*lines = l;
	else
		cJSON_Delete(l);
	return plan;
}

/* The plan equals the JSON text given (member order aside). */
static void check_json(const cJSON *got, const char *want_text)
{
	cJSON *want = cJSON_Parse(want_text);
	CHECK(want != NULL);
	int same = cJSON_Compare(got, want, 1);
	CHECK(same);
	if (!same) {
		char *t = cJSON_PrintUnformatted(got);
		fprintf(stderr, "    got:      %s\n    expected: %s\n", t, want_text);
		free(t);
	}
	cJSON_Delete(want);
}

static void check_steps(const char *dockerfile, const char *want)
{
	cJSON *plan = parse_ok(dockerfile, NULL);
	check_json(plan, want);
	cJSON_Delete(plan);
}

/* A refused Dockerfile: -32602 naming the line, the message saying why. */
static void check_refused(const char *dockerfile, int line, const char *why)
{
	cJSON *plan = NULL, *lines = NULL;
	cJSON *e = e2bw_dockerfile_parse(dockerfile, &plan, &lines);
	CHECK(e != NULL && plan == NULL && lines == NULL);
	if (!e)
		return;
	const cJSON *data = cJSON_GetObjectItem(e, "data");
	CHECK_NUM(cJSON_GetObjectItem(e, "code")->valuedouble, -32602);
	CHECK_STR(cJSON_GetObjectItem(data, "field")->valuestring, "dockerfile");
	if (line)
		CHECK_NUM(cJSON_GetObjectItem(data, "line")->valuedouble, line);
	else
		CHECK(cJSON_GetObjectItem(data, "line") == NULL);
	const char *msg = cJSON_GetObjectItem(e, "message")->valuestring;
	CHECK(strstr(msg, why) != NULL);
	if (!strstr(msg, why))
		fprintf(stderr, "    message: %s\n    wanted:  %s\n", msg, why);
	cJSON_Delete(e);
}

#define STEP(type, args) "{\"type\":\"" type "\",\"args\":" args ",\"force\":false}"
#define FIRST STEP("USER", "[\"root\"]") "," STEP("WORKDIR", "[\"/\"]")

static void test_sdk_mapping(void)
{
	/* exactly the SDK's steps for an ordinary Dockerfile */
	cJSON *lines;
	cJSON *plan = parse_ok("# a comment\n"
			       "FROM e2bdev/base\n"
			       "RUN apt-get update && \\\n"
			       "    apt-get install -y curl\n"
			       "ENV A=1 B=2\n"
			       "ENV C three\n"
			       "WORKDIR /app\n"
			       "COPY hello.txt /opt/hello.txt\n"
			       "COPY --chown=user app/ b.txt /opt/\n"
			       "USER root\n"
			       "EXPOSE 8000\n"
			       "CMD python -m http.server\n",
		&lines);
	check_json(plan,
		"{\"fromImage\":\"e2bdev/base\",\"startCmd\":\"python -m http.server\",\"readyCmd\":\"sleep 20\",\"steps\":[" FIRST
		"," STEP("RUN", "[\"apt-get update && apt-get install -y curl\"]") "," STEP("ENV",
			"[\"A\",\"1\",\"B\",\"2\"]") "," STEP("ENV", "[\"C\",\"three\"]") "," STEP("WORKDIR",
			"[\"/app\"]") "," STEP("COPY",
			"[\"hello.txt\",\"/opt/hello.txt\",\"\",\"\"]") "," STEP("COPY",
			"[\"app/\",\"/opt/\",\"user\",\"\"]") "," STEP("COPY",
			"[\"b.txt\",\"/opt/\",\"user\",\"\"]") "," STEP("USER", "[\"root\"]") "]}");
	/* lines[k] is E2B's step k: 0 the FROM, then each step (0: added) */
	check_json(lines, "[2,0,0,3,5,6,7,8,9,9,10]");
	cJSON_Delete(plan);
	cJSON_Delete(lines);

	/* without USER or WORKDIR the SDK ends as user in /home/user */
	check_steps("FROM e2bdev/base\nRUN true\n",
		"{\"fromImage\":\"e2bdev/base\",\"steps\":[" FIRST
		"," STEP("RUN", "[\"true\"]") "," STEP("USER", "[\"user\"]") "," STEP("WORKDIR",
			"[\"/home/user\"]") "]}");
	/* keywords in any case, CRLF, a byte-order mark, FROM ... AS name */
	check_steps("\xEF\xBB\xBF"
		    "from base AS build\r\nrun echo hi\r\nuser bob\r\n",
		"{\"fromImage\":\"base\",\"steps\":[" FIRST "," STEP("RUN", "[\"echo hi\"]") "," STEP("USER",
			"[\"bob\"]") "," STEP("WORKDIR", "[\"/home/user\"]") "]}");
}

static void test_words_and_forms(void)
{
	/* quotes keep their blanks (the SDK's parser loses them); comments and
   * blank lines inside a continuation are dropped; JSON forms run what they
   * name, quoted only where needed */
	check_steps("FROM a\n"
		    "RUN echo \"a   b\"   'c  d' \\\n"
		    "  # a comment inside\n"
		    "\n"
		    "   && true\n"
		    "RUN [\"sh\", \"-c\", \"echo a && echo b\", \"it's\"]\n"
		    "RUN [\"/bin/echo\", \"plain\"]\n"
		    "RUN [not json\n"
		    "USER u\nWORKDIR /w\n",
		"{\"fromImage\":\"a\",\"steps\":[" FIRST
		"," STEP("RUN", "[\"echo \\\"a   b\\\" 'c  d' && true\"]") "," STEP("RUN",
			"[\"sh -c 'echo a && echo b' 'it'\\\\''s'\"]") "," STEP("RUN",
			"[\"/bin/echo plain\"]") "," STEP("RUN", "[\"[not json\"]") "," STEP("USER",
			"[\"u\"]") "," STEP("WORKDIR", "[\"/w\"]") "]}");
	/* ENV: KEY=value pairs with quotes and escapes, or KEY and the rest of the line */
	check_steps("FROM a\nENV A=\"x y\" B=a\\ b C='$HOME'\nENV D  some value  here\nUSER u\nWORKDIR /w\n",
		"{\"fromImage\":\"a\",\"steps\":[" FIRST
		"," STEP("ENV", "[\"A\",\"x y\",\"B\",\"a b\",\"C\",\"$HOME\"]") "," STEP("ENV",
			"[\"D\",\"some value  here\"]") "," STEP("USER", "[\"u\"]") "," STEP("WORKDIR",
			"[\"/w\"]") "]}");
	/* COPY: JSON form, several sources (one step each), --chown and --chmod
   * (the SDK's fourth arg), --link changes nothing; ADD of a local file is a COPY */
	check_steps(
		"FROM a\nCOPY [\"a b.txt\", \"/dst/\"]\nCOPY --chown=u:g --chmod=755 --link x y /d/\nADD z.txt /z\nUSER u\nWORKDIR /w\n",
		"{\"fromImage\":\"a\",\"steps\":[" FIRST
		"," STEP("COPY", "[\"a b.txt\",\"/dst/\",\"\",\"\"]") "," STEP("COPY",
			"[\"x\",\"/d/\",\"u:g\",\"0755\"]") "," STEP("COPY",
			"[\"y\",\"/d/\",\"u:g\",\"0755\"]") "," STEP("COPY",
			"[\"z.txt\",\"/z\",\"\",\"\"]") "," STEP("USER", "[\"u\"]") "," STEP("WORKDIR",
			"[\"/w\"]") "]}");
	/* the start command: ENTRYPOINT's exec form takes CMD's arguments (as
   * Docker runs them); a shell-form ENTRYPOINT ignores CMD; CMD alone */
	check_steps("FROM a\nENTRYPOINT [\"python\"]\nCMD [\"app.py\", \"--x=1\"]\nUSER u\nWORKDIR /w\n",
		"{\"fromImage\":\"a\",\"startCmd\":\"python app.py --x=1\",\"readyCmd\":\"sleep 20\",\"steps\":[" FIRST
		"," STEP("USER", "[\"u\"]") "," STEP("WORKDIR", "[\"/w\"]") "]}");
	check_steps("FROM a\nCMD [\"ignored\"]\nENTRYPOINT ./serve  --port 80\nUSER u\nWORKDIR /w\n",
		"{\"fromImage\":\"a\",\"startCmd\":\"./serve --port 80\",\"readyCmd\":\"sleep 20\",\"steps\":[" FIRST
		"," STEP("USER", "[\"u\"]") "," STEP("WORKDIR", "[\"/w\"]") "]}");
	/* LABEL, MAINTAINER, STOPSIGNAL, VOLUME, EXPOSE: nothing to build */
	check_steps(
		"FROM a\nLABEL a=b\nMAINTAINER me\nSTOPSIGNAL SIGINT\nVOLUME /data\nEXPOSE 80\nUSER u\nWORKDIR /w\n",
		"{\"fromImage\":\"a\",\"steps\":[" FIRST
		"," STEP("USER", "[\"u\"]") "," STEP("WORKDIR", "[\"/w\"]") "]}");
	/* a last line that ends in a continuation still counts */
	check_steps("FROM a\nUSER u\nWORKDIR /w\nRUN echo \\",
		"{\"fromImage\":\"a\",\"steps\":[" FIRST "," STEP("USER", "[\"u\"]") "," STEP("WORKDIR",
			"[\"/w\"]") "," STEP("RUN", "[\"echo\"]") "]}");
}

static void test_variables(void)
{
	/* ARG: substituted where Docker would use it (RUN too, where Docker hands
   * it to the shell), never a step of its own; single quotes and \$ keep
   * the text; an ARG before FROM serves FROM, and `ARG NAME` brings it in */
	check_steps("ARG BASE=e2bdev/base\nARG V=9\nFROM $BASE\nARG V\nARG W=1.2\n"
		    "RUN echo \"$W\" '$W' ${W} \\$W $UNKNOWN ${W:-x}\n"
		    "ENV P=/opt/$W\nWORKDIR ${P}/app\nCOPY --chown=$W f${W} /d/$V\n"
		    "USER u$W\nCMD echo $W\n",
		"{\"fromImage\":\"e2bdev/base\",\"startCmd\":\"echo $W\",\"readyCmd\":\"sleep 20\",\"steps\":[" FIRST
		"," STEP("RUN", "[\"echo \\\"1.2\\\" '$W' 1.2 \\\\$W $UNKNOWN ${W:-x}\"]") "," STEP("ENV",
			"[\"P\",\"/opt/1.2\"]") "," STEP("WORKDIR", "[\"/opt/1.2/app\"]") "," STEP("COPY",
			"[\"f1.2\",\"/d/9\",\"1.2\",\"\"]") "," STEP("USER", "[\"u1.2\"]") "]}");
	/* an ARG before FROM is not seen after it without `ARG NAME`; ENV is not
   * substituted in RUN (the build's environment has it) and wins over ARG */
	check_steps("ARG G=1\nFROM a\nENV E=2\nARG E=3\nRUN echo $G $E\nUSER u\nWORKDIR /w$E\n",
		"{\"fromImage\":\"a\",\"steps\":[" FIRST
		"," STEP("ENV", "[\"E\",\"2\"]") "," STEP("RUN", "[\"echo $G $E\"]") "," STEP("USER",
			"[\"u\"]") "," STEP("WORKDIR", "[\"/w2\"]") "]}");
}

static void test_refusals(void)
{
	check_refused("FROM a\nFROM b\n", 2, "multi-stage builds are not supported");
	check_refused("FROM a\nCOPY --from=build /x /y\n", 2, "multi-stage builds are not supported");
	check_refused("RUN x\n", 1, "RUN before FROM");
	check_refused("# only a comment\n", 0, "there is no FROM instruction");
	check_refused("FROM a\nFOO bar\n", 2, "unknown instruction 'FOO'");
	check_refused("FROM a\n\n\nRUN ok\nBOGUS \\\n  continued\n", 5, "unknown instruction 'BOGUS'");
	check_refused("FROM a\nARG NAME\n", 2, "ARG NAME has no default");
	check_refused("FROM a\nARG 9x=1\n", 2, "is not a variable name");
	check_refused("FROM a\nADD https://example.invalid/x.tgz /x\n", 2, "ADD of a URL");
	check_refused("FROM a\nADD git@example.invalid:r.git /r\n", 2, "ADD of a URL");
	check_refused("FROM a\nADD site.TAR.GZ /x\n", 2, "ADD would unpack the archive 'site.TAR.GZ'");
	check_refused("FROM a\nCOPY ../secret /x\n", 2,
		"COPY source '../secret' is not inside the build context");
	check_refused("FROM a\nCOPY a/../../x /x\n", 2, "is not inside the build context");
	check_refused("FROM a\nCOPY /etc/passwd /x\n", 2, "is not inside the build context");
	check_refused("FROM a\nCOPY only-one\n", 2, "COPY needs a source and a destination");
	check_refused("FROM a\nCOPY --chmod=u+x a /b\n", 2, "--chmod takes octal permission bits");
	check_refused("FROM a\nCOPY --exclude=*.md a /b\n", 2, "does not support the flag '--exclude=*.md'");
	check_refused("FROM a\nCOPY <<EOF /x\nhi\nEOF\n", 2, "heredoc");
	check_refused("FROM a\nRUN <<EOF\necho\nEOF\n", 2, "heredoc");
	check_refused("FROM a\nRUN --mount=type=cache,target=/c make\n", 2, "RUN flags");
	check_refused("FROM a\nRUN\n", 2, "RUN needs a command");
	check_refused("FROM a\nENV A=1 B\n", 2, "ENV 'B' is not KEY=value");
	check_refused("FROM a\nENV LONELY\n", 2, "ENV LONELY needs a value");
	check_refused("FROM a\nWORKDIR \"\"\n", 2, "WORKDIR needs a value");
	check_refused("FROM --platform=linux/arm64 a\n", 1, "FROM takes no flags");
	check_refused("FROM a b\n", 1, "FROM takes an image and an optional 'AS name'");
	check_refused("FROM a\nSHELL [\"/bin/bash\", \"-c\"]\n", 2, "SHELL is not supported");
	check_refused("FROM a\nHEALTHCHECK CMD curl x\n", 2, "ready_cmd");
	check_refused("FROM a\nONBUILD RUN x\n", 2, "ONBUILD is not supported");
	check_refused("# escape=`\nFROM a\n", 1, "only the default escape character");
	/* the default escape, written as a directive, is fine */
	cJSON *plan = parse_ok("# escape=\\\nFROM a\n", NULL);
	CHECK(plan != NULL);
	cJSON_Delete(plan);
}

/* --- the context --------------------------------------------------------- */

static void test_context_paths(void)
{
	static const struct {
		const char *in, *out; /* out NULL: refused */
	} cases[] = {{"a", "a"}, {"./a//b/", "a/b"}, {".", ""}, {"a/./b/../c", "a/c"}, {"a/..", ""},
		{"../a", NULL}, {"/abs", NULL}, {"a/../../b", NULL}, {"..", NULL}, {"...", "..."}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		e2bw_buf b = {0};
		int rc = e2bw_context_path(&b, cases[i].in);
		if (cases[i].out) {
			CHECK_NUM(rc, 0);
			CHECK_STR(b.data, cases[i].out);
		} else {
			CHECK_NUM(rc, -1);
		}
		e2bw_buf_free(&b);
	}
}

static void check_context_refused(const char *json, const char *field, const char *why)
{
	cJSON *ctx = cJSON_Parse(json);
	int oom = 0;
	cJSON *e = e2bw_context_check(ctx, &oom);
	CHECK(e != NULL && !oom);
	if (e) {
		CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "data"), "field")->valuestring, field);
		CHECK(strstr(cJSON_GetObjectItem(e, "message")->valuestring, why) != NULL);
	}
	cJSON_Delete(e);
	cJSON_Delete(ctx);
}

/* The context of the SDK comparison: hello.txt, app/main.py (0755),
 * app/b.txt, app/sub/empty. */
#define CONTEXT \
	"[{\"path\":\"./hello.txt\",\"content\":\"aGVsbG8K\"},{\"path\":\"app//main.py\",\"content\":\"cHJpbnQoMSkK\",\"mode\":493}," \
	"{\"path\":\"app/sub/empty\",\"content\":\"\"},{\"path\":\"app/b.txt\",\"content\":\"eA==\"}]"

static void test_context_check(void)
{
	cJSON *ctx = cJSON_Parse(CONTEXT);
	int oom = 0;
	CHECK(e2bw_context_check(ctx, &oom) == NULL && !oom);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(ctx, 0), "path")->valuestring,
		"hello.txt"); /* canonical, in place */
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(ctx, 1), "path")->valuestring, "app/main.py");
	cJSON_Delete(ctx);
	check_context_refused("[{\"path\":\"../x\",\"content\":\"\"}]", "context[0].path",
		"must stay inside the context");
	check_context_refused("[{\"path\":\"ok\",\"content\":\"\"},{\"path\":\"/etc/x\",\"content\":\"\"}]",
		"context[1].path", "must stay inside");
	check_context_refused("[{\"path\":\"a/..\",\"content\":\"\"}]", "context[0].path",
		"must name a file");
	check_context_refused("[{\"path\":\"\",\"content\":\"\"}]", "context[0].path",
		"non-empty relative path");
	check_context_refused("[\"x\"]", "context[0].path",
		"each context item is {path, content (base64), mode?}");
	check_context_refused("[{\"path\":\"a\"}]", "context[0].content", "base64");
	check_context_refused("[{\"path\":\"a\",\"content\":\"!!\"}]", "context[0].content", "is not base64");
	check_context_refused("[{\"path\":\"a\",\"content\":\"\",\"mode\":4096}]", "context[0].mode",
		"0o7777");
	check_context_refused("[{\"path\":\"a\",\"content\":\"\",\"mode\":1.5}]", "context[0].mode",
		"0o7777");
	check_context_refused("[{\"path\":\"x/a\",\"content\":\"\"},{\"path\":\"x/./a\",\"content\":\"\"}]",
		"context", "'x/a' appears twice");
	check_context_refused(
		"[{\"path\":\"a\",\"content\":\"\"},{\"path\":\"a-b\",\"content\":\"\"},{\"path\":\"a/b\",\"content\":\"\"}]",
		"context", "'a' is a file and also a directory of 'a/b'");
	char long_name[160];
	memset(long_name, 'n', 101);
	long_name[101] = '\0';
	char json[400];
	snprintf(json, sizeof json, "[{\"path\":\"d/%s\",\"content\":\"\"}]", long_name);
	check_context_refused(json, "context[0].path", "too long for the upload's tar format");
}

static void test_select_and_hash(void)
{
	cJSON *ctx = cJSON_Parse(CONTEXT);
	int oom = 0;
	CHECK(e2bw_context_check(ctx, &oom) == NULL);
	/* src, dest, the entries it names, and the SDK's filesHash for them */
	static const struct {
		const char *src, *dest, *entries, *hash;
	} cases[] = {
		{"hello.txt", "/opt/hello.txt", "hello.txt",
			"07bccaf495dfbf546d1e4c05dd18bf5822c1e719f5b17f5f460719cc8e93febd"},
		{"app", "/opt/app/", "app/ app/b.txt app/main.py app/sub/ app/sub/empty",
			"106ba7bc7aaf592c1ea8247c7880dea81f12c2d7ca2dfb6730610faef39888dd"},
		{".", "/ctx", "/ app/ app/b.txt app/main.py app/sub/ app/sub/empty hello.txt",
			"5218b26355a8244538a44e1a63fa4a93654e02a196570a90124441087d99d0e5"},
		{"app/*.py", "/py/", "app/main.py",
			"972cedd10d77c0dc78280afc34bd05ec5b3cac9d614b3e417090c81bb703fe6f"},
		{"./app/sub/", "/s", "app/sub/ app/sub/empty",
			"138a06240ebd591071c3f43763e0e9f5f1aea6a1923af9332c8ddf04b5198864"},
		{"app/[a-c]*", "/x", "app/b.txt", NULL},
		{"app/[^a-c]*", "/x", "app/main.py app/sub/ app/sub/empty", NULL},
		{"*/s?b", "/x", "app/sub/ app/sub/empty", NULL},
		{"*", "/x", "app/ app/b.txt app/main.py app/sub/ app/sub/empty hello.txt", NULL},
		{"a*", "/x", "app/ app/b.txt app/main.py app/sub/ app/sub/empty", NULL},
		{"*.txt", "/x", "hello.txt", NULL}, /* a * never crosses a '/' */
		{"app/[", "/x", "", NULL},          /* a bad pattern names nothing */
		{"missing", "/x", "", NULL},
		{"../hello.txt", "/x", "", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		e2bw_context_entry *e;
		size_t n;
		CHECK_NUM(e2bw_context_select(ctx, cases[i].src, &e, &n), 0);
		char names[256] = "";
		for (size_t k = 0; k < n; k++) {
			size_t len = strlen(names);
			snprintf(names + len, sizeof names - len, "%s%s%s", k ? " " : "", e[k].path,
				e[k].file ? "" : "/");
		}
		CHECK_STR(names, cases[i].entries);
		if (cases[i].hash) {
			char hex[65];
			CHECK_NUM(e2bw_context_hash(e, n, cases[i].src, cases[i].dest, hex), 0);
			CHECK_STR(hex, cases[i].hash);
		}
		e2bw_context_entries_free(e, n);
	}
	cJSON_Delete(ctx);
}

/* RFC 1952 stored blocks back into bytes, checking the framing. */
static size_t unstore(const uint8_t *gz, size_t len, uint8_t *out, size_t cap)
{
	CHECK(len >= 18 && gz[0] == 0x1f && gz[1] == 0x8b && gz[2] == 8);
	size_t i = 10, n = 0;
	for (int last = 0; !last && i + 5 <= len;) {
		last = gz[i] & 1;
		CHECK((gz[i] & 6) == 0); /* BTYPE 00 */
		size_t blen = gz[i + 1] | gz[i + 2] << 8, nlen = gz[i + 3] | gz[i + 4] << 8;
		CHECK((blen ^ nlen) == 0xFFFF);
		i += 5;
		CHECK(i + blen <= len && n + blen <= cap);
		memcpy(out + n, gz + i, blen);
		n += blen;
		i += blen;
	}
	CHECK_NUM(len - i, 8);
	CHECK_NUM((size_t)(gz[i + 4] | gz[i + 5] << 8 | gz[i + 6] << 16 | (size_t)gz[i + 7] << 24),
		n); /* ISIZE */
	return n;
}

static unsigned octal(const char *p, size_t n)
{
	unsigned v = 0;
	for (size_t i = 0; i < n && p[i] >= '0' && p[i] <= '7'; i++)
		v = v * 8 + (unsigned)(p[i] - '0');
	return v;
}

static void test_archive(void)
{
	/* gzip's CRC-32: the check value of "123456789" is cbf43926 */
	e2bw_buf gz = {0};
	CHECK_NUM(e2bw_gzip_stored(&gz, (const uint8_t *)"123456789", 9), 0);
	CHECK(gz.len == 10 + 5 + 9 + 8 && (uint8_t)gz.data[24] == 0x26 && (uint8_t)gz.data[25] == 0x39 &&
		(uint8_t)gz.data[26] == 0xf4 && (uint8_t)gz.data[27] == 0xcb);
	e2bw_buf_free(&gz);
	/* more than one stored block (65,535 bytes each), and an empty input */
	uint8_t *big = malloc(140000), *back = malloc(140000);
	for (size_t i = 0; i < 140000; i++)
		big[i] = (uint8_t)(i * 7);
	CHECK_NUM(e2bw_gzip_stored(&gz, big, 140000), 0);
	CHECK_NUM(unstore((const uint8_t *)gz.data, gz.len, back, 140000), 140000);
	CHECK(memcmp(big, back, 140000) == 0);
	e2bw_buf_free(&gz);
	CHECK_NUM(e2bw_gzip_stored(&gz, NULL, 0), 0);
	CHECK_NUM(unstore((const uint8_t *)gz.data, gz.len, back, 10), 0);
	e2bw_buf_free(&gz);

	/* the context as the SDK uploads it: every entry but the context itself */
	cJSON *ctx = cJSON_Parse(CONTEXT);
	int oom = 0;
	CHECK(e2bw_context_check(ctx, &oom) == NULL);
	e2bw_context_entry *e;
	size_t n;
	CHECK_NUM(e2bw_context_select(ctx, ".", &e, &n), 0);
	CHECK_NUM(e2bw_context_targz(e, n, &gz), 0);
	size_t tar_len = unstore((const uint8_t *)gz.data, gz.len, back, 140000);
	static const struct {
		const char *name;
		char type;
		unsigned mode, size;
		const char *content;
	} want[] = {{"app", '5', 0755, 0, ""}, {"app/b.txt", '0', 0644, 1, "x"},
		{"app/main.py", '0', 0755, 9, "print(1)\n"}, {"app/sub", '5', 0755, 0, ""},
		{"app/sub/empty", '0', 0644, 0, ""}, {"hello.txt", '0', 0644, 6, "hello\n"}};
	size_t at = 0;
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		const char *hdr = (const char *)back + at;
		CHECK_STR(hdr, want[k].name);
		CHECK(hdr[156] == want[k].type);
		CHECK_NUM(octal(hdr + 100, 8), want[k].mode);
		CHECK_NUM(octal(hdr + 124, 12), want[k].size);
		CHECK(memcmp(hdr + 257,
			      "ustar\0"
			      "00",
			      8) == 0);
		unsigned sum = 0;
		for (int b = 0; b < 512; b++)
			sum += (b >= 148 && b < 156) ? ' ' : (unsigned char)hdr[b];
		CHECK_NUM(octal(hdr + 148, 8), sum);
		CHECK(memcmp(hdr + 512, want[k].content, want[k].size) == 0);
		at += 512 + (want[k].size + 511) / 512 * 512;
	}
	CHECK_NUM(tar_len, at + 1024); /* two zero blocks end it */
	e2bw_context_entries_free(e, n);
	e2bw_buf_free(&gz);
	cJSON_Delete(ctx);

	/* a long path splits into ustar's prefix and name */
	char path[240];
	memset(path, 'p', 150);
	path[150] = '/';
	memset(path + 151, 'f', 80);
	path[231] = '\0';
	CHECK(e2bw_tar_fits(path));
	e2bw_buf tar = {0};
	CHECK_NUM(e2bw_tar_add(&tar, path, 0644, (const uint8_t *)"", 0, 0), 0);
	CHECK(strncmp(tar.data, path + 151, 80) == 0 && strncmp(tar.data + 345, path, 150) == 0);
	path[151] = '\0';
	memset(path, 'q', 151);
	CHECK(!e2bw_tar_fits(path)); /* 151 bytes without a '/' */
	CHECK_NUM(e2bw_tar_add(&tar, path, 0644, NULL, 0, 1), -2);
	e2bw_buf_free(&tar);
	free(big);
	free(back);
}

/* --- the plan: params → E2B's build body ------------------------------------ */

static cJSON *plan_of(const char *params_json, cJSON **error)
{
	cJSON *params = cJSON_Parse(params_json), *plan = NULL, *lines = NULL;
	CHECK(params != NULL);
	*error = e2bw_template_plan(params, &plan, &lines);
	cJSON_Delete(params);
	cJSON_Delete(lines);
	return plan;
}

static void check_plan_refused(const char *params, const char *field, const char *why)
{
	cJSON *error;
	cJSON *plan = plan_of(params, &error);
	CHECK(plan == NULL && error != NULL);
	if (error) {
		const cJSON *f = cJSON_GetObjectItem(cJSON_GetObjectItem(error, "data"), "field");
		CHECK_STR(f ? f->valuestring : NULL, field);
		const char *msg = cJSON_GetObjectItem(error, "message")->valuestring;
		CHECK(strstr(msg, why) != NULL);
		if (!strstr(msg, why))
			fprintf(stderr, "    message: %s\n", msg);
	}
	cJSON_Delete(error);
	cJSON_Delete(plan);
}

static void test_plan(void)
{
	cJSON *error;
	/* steps, as E2B takes them: COPY gets its four args and its files hash */
	cJSON *plan = plan_of(
		"{\"steps\":[{\"type\":\"RUN\",\"args\":[\"make\",\"root\"]},{\"type\":\"COPY\",\"args\":[\"hello.txt\",\"/opt/hello.txt\"],\"force\":true},"
		"{\"type\":\"ENV\",\"args\":[\"A\",\"1\",\"B\",\"2\"]},{\"type\":\"WORKDIR\",\"args\":[\"/w\"]},{\"type\":\"USER\",\"args\":[\"u\"]}],"
		"\"from_template\":\"base\",\"start_cmd\":\"./serve\",\"ready_cmd\":\"curl -sf localhost\",\"skip_cache\":true,\"context\":" CONTEXT
		"}",
		&error);
	CHECK(error == NULL);
	check_json(plan,
		"{\"fromTemplate\":\"base\",\"startCmd\":\"./serve\",\"readyCmd\":\"curl -sf localhost\",\"force\":true,\"steps\":["
		"{\"type\":\"RUN\",\"args\":[\"make\",\"root\"],\"force\":false},"
		"{\"type\":\"COPY\",\"args\":[\"hello.txt\",\"/opt/hello.txt\",\"\",\"\"],\"force\":true,"
		"\"filesHash\":\"07bccaf495dfbf546d1e4c05dd18bf5822c1e719f5b17f5f460719cc8e93febd\"},"
		"{\"type\":\"ENV\",\"args\":[\"A\",\"1\",\"B\",\"2\"],\"force\":false},{\"type\":\"WORKDIR\",\"args\":[\"/w\"],\"force\":false},"
		"{\"type\":\"USER\",\"args\":[\"u\"],\"force\":false}]}");
	cJSON_Delete(plan);
	/* a Dockerfile: its CMD gives way to start_cmd; the registry's credentials go with the image */
	plan = plan_of(
		"{\"dockerfile\":\"FROM registry.test/img:1\\nCOPY app /app\\nCMD run\\nUSER u\\nWORKDIR /w\",\"start_cmd\":\"mine\","
		"\"registry\":{\"username\":\"bob\",\"password\":\"pw-SECRET\"},\"context\":" CONTEXT "}",
		&error);
	CHECK(error == NULL);
	check_json(plan,
		"{\"fromImage\":\"registry.test/img:1\",\"startCmd\":\"mine\",\"force\":false,"
		"\"fromImageRegistry\":{\"type\":\"registry\",\"username\":\"bob\",\"password\":\"pw-SECRET\"},\"steps\":[" FIRST
		","
		"{\"type\":\"COPY\",\"args\":[\"app\",\"/app\",\"\",\"\"],\"force\":false,"
		"\"filesHash\":\"03ac49341f690899ccc838747aea4d98879025b84268c07197743a842539b057\"},"
		"{\"type\":\"USER\",\"args\":[\"u\"],\"force\":false},{\"type\":\"WORKDIR\",\"args\":[\"/w\"],\"force\":false}]}");
	cJSON_Delete(plan);

	check_plan_refused("{\"dockerfile\":\"FROM a\",\"steps\":[]}", "steps", "give one or the other");
	check_plan_refused("{\"steps\":[]}", "from_image", "the base to build on");
	check_plan_refused("{\"from_image\":\"a\",\"from_template\":\"b\"}", "from_template", "one base");
	check_plan_refused("{\"dockerfile\":\"FROM a\",\"from_image\":\"b\"}", "from_image",
		"its FROM names the base");
	check_plan_refused("{\"from_template\":\"b\",\"registry\":{\"username\":\"u\",\"password\":\"p\"}}",
		"registry", "not from_template");
	check_plan_refused("{\"from_image\":\"b\",\"registry\":{\"username\":\"u\"}}", "registry.password",
		"non-empty string");
	check_plan_refused("{\"from_image\":\"b\",\"registry\":{\"password\":\"p\"}}", "registry.username",
		"non-empty string");
	check_plan_refused("{\"from_image\":\"b\",\"steps\":[{\"type\":\"EXPOSE\",\"args\":[\"80\"]}]}",
		"steps[0].type", "one of RUN, COPY, ENV, WORKDIR, USER");
	check_plan_refused("{\"from_image\":\"b\",\"steps\":[7]}", "steps[0].type", "a step object");
	check_plan_refused("{\"from_image\":\"b\",\"steps\":[{\"type\":\"RUN\",\"args\":[]}]}",
		"steps[0].args", "arity");
	check_plan_refused(
		"{\"from_image\":\"b\",\"steps\":[{\"type\":\"RUN\",\"args\":[\"a\"]},{\"type\":\"ENV\",\"args\":[\"K\"]}]}",
		"steps[1].args", "KEY, value pairs");
	check_plan_refused("{\"from_image\":\"b\",\"steps\":[{\"type\":\"WORKDIR\",\"args\":[3]}]}",
		"steps[0].args", "array of strings");
	check_plan_refused(
		"{\"from_image\":\"b\",\"steps\":[{\"type\":\"USER\",\"args\":[\"u\"],\"force\":1}]}",
		"steps[0].force", "boolean");
	check_plan_refused(
		"{\"from_image\":\"b\",\"steps\":[{\"type\":\"COPY\",\"args\":[\"a\",\"/b\",\"\",\"rwx\"]}]}",
		"steps[0].args", "octal");
	check_plan_refused(
		"{\"from_image\":\"b\",\"steps\":[{\"type\":\"COPY\",\"args\":[\"../a\",\"/b\"]}]}",
		"steps[0].args", "outside the context");
	check_plan_refused(
		"{\"from_image\":\"b\",\"steps\":[{\"type\":\"RUN\",\"args\":[\"x\"]},{\"type\":\"COPY\",\"args\":[\"nope\",\"/b\"]}],\"context\":" CONTEXT
		"}",
		"steps[1].args", "COPY source 'nope' names nothing in the context");
	check_plan_refused("{\"dockerfile\":\"FROM a\\n\\nCOPY nope /b\",\"context\":" CONTEXT "}",
		"dockerfile", "line 3: COPY source 'nope' names nothing");
	check_plan_refused("{\"dockerfile\":\"FROM a\\nRUN\"}", "dockerfile", "line 2: RUN needs a command");
	check_plan_refused("{\"dockerfile\":\"FROM a\",\"context\":[{\"path\":\"/x\",\"content\":\"\"}]}",
		"context[0].path", "inside the context");
}

void suite_dockerfile(void)
{
	test_sdk_mapping();
	test_words_and_forms();
	test_variables();
	test_refusals();
	test_context_paths();
	test_context_check();
	test_select_and_hash();
	test_archive();
	test_plan();
}
