/* Out of memory, everywhere: each scenario runs once to count the core's
 * allocations, then once per allocation with exactly that one failing.
 * Whatever fails, every request is answered exactly once, an answer that
 * is a success is the same success as without the failure (never a partial
 * or empty result), every message stays valid JSON, and nothing leaks or
 * crashes (ASan build). */
#include <stdlib.h>
#include <string.h>

#include "alloc_hook_control.h"
#include "base64.h"
#include "cJSON.h"
#include "check.h"
#include "e2bw.h"
#include "envelope.h"
#include "suites.h"

#define MAX_OUT 64
#define INIT \
	"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"config\":{\"api_key\":\"sk-oom-SECRET-1234\"," \
	"\"api_url\":\"http://api.test\",\"sandbox_url\":\"http://envd.test\"}}}"
#define DETAIL(state) \
	"{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"state\":\"" state \
	"\",\"startedAt\":\"2026-01-01T00:00:00Z\"," \
	"\"endAt\":\"2026-01-01T01:00:00Z\",\"envdAccessToken\":\"tok-oom-ENVD\",\"metadata\":{\"k\":\"v\"}}"

#define TPL_CREATED \
	"{\"templateID\":\"tpl-1\",\"buildID\":\"b-1\",\"names\":[\"t\"],\"tags\":[],\"aliases\":[],\"public\":false}"
#define TPL_ENTRY \
	"{\"level\":\"info\",\"message\":\"built\",\"timestamp\":\"2026-01-01T00:00:01Z\",\"step\":\"1\"}"
#define TPL_STATUS(status, entries) \
	"{\"buildID\":\"b-1\",\"templateID\":\"tpl-1\",\"status\":\"" status "\",\"logEntries\":[" entries \
	"]}"

typedef struct answer {
	int status;
	const char *headers;
	const char *body;
	e2bw_buf *bytes; /* a binary body instead (envd streams) */
} answer;

typedef struct scenario {
	const char *name;
	const char *calls[3]; /* ids 1, 2, 3 */
	answer answers[8];    /* for the HTTP requests, in the order they come */
} scenario;

typedef struct outcome {
	char *text[MAX_OUT];
	int owner[MAX_OUT]; /* the id of the request being submitted when it came */
	int n;
	uint32_t ops[16];
	int nops;
} outcome;

static void outcome_free(outcome *o)
{
	for (int i = 0; i < o->n; i++)
		free(o->text[i]);
	memset(o, 0, sizeof *o);
}

static void drain(e2bw_core *core, outcome *o, int owner)
{
	for (;;) {
		hook_armed = 1;
		int kind = e2bw_core_next_action(core);
		hook_armed = 0;
		if (kind == E2BW_ACTION_NONE)
			return;
		if (kind == E2BW_ACTION_SEND && o->n < MAX_OUT) {
			size_t len = e2bw_action_text_len(core);
			o->text[o->n] = malloc(len + 1);
			memcpy(o->text[o->n], e2bw_action_text(core), len);
			o->text[o->n][len] = '\0';
			o->owner[o->n++] = owner;
		} else if (kind == E2BW_ACTION_HTTP && o->nops < 16) {
			o->ops[o->nops++] = e2bw_action_op(core);
		}
	}
}

/* One run with allocation `fail_at` failing (0: none). Returns how many
 * allocations the core made. */
static long run(const scenario *sc, long fail_at, outcome *o)
{
	hook_allocations = 0;
	hook_fail_at = fail_at;
	hook_armed = 1;
	e2bw_core *core = e2bw_core_new();
	hook_armed = 0;
	if (!core)
		return -1; /* nothing to answer with: the host sees core_new fail */
	e2bw_core_preview_feature(core, "templates.build"); /* allocates nothing */
	double now = 1000;
	hook_armed = 1;
	e2bw_core_submit(core, INIT, strlen(INIT), now);
	hook_armed = 0;
	drain(core, o, 0);
	for (int i = 0; i < 3 && sc->calls[i]; i++) {
		char msg[2048];
		snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":%s}", i + 1,
			sc->calls[i]);
		hook_armed = 1;
		e2bw_core_submit(core, msg, strlen(msg), now);
		hook_armed = 0;
		drain(core, o, i + 1);
	}
	for (int served = 0; served < o->nops && served < 8 && sc->answers[served].status; served++) {
		const answer *a = &sc->answers[served];
		uint32_t op = o->ops[served];
		const char *body = a->bytes ? a->bytes->data : a->body;
		size_t len = a->bytes ? a->bytes->len : (a->body ? strlen(a->body) : 0);
		const char *headers = a->headers ? a->headers : "";
		hook_armed = 1;
		e2bw_core_http_head(core, op, a->status, headers, strlen(headers), now);
		if (len)
			e2bw_core_http_body(core, op, (const uint8_t *)body, len / 2, now);
		if (len)
			e2bw_core_http_body(core, op, (const uint8_t *)body + len / 2, len - len / 2, now);
		e2bw_core_http_end(core, op, now);
		hook_armed = 0;
		drain(core, o, -1);
	}
	hook_armed = 1;
	e2bw_core_tick(core, 1e15); /* time runs out for whatever still waits */
	hook_armed = 0;
	drain(core, o, -1);
	hook_armed = 1;
	e2bw_core_free(core);
	hook_armed = 0;
	return hook_allocations;
}

/* The id a message answers (-2: a notification); an answer with id null
 * counts for the request being submitted when it came. */
static int answer_id(const char *text, int owner, int *ok)
{
	cJSON *msg = cJSON_Parse(text);
	CHECK(msg != NULL);
	int id = -2;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, "id");
	if (cJSON_IsNumber(v))
		id = v->valueint;
	else if (cJSON_IsNull(v))
		id = owner;
	*ok = cJSON_HasObjectItem(msg, "result");
	cJSON_Delete(msg);
	return id;
}

static void check_run(const scenario *sc, const outcome *base, const outcome *o, long fail_at)
{
	int ncalls = 1;
	while (ncalls < 4 && sc->calls[ncalls - 1])
		ncalls++;
	int answers[4] = {0};
	for (int i = 0; i < o->n; i++) {
		int ok;
		int id = answer_id(o->text[i], o->owner[i], &ok);
		if (id < 0 || id >= ncalls)
			continue;
		answers[id]++;
		if (!ok)
			continue;
		/* a success is the same success as without the failure */
		int same = 0;
		for (int k = 0; k < base->n; k++)
			same |= strcmp(base->text[k], o->text[i]) == 0;
		CHECK(same);
		if (!same)
			fprintf(stderr, "    %s, allocation %ld failing: a different success: %s\n", sc->name,
				fail_at, o->text[i]);
	}
	for (int id = 0; id < ncalls; id++) {
		CHECK_NUM(answers[id], 1);
		if (answers[id] != 1)
			fprintf(stderr, "    %s, allocation %ld failing: request %d answered %d times\n",
				sc->name, fail_at, id, answers[id]);
	}
}

static void frame(e2bw_buf *b, int flags, const char *json)
{
	e2bw_env_encode(b, (uint8_t)flags, json, strlen(json));
}

void suite_oom(void)
{
	e2bw_buf run_stream = {0}, start_stream = {0};
	frame(&run_stream, 0, "{\"event\":{\"start\":{\"pid\":7}}}");
	frame(&run_stream, 0, "{\"event\":{\"data\":{\"stdout\":\"aGkK\"}}}");
	frame(&run_stream, 0,
		"{\"event\":{\"end\":{\"exitCode\":0,\"exited\":true,\"status\":\"exit status 0\"}}}");
	frame(&run_stream, E2BW_ENV_FLAG_END_STREAM, "{}");
	frame(&start_stream, 0, "{\"event\":{\"start\":{\"pid\":8}}}");
	frame(&start_stream, 0, "{\"event\":{\"data\":{\"stderr\":\"b29wcwo=\"}}}");
	frame(&start_stream, E2BW_ENV_FLAG_END_STREAM,
		"{\"error\":{\"code\":\"internal\",\"message\":\"boom tok-oom-ENVD\"}}");

	const scenario scenarios[] = {
		{"create",
			{"\"sandbox.create\",\"params\":{\"template\":\"base\",\"metadata\":{\"a\":\"b\"},\"timeout\":30}"},
			{{201, NULL,
				"{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"envdAccessToken\":\"tok-oom-ENVD\"}",
				NULL}}},
		{"get", {"\"sandbox.get\",\"params\":{\"sandbox_id\":\"sbx1\"}"},
			{{200, NULL, DETAIL("running"), NULL}}},
		{"list", {"\"sandbox.list\",\"params\":{\"metadata\":{\"k\":\"v\"}}"},
			{{200, "x-next-token: t2\n", "[" DETAIL("running") "]", NULL},
				{200, NULL, "[" DETAIL("paused") "]", NULL}}},
		{"kill", {"\"sandbox.kill\",\"params\":{\"sandbox_id\":\"sbx1\"}"},
			{{404, NULL, "{\"code\":404,\"message\":\"gone\"}", NULL}}},
		{"connect", {"\"sandbox.connect\",\"params\":{\"sandbox_id\":\"sbx1\"}"},
			{{200, NULL, DETAIL("paused"), NULL}, {201, NULL, "{}", NULL},
				{200, NULL, DETAIL("running"), NULL}}},
		{"error", {"\"sandbox.set_timeout\",\"params\":{\"sandbox_id\":\"sbx1\",\"timeout\":5}"},
			{{500, NULL, "{\"code\":500,\"message\":\"broken for sk-oom-SECRET-1234\"}", NULL}}},
		{"exec.run",
			{"\"exec.run\",\"params\":{\"sandbox_id\":\"sbx1\",\"command\":\"echo hi\",\"stdin\":\"x\"}"},
			{{200, NULL, DETAIL("running"), NULL}, {200, NULL, NULL, &run_stream}}},
		{"exec.start", {"\"exec.start\",\"params\":{\"sandbox_id\":\"sbx1\",\"command\":\"x\"}"},
			{{200, NULL, DETAIL("running"), NULL}, {200, NULL, NULL, &start_stream}}},
		{"process.list", {"\"process.list\",\"params\":{\"sandbox_id\":\"sbx1\"}"},
			{{200, NULL, DETAIL("running"), NULL},
				{200, NULL,
					"{\"processes\":[{\"pid\":3,\"tag\":\"t\",\"config\":{\"cmd\":\"sh\",\"args\":[\"-c\"],\"envs\":{\"A\":\"1\"},\"cwd\":\"/\"}}]}",
					NULL}}},
		{"shutdown", {"\"sandbox.get\",\"params\":{\"sandbox_id\":\"sbx1\"}", "\"shutdown\""}, {{0}}},
		{"templates.build",
			{"\"templates.build\",\"params\":{\"name\":\"t\",\"context\":[{\"path\":\"a/b.txt\",\"content\":\"aGkK\",\"mode\":420}],\"dockerfile\":"
			 "\"ARG V=1\\nFROM e2bdev/base\\nRUN echo $V \\\\\\n  && true\\nCOPY [\\\"a\\\", \\\"/opt/\\\"]\\nENV K=v\\nCMD [\\\"run\\\"]\"}"},
			{{202, NULL, TPL_CREATED, NULL},
				{201, NULL,
					"{\"present\":false,\"url\":\"http://up.test/x\",\"headers\":{\"h\":\"v\"}}",
					NULL},
				{200, NULL, "", NULL}, {202, NULL, NULL, NULL},
				{200, NULL, TPL_STATUS("ready", TPL_ENTRY), NULL},
				{200, NULL, TPL_STATUS("ready", ""), NULL}}},
		{"templates.failed",
			{"\"templates.build\",\"params\":{\"name\":\"t\",\"from_image\":\"r.test/i\",\"registry\":{\"username\":\"u\",\"password\":\"reg-oom-PASS\"},"
			 "\"steps\":[{\"type\":\"RUN\",\"args\":[\"false\"]}],\"wait\":true}"},
			{{202, NULL, TPL_CREATED, NULL}, {202, NULL, NULL, NULL},
				{200, NULL,
					"{\"status\":\"error\",\"logEntries\":[" TPL_ENTRY
					"],\"reason\":{\"message\":\"exit 1 reg-oom-PASS\",\"step\":\"1\"}}",
					NULL},
				{200, NULL, TPL_STATUS("error", ""), NULL}}},
		{"templates.get+list+delete",
			{"\"templates.get\",\"params\":{\"template_id\":\"t\",\"build_id\":\"b\",\"logs_offset\":2}",
				"\"templates.list\",\"params\":{\"limit\":5}",
				"\"templates.delete\",\"params\":{\"template_id\":\"t\"}"},
			{{200, NULL,
				 "{\"status\":\"building\",\"logEntries\":[" TPL_ENTRY
				 "],\"reason\":{\"message\":\"m\",\"step\":\"1\"}}",
				 NULL},
				{200, "x-next-token: n2\n",
					"[{\"templateID\":\"t\",\"names\":[\"n\"],\"buildID\":\"b\",\"buildStatus\":\"ready\",\"cpuCount\":2,\"public\":true}]",
					NULL},
				{204, NULL, NULL, NULL}}},
		{"code.run",
			{"\"code.run\",\"params\":{\"sandbox_id\":\"sbx1\",\"code\":\"x\",\"envs\":{\"A\":\"b\"},\"timeout\":9}"},
			{{200, NULL, DETAIL("running"), NULL},
				{200, NULL,
					"{\"type\":\"number_of_executions\",\"execution_count\":1}\n{\"type\":\"stdout\",\"text\":\"hi\\n\"}\n"
					"{\"type\":\"result\",\"text\":\"1\",\"is_main_result\":true}\n{\"type\":\"error\",\"name\":\"E\",\"value\":\"v\",\"traceback\":\"t\"}\n"
					"{\"type\":\"end_of_execution\"}\n",
					NULL}}},
		{"code.context.list", {"\"code.context.list\",\"params\":{\"sandbox_id\":\"sbx1\"}"},
			{{200, NULL, DETAIL("running"), NULL},
				{200, NULL, "[{\"id\":\"c\",\"language\":\"python\",\"cwd\":\"/\"}]", NULL}}},
		{"refused",
			{"\"no.such\"", "\"sandbox.get\",\"params\":{\"sandbox_id\":\"a b\"}",
				"\"exec.run\",\"params\":{\"x\":\"\\u0000\"}"},
			{{0}}},
	};
	for (size_t s = 0; s < sizeof scenarios / sizeof scenarios[0]; s++) {
		outcome base = {0};
		long total = run(&scenarios[s], 0, &base);
		if (getenv("OOM_DEBUG"))
			fprintf(stderr, "%s: %ld allocations; without a failure: %s\n", scenarios[s].name,
				total, base.n ? base.text[base.n - 1] : "");
		check_run(&scenarios[s], &base, &base, 0);
		for (long n = 1; n <= total; n++) {
			outcome o = {0};
			if (run(&scenarios[s], n, &o) >= 0)
				check_run(&scenarios[s], &base, &o, n);
			if (getenv("OOM_DEBUG") && o.n)
				fprintf(stderr, "  %ld: %s\n", n, o.text[o.n - 1]);
			outcome_free(&o);
		}
		outcome_free(&base);
	}
	e2bw_buf_free(&run_stream);
	e2bw_buf_free(&start_stream);
}
