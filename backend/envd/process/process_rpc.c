/* process.Process RPC handlers: request parsing, envd's error texts, and the
 * calls into the process manager. */
#include "envd/process/process_rpc.h"

#include "envd/process/process_cwd.h"
#include "envd/process/process_input.h"
#include "envd/process/process_log.h"
#include "envd/process/process_manager.h"
#include "envd/process/process_spawn.h"
#include "envd/process/process_stream.h"
#include "http/http_connect.h"
#include "http/http_protojson.h"
#include "http/http_request.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_users.h"

#include <cJSON.h>
#include <errno.h>
#include <event2/http.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>

/* Connect-Timeout-Ms: 0 when absent (or "0": no timeout); -1 if malformed. */
static long long timeout_ms(struct evhttp_request *req, struct err *err)
{
	const char *t = evhttp_find_header(evhttp_request_get_input_headers(req), "Connect-Timeout-Ms");
	if (!t)
		return 0;
	size_t n = strlen(t);
	bool digits = n > 0 && n <= 10;
	for (size_t i = 0; digits && i < n; i++)
		digits = t[i] >= '0' && t[i] <= '9';
	if (!digits) {
		err_set(err, CONNECT_INVALID_ARGUMENT, "parse timeout: invalid value \"%.20s\"", t);
		return -1;
	}
	return strtoll(t, NULL, 10);
}

/* Authorization: Basic base64("<user>:") picks envd's user; without one
 * user is "" and Start acts as the sandbox's default user (its template's,
 * start()). With isolation the name must be an account of the sandbox's own
 * /etc/passwd; without, root, user and the name of the backend's uid are
 * known and everything runs as the backend's uid. A header that is not
 * valid Basic is ignored, as Go's Request.BasicAuth does. */
static int check_user(const struct proc_manager *pm, const struct sandbox *sb, struct evhttp_request *req,
	char user[64], struct err *err)
{
	user[0] = '\0';
	char name[256];
	int given = request_basic_user(req, name, sizeof name);
	if (given == 0)
		return 0;
	struct sandbox_user account;
	bool known = given > 0 &&
		(runtime_isolated() ? strlen(name) < 64 && runtime_user_resolve(sb, name, &account) == 0
				    : strcmp(name, "root") == 0 || strcmp(name, "user") == 0 ||
					strcmp(name, pm->user_name) == 0);
	if (!known) {
		/* connectrpc.com/authn's answer in envd (AuthenticateUsername). */
		err_set(err, CONNECT_UNAUTHENTICATED, "invalid username: '%.64s'", name);
		return -1;
	}
	snprintf(user, 64, "%.63s", name); /* known names are shorter */
	return 0;
}

/* --- common ----------------------------------------------------------------- */

static int fail(struct evhttp_request *req, enum connect_kind kind, const struct err *err)
{
	return kind == CONNECT_UNARY ? connect_reply_unary_error(req, err)
				     : connect_reply_stream_error(req, err);
}

/* Codec, user and message. NULL when it has already answered (*status). */
static cJSON *begin(struct proc_manager *pm, struct evhttp_request *req, const struct sandbox *sb,
	char *user_out, enum connect_kind kind, int *status)
{
	char user[64];
	int st = connect_check_request(req, kind);
	if (st) {
		*status = st;
		return NULL;
	}
	struct err err;
	cJSON *msg = NULL;
	if (check_user(pm, sb, req, user, &err) == 0)
		msg = kind == CONNECT_UNARY ? connect_read_unary(req, &err)
					    : connect_read_stream_request(req, &err);
	if (!msg)
		*status = fail(req, kind, &err);
	else if (user_out)
		memcpy(user_out, user, sizeof user);
	return msg;
}

struct selector {
	bool has_pid;
	uint32_t pid;
	const char *tag;
};

static int read_selector(const cJSON *msg, struct selector *sel, struct err *err)
{
	const cJSON *process = NULL;
	if (protojson_message(msg, "process", "process", &process, err) == PROTOJSON_BAD)
		return -1;
	enum protojson_result rp = protojson_uint32(process, "pid", "pid", &sel->pid, err);
	if (rp == PROTOJSON_BAD)
		return -1;
	enum protojson_result rt = protojson_string(process, "tag", "tag", &sel->tag, err);
	if (rt == PROTOJSON_BAD)
		return -1;
	if (rp == PROTOJSON_OK && rt == PROTOJSON_OK) {
		err_set(err, CONNECT_INVALID_ARGUMENT,
			"unmarshal message: oneof process.ProcessSelector.selector is already set");
		return -1;
	}
	sel->has_pid = rp == PROTOJSON_OK;
	if (rt != PROTOJSON_OK)
		sel->tag = NULL;
	if (!sel->has_pid && !sel->tag) {
		err_set(err, CONNECT_UNIMPLEMENTED, "invalid input type *process.ProcessSelector");
		return -1;
	}
	return 0;
}

static void not_found(const struct selector *sel, struct err *err)
{
	if (sel->tag)
		err_set(err, CONNECT_NOT_FOUND, "process with tag %s not found", sel->tag);
	else
		err_set(err, CONNECT_NOT_FOUND, "process with pid %u not found", sel->pid);
}

static struct proc *find(struct proc_manager *pm, const struct sandbox *sb, const struct selector *sel,
	bool ended)
{
	return process_find(pm, sb, sel->pid, sel->tag, ended);
}

/* The live process the selector names, or NULL with err set to envd's
 * not_found. Called after the whole message is read, as envd unmarshals
 * first and looks up second. */
static struct proc *lookup(struct proc_manager *pm, struct sandbox *sb, const struct selector *sel,
	struct err *err)
{
	struct proc *p = find(pm, sb, sel, false);
	if (!p)
		not_found(sel, err);
	return p;
}

static long long keepalive_of(struct evhttp_request *req)
{
	return connect_keepalive_ms(
		evhttp_find_header(evhttp_request_get_input_headers(req), "Keepalive-Ping-Interval"));
}

/* --- Start ------------------------------------------------------------------ */

/* ProcessConfig as List returns it: defaults omitted, cwd when it was set. */
static cJSON *config_json(const char *cmd, const cJSON *args, const cJSON *envs, const char *cwd)
{
	cJSON *c = cJSON_CreateObject();
	if (!c)
		return NULL;
	bool ok = true;
	if (*cmd)
		ok = ok && cJSON_AddStringToObject(c, "cmd", cmd);
	if (args && cJSON_GetArraySize(args) > 0) {
		cJSON *copy = cJSON_Duplicate(args, 1);
		ok = ok && copy && cJSON_AddItemToObject(c, "args", copy);
	}
	if (envs && cJSON_GetArraySize(envs) > 0) {
		cJSON *copy = cJSON_Duplicate(envs, 1);
		ok = ok && copy && cJSON_AddItemToObject(c, "envs", copy);
	}
	if (cwd)
		ok = ok && cJSON_AddStringToObject(c, "cwd", cwd);
	if (!ok) {
		cJSON_Delete(c);
		return NULL;
	}
	return c;
}

struct start_request {
	const char *cmd;
	const cJSON *args, *envs;
	const char *cwd; /* NULL when unset */
	bool pty;
	uint32_t cols, rows;
	const char *tag; /* NULL when unset */
	bool stdin_pipe;
};

static int parse_start(const cJSON *msg, struct start_request *r, struct err *err)
{
	memset(r, 0, sizeof *r);
	r->cmd = "";
	r->stdin_pipe = true; /* envd: an unset stdin means true */
	const cJSON *process = NULL, *pty = NULL, *size = NULL;
	if (protojson_message(msg, "process", "process", &process, err) == PROTOJSON_BAD ||
		protojson_string(process, "cmd", "cmd", &r->cmd, err) == PROTOJSON_BAD ||
		protojson_string_list(process, "args", "args", &r->args, err) == PROTOJSON_BAD ||
		protojson_string_map(process, "envs", "envs", &r->envs, err) == PROTOJSON_BAD ||
		protojson_string(process, "cwd", "cwd", &r->cwd, err) == PROTOJSON_BAD)
		return -1;
	enum protojson_result rp = protojson_message(msg, "pty", "pty", &pty, err);
	if (rp == PROTOJSON_BAD || protojson_message(pty, "size", "size", &size, err) == PROTOJSON_BAD ||
		protojson_uint32(size, "cols", "cols", &r->cols, err) == PROTOJSON_BAD ||
		protojson_uint32(size, "rows", "rows", &r->rows, err) == PROTOJSON_BAD ||
		protojson_string(msg, "tag", "tag", &r->tag, err) == PROTOJSON_BAD ||
		protojson_bool(msg, "stdin", "stdin", &r->stdin_pipe, err) == PROTOJSON_BAD)
		return -1;
	r->pty = rp == PROTOJSON_OK;
	return 0;
}

static int start(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb, const char *user,
	const cJSON *msg, struct err *err)
{
	struct start_request r;
	if (parse_start(msg, &r, err) != 0)
		return -1;
	long long timeout = timeout_ms(req, err);
	if (timeout < 0)
		return -1;
	/* envd's GetAuthUser: no Basic user is the default user, which the
	 * sandbox's /etc/passwd may no longer have (envd's words for that). */
	const char *name = user[0] ? user : registry_default_user(sb);
	struct sandbox_user account;
	if (runtime_user_resolve(sb, name, &account) != 0) {
		if (user[0])
			err_set(err, CONNECT_UNAUTHENTICATED, "invalid username: '%.64s'", name);
		else
			err_set(err, CONNECT_UNAUTHENTICATED, "invalid default user: '%.64s'", name);
		return -1;
	}
	/* Without isolation every name is the backend's own user (see check_user). */
	const char *user_name = runtime_isolated() ? account.name : pm->user_name;
	/* envd's ExpandAndResolve: no cwd is the default workdir, else home;
	 * "~" and relative paths are the user's home's. */
	const char *asked_cwd = r.cwd && r.cwd[0] ? r.cwd : sb->default_workdir;
	char *cwd = process_resolve_cwd(asked_cwd, account.home, user_name, err);
	if (!cwd)
		return -1;
	struct proc_spawn spec = {
		.cmd = r.cmd,
		.args = r.args,
		.sandbox_envs = sb->env_vars,
		.request_envs = r.envs,
		.home = account.home,
		.user = user_name,
		.sb = sb,
		.account = &account,
		.path_env = runtime_isolated() ? SANDBOX_PATH : pm->path_env,
		.cwd = cwd,
		.pty = r.pty,
		.cols = (uint16_t)r.cols,
		.rows = (uint16_t)r.rows,
		.stdin_pipe = r.stdin_pipe,
	};
	cJSON *config = config_json(r.cmd, r.args, r.envs, r.cwd);
	char *tag = r.tag ? strdup(r.tag) : NULL;
	if (!config || (r.tag && !tag)) {
		cJSON_Delete(config);
		free(tag);
		free(cwd);
		err_set(err, CONNECT_INTERNAL, "out of memory");
		return -1;
	}
	struct proc_spawned sp;
	int rc = process_spawn_start(&spec, &sp, err);
	free(cwd);
	if (rc != 0) {
		cJSON_Delete(config);
		free(tag);
		return -1;
	}
	struct proc *p = process_register(pm, sb, &sp, r.pty, config, tag, timeout);
	if (!p) {
		err_set(err, CONNECT_INTERNAL, "out of memory");
		return -1;
	}
	process_log_start(p);
	return process_stream_open(p, req, keepalive_of(req), timeout, true);
}

int process_rpc_start(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb)
{
	int status;
	char user[64];
	cJSON *msg = begin(pm, req, sb, user, CONNECT_SERVER_STREAM, &status);
	if (!msg)
		return status;
	struct err err;
	status = start(pm, req, sb, user, msg, &err);
	cJSON_Delete(msg);
	return status < 0 ? connect_reply_stream_error(req, &err) : status;
}

/* --- Connect ---------------------------------------------------------------- */

int process_rpc_connect(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb)
{
	int status;
	cJSON *msg = begin(pm, req, sb, NULL, CONNECT_SERVER_STREAM, &status);
	if (!msg)
		return status;
	struct err err;
	struct selector sel;
	int rc = read_selector(msg, &sel, &err);
	long long timeout = rc == 0 ? timeout_ms(req, &err) : -1;
	struct proc *p = NULL;
	if (timeout >= 0) {
		p = find(pm, sb, &sel, false);
		if (p) {
			status = process_stream_open(p, req, keepalive_of(req), timeout, false);
		} else if ((p = find(pm, sb, &sel, true))) {
			status = process_stream_replay(p, req); /* exited in the last 30 s */
		} else {
			not_found(&sel, &err);
		}
	}
	cJSON_Delete(msg);
	return p ? status : connect_reply_stream_error(req, &err);
}

/* --- List --------------------------------------------------------------------- */

int process_rpc_list(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb)
{
	int status;
	cJSON *msg = begin(pm, req, sb, NULL, CONNECT_UNARY, &status);
	if (!msg)
		return status;
	cJSON_Delete(msg);
	cJSON *out = cJSON_CreateObject();
	cJSON *list = cJSON_CreateArray();
	bool ok = out && list;
	for (struct proc *p = pm->head; ok && p; p = p->next) {
		if (p->sb != sb || p->ended)
			continue;
		cJSON *info = cJSON_CreateObject();
		cJSON *config = cJSON_Duplicate(p->config, 1);
		ok = info && config && cJSON_AddItemToObject(info, "config", config) &&
			cJSON_AddNumberToObject(info, "pid", (double)p->ns_pid) &&
			(!p->tag || cJSON_AddStringToObject(info, "tag", p->tag)) &&
			cJSON_AddItemToArray(list, info);
		if (!ok) {
			if (info && !cJSON_GetObjectItemCaseSensitive(info, "config"))
				cJSON_Delete(config);
			cJSON_Delete(info);
		}
	}
	/* protobuf-JSON omits an empty repeated field: no processes is {}. */
	if (ok && cJSON_GetArraySize(list) > 0) {
		ok = cJSON_AddItemToObject(out, "processes", list);
		list = ok ? NULL : list;
	}
	cJSON_Delete(list);
	if (!ok) {
		cJSON_Delete(out);
		struct err err;
		err_set(&err, CONNECT_INTERNAL, "out of memory");
		return connect_reply_unary_error(req, &err);
	}
	return connect_reply_unary(req, out);
}

/* --- SendInput ------------------------------------------------------------- */

int process_rpc_send_input(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb)
{
	int status;
	cJSON *msg = begin(pm, req, sb, NULL, CONNECT_UNARY, &status);
	if (!msg)
		return status;
	struct err err;
	struct selector sel;
	const cJSON *input = NULL;
	uint8_t *stdin_data = NULL, *pty_data = NULL;
	size_t stdin_len = 0, pty_len = 0;
	enum protojson_result rs = PROTOJSON_ABSENT, rp = PROTOJSON_ABSENT;
	int rc = -1;
	if (read_selector(msg, &sel, &err) == 0 &&
		protojson_message(msg, "input", "input", &input, &err) != PROTOJSON_BAD &&
		(rs = protojson_bytes(input, "stdin", "stdin", &stdin_data, &stdin_len, &err)) !=
			PROTOJSON_BAD &&
		(rp = protojson_bytes(input, "pty", "pty", &pty_data, &pty_len, &err)) != PROTOJSON_BAD) {
		rc = 0;
		if (rs == PROTOJSON_OK && rp == PROTOJSON_OK) {
			err_set(&err, CONNECT_INVALID_ARGUMENT,
				"unmarshal message: oneof process.ProcessInput.input is already set");
			rc = -1;
		}
	}
	struct proc *p = rc == 0 ? lookup(pm, sb, &sel, &err) : NULL;
	if (rc == 0 && !p)
		rc = -1;
	if (rc == 0) {
		if (rs != PROTOJSON_OK && rp != PROTOJSON_OK) {
			err_set(&err, CONNECT_UNIMPLEMENTED, "invalid input type <nil>");
			rc = -1;
		} else if (rs == PROTOJSON_OK && p->is_pty) {
			err_set(&err, CONNECT_INTERNAL,
				"error writing to stdin: tty assigned to process \xe2\x80\x94 input should be written to the pty, not the stdin");
			rc = -1;
		} else if (rp == PROTOJSON_OK && !p->is_pty) {
			err_set(&err, CONNECT_INTERNAL,
				"error writing to tty: tty not assigned to process \xe2\x80\x94 input should be written to the stdin, not the tty");
			rc = -1;
		}
	}
	if (rc == 0) {
		/* Answers itself: now, or once the bytes are in the pipe. */
		process_send_input(p, req, rs == PROTOJSON_OK ? stdin_data : pty_data,
			rs == PROTOJSON_OK ? stdin_len : pty_len);
		status = 200;
	} else {
		status = connect_reply_unary_error(req, &err);
	}
	free(stdin_data);
	free(pty_data);
	cJSON_Delete(msg);
	return status;
}

/* --- SendSignal ------------------------------------------------------------ */

static const struct protojson_enum_value signal_values[] = {
	{"SIGNAL_UNSPECIFIED", 0},
	{"SIGNAL_SIGTERM", 15},
	{"SIGNAL_SIGKILL", 9},
};

int process_rpc_send_signal(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb)
{
	int status;
	cJSON *msg = begin(pm, req, sb, NULL, CONNECT_UNARY, &status);
	if (!msg)
		return status;
	struct err err;
	struct selector sel;
	int32_t signal_number = 0;
	struct proc *p = NULL;
	if (read_selector(msg, &sel, &err) == 0 &&
		protojson_enum(msg, "signal", "signal", signal_values,
			sizeof signal_values / sizeof signal_values[0], &signal_number,
			&err) != PROTOJSON_BAD) {
		p = lookup(pm, sb, &sel, &err);
	}
	cJSON_Delete(msg);
	if (!p)
		return connect_reply_unary_error(req, &err);
	if (signal_number != 9 && signal_number != 15) {
		if (signal_number == 0)
			err_set(&err, CONNECT_UNIMPLEMENTED, "invalid signal: SIGNAL_UNSPECIFIED");
		else
			err_set(&err, CONNECT_UNIMPLEMENTED, "invalid signal: %d", (int)signal_number);
		return connect_reply_unary_error(req, &err);
	}
	/* The whole process group, so a shell's children go too. */
	process_kill_group(p, signal_number == 9 ? SIGKILL : SIGTERM);
	return connect_reply_unary(req, cJSON_CreateObject());
}

/* --- CloseStdin -------------------------------------------------------------- */

int process_rpc_close_stdin(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb)
{
	int status;
	cJSON *msg = begin(pm, req, sb, NULL, CONNECT_UNARY, &status);
	if (!msg)
		return status;
	struct err err;
	struct selector sel;
	struct proc *p = NULL;
	if (read_selector(msg, &sel, &err) == 0)
		p = lookup(pm, sb, &sel, &err);
	cJSON_Delete(msg);
	if (!p)
		return connect_reply_unary_error(req, &err);
	if (p->is_pty) {
		err_set(&err, CONNECT_UNKNOWN,
			"error closing stdin: cannot close stdin for PTY process \xe2\x80\x94 send Ctrl+D (0x04) instead");
		return connect_reply_unary_error(req, &err);
	}
	process_close_stdin(p, req); /* answers now, or after queued input */
	return 200;
}

/* --- Update ------------------------------------------------------------------ */

int process_rpc_update(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb)
{
	int status;
	cJSON *msg = begin(pm, req, sb, NULL, CONNECT_UNARY, &status);
	if (!msg)
		return status;
	struct err err;
	struct selector sel;
	const cJSON *pty = NULL, *size = NULL;
	uint32_t cols = 0, rows = 0;
	enum protojson_result rp = PROTOJSON_ABSENT;
	struct proc *p = NULL;
	if (read_selector(msg, &sel, &err) == 0 &&
		(rp = protojson_message(msg, "pty", "pty", &pty, &err)) != PROTOJSON_BAD &&
		protojson_message(pty, "size", "size", &size, &err) != PROTOJSON_BAD &&
		protojson_uint32(size, "cols", "cols", &cols, &err) != PROTOJSON_BAD &&
		protojson_uint32(size, "rows", "rows", &rows, &err) != PROTOJSON_BAD) {
		p = lookup(pm, sb, &sel, &err);
	}
	cJSON_Delete(msg);
	if (!p)
		return connect_reply_unary_error(req, &err);
	if (rp == PROTOJSON_OK) {
		if (!p->is_pty || p->in_fd < 0) {
			err_set(&err, CONNECT_INTERNAL, "error resizing tty: tty not assigned to process");
			return connect_reply_unary_error(req, &err);
		}
		struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
		if (ioctl(p->in_fd, TIOCSWINSZ, &ws) != 0) {
			err_set(&err, CONNECT_INTERNAL, "error resizing tty: %s", strerror(errno));
			return connect_reply_unary_error(req, &err);
		}
	}
	return connect_reply_unary(req, cJSON_CreateObject());
}
