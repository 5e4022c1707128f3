/* Private to the process manager: process_manager.c (the table, reaping,
 * lifecycle, input), proc_spawn.c (fork/exec), proc_stream.c (the HTTP side
 * of Start/Connect streams) and process_rpc.c (the RPC handlers). */
#ifndef E2B_BACKEND_PROC_INTERNAL_H
#define E2B_BACKEND_PROC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cJSON;
struct connect_error;
struct event;
struct event_base;
struct evbuffer;
struct evhttp_connection;
struct evhttp_request;
struct sandbox;
struct sandbox_user;

#define PROC_STD_CHUNK (32 * 1024)          /* envd's read size for stdout/stderr */
#define PROC_PTY_CHUNK (16 * 1024)          /* ... and for a PTY */
#define PROC_STREAM_HIGH_WATER (1024 * 1024) /* pause the process above this many unsent bytes */
#define PROC_RETENTION_MS 30000             /* Connect replays an exit this long */
#define PROC_KEEPALIVE_DEFAULT_MS 90000     /* envd's default Keepalive-Ping-Interval */
#define PROC_KEEPALIVE_MIN_MS 50
#define PROC_STREAM_WRITE_TIMEOUT_S 60      /* a stream client accepting no bytes this long is dropped */
#define PROC_STREAM_INPUT_CAP (64 * 1024)   /* bytes read from a stream's client while it streams */
/* The largest envelope a data event needs: header, JSON wrapper, base64. */
#define PROC_FRAME_MAX (5 + 64 + (PROC_STD_CHUNK + 2) / 3 * 4)

/* A one-shot timer that a sandbox pause can suspend and resume with the time
 * that was left (a paused VM's clocks do not run for its processes). */
struct ptimer {
	struct event *ev;
	int64_t due_ms;  /* monotonic, while armed and running */
	int64_t left_ms; /* while suspended */
	bool armed;
	bool suspended;
};

int ptimer_init(struct ptimer *t, struct event_base *base, void (*cb)(int, short, void *), void *arg);
void ptimer_start(struct ptimer *t, int64_t ms);
void ptimer_stop(struct ptimer *t);
void ptimer_suspend(struct ptimer *t);
void ptimer_resume(struct ptimer *t);
void ptimer_free(struct ptimer *t);
int64_t monotonic_ms(void);

enum proc_output_kind { PROC_OUT_STDOUT, PROC_OUT_STDERR, PROC_OUT_PTY };

struct proc;

struct proc_output {
	struct proc *owner;
	enum proc_output_kind kind;
	int fd;            /* -1 once closed */
	struct event *ev;
	bool reading;      /* ev is added */
};

/* A unary SendInput/CloseStdin held until its bytes reach the process. */
struct proc_input_wait {
	struct proc_input_wait *next;
	struct proc *proc;
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	uint64_t until;    /* answered once in_written reaches this */
	bool close_after;  /* CloseStdin: close the pipe, then answer */
};

struct proc_stream;

struct proc_manager {
	struct event_base *base;
	struct event *sigchld;
	struct proc *head;         /* every process, live or retained */
	char *user_name;           /* the uid the backend (and every process) runs as */
	char *path_env;            /* PATH given to processes */
	struct evbuffer *scratch;  /* reused to hand frames to evhttp */
	uint8_t read_buf[PROC_STD_CHUNK];
	char frame_buf[PROC_FRAME_MAX];
};

struct proc {
	struct proc *prev, *next;
	struct proc_manager *pm;
	struct sandbox *sb;        /* NULL once the sandbox is gone */
	pid_t pid;                 /* host pid; also the process group and session id */
	pid_t ns_pid;              /* the pid inside the sandbox: what clients see */
	bool ended;                /* the end event was sent; kept for retention only */
	bool reaped;
	int wait_status;
	bool paused;
	bool is_pty;
	struct cJSON *config;      /* ProcessConfig as List shows it */
	char *tag;                 /* NULL when none */
	struct proc_output out[2];
	int in_fd;                 /* stdin pipe or a dup of the PTY master; -1 when none */
	struct evbuffer *in_queue; /* input not yet accepted by the pipe */
	struct event *in_ev;
	uint64_t in_queued, in_written;
	int in_errno;              /* a write failed: later input fails the same way */
	bool in_closing;           /* CloseStdin is waiting for queued input */
	struct proc_input_wait *waits;
	struct proc_stream *streams;
	int blocked;               /* streams over the high-water mark */
	struct ptimer lifetime;    /* Connect-Timeout-Ms of Start: SIGKILL when it fires */
	char *end_json;            /* the EndEvent object, once ended */
	struct event *retention;
};

/* process_manager.c */
struct proc *proc_find(struct proc_manager *pm, const struct sandbox *sb, uint32_t pid,
	const char *tag, bool ended);
void proc_update_reading(struct proc *p);
void proc_kill_group(struct proc *p, int sig);
/* Registers a freshly spawned process; takes config and tag. NULL when out of memory
 * (the process is then killed and reaped). */
struct proc *proc_register(struct proc_manager *pm, struct sandbox *sb, pid_t pid, bool is_pty,
	int out_fd, int err_fd, int in_fd, struct cJSON *config, char *tag, int64_t lifetime_ms);
/* Input: answers req itself (now or once written). */
void proc_send_input(struct proc *p, struct evhttp_request *req, const uint8_t *data, size_t len);
void proc_close_stdin(struct proc *p, struct evhttp_request *req);

/* proc_spawn.c */
struct proc_spawn {
	const char *cmd;
	const struct cJSON *args;    /* array of strings or NULL */
	const struct cJSON *sandbox_envs;
	const struct cJSON *request_envs;
	const char *home;
	const char *user;
	const char *path_env;
	const char *cwd;             /* resolved, absolute */
	bool pty;
	uint16_t cols, rows;
	bool stdin_pipe;
	const struct sandbox *sb;             /* where it runs */
	const struct sandbox_user *account;   /* as whom (sandbox_runtime.h) */
};
struct proc_spawned {
	pid_t pid;
	int out_fd;  /* stdout pipe, or the PTY master */
	int err_fd;  /* stderr pipe, or -1 */
	int in_fd;   /* stdin pipe, a dup of the PTY master, or -1 */
};
/* The working directory envd would use: ~ and relative paths against home,
 * absolute paths literally; NULL with err set (invalid_argument). */
char *proc_resolve_cwd(const char *cwd, const char *home, const char *user, struct connect_error *err);
int proc_spawn_start(const struct proc_spawn *spec, struct proc_spawned *out, struct connect_error *err);
/* Go's os.ProcessState text for a wait status: "exit status 3", "signal: killed". */
void proc_status_text(int wait_status, char *out, size_t cap);

/* proc_stream.c */
/* Answers req with a stream subscribed to p: 200, the start event, then
 * whatever p produces. deadline_ms 0 = none; kill_on_deadline for Start. */
int proc_stream_open(struct proc *p, struct evhttp_request *req, int64_t keepalive_ms,
	int64_t deadline_ms, bool kill_on_deadline);
/* A retained (ended) process: start, end, end-stream in one answer. */
int proc_stream_replay(struct proc *p, struct evhttp_request *req);
void proc_stream_broadcast_data(struct proc *p, enum proc_output_kind kind, const uint8_t *data,
	size_t len);
/* Sends the end event and end-stream to every stream of p and frees them. */
void proc_stream_finish_all(struct proc *p);
void proc_stream_set_paused(struct proc *p, bool paused);
/* Drops the connection of every stream of p (its sandbox is gone). */
void proc_stream_cut_all(struct proc *p);
/* Forgets every stream of p (its HTTP side is gone or going): no more sends. */
void proc_stream_detach_all(struct proc *p);

#endif
