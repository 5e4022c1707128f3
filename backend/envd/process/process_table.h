/* The process table's records, shared by the files of envd/process/: the
 * manager (one struct proc_manager), one struct proc per process with its
 * outputs and held input requests, and the operations the manager calls on
 * a process's streams. It declares no functions. */
#ifndef E2B_BACKEND_PROCESS_TABLE_H
#define E2B_BACKEND_PROCESS_TABLE_H

#include "envd/process/process_timer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cJSON;
struct err;
struct process_log_lines;
struct event;
struct event_base;
struct evbuffer;
struct evhttp_connection;
struct evhttp_request;
struct sandbox;
struct sandbox_user;

#define PROC_STD_CHUNK (32 * 1024)           /* envd's read size for stdout/stderr */
#define PROC_PTY_CHUNK (16 * 1024)           /* ... and for a PTY */
#define PROC_STREAM_HIGH_WATER (1024 * 1024) /* pause the process above this many unsent bytes */
#define PROC_RETENTION_MS 30000              /* Connect replays an exit this long */
/* ... for at most this many ended processes of a sandbox, holding at most
 * this many bytes of tags and end events; the oldest go first, so a sandbox
 * that starts processes without end cannot grow the backend's memory. */
#define PROC_RETAINED_MAX 1024
#define PROC_RETAINED_BYTES_MAX (16 * 1024 * 1024)
/* Input queued for a sandbox's processes that have not read it yet. */
#define PROC_INPUT_PENDING_MAX (16 * 1024 * 1024)
#define PROC_STREAM_WRITE_TIMEOUT_S 60 /* a stream client accepting no bytes this long is dropped */
/* The largest envelope a data event needs: header, JSON wrapper, base64. */
#define PROC_FRAME_MAX (5 + 64 + (PROC_STD_CHUNK + 2) / 3 * 4)

enum proc_output_kind {
	PROC_OUT_STDOUT,
	PROC_OUT_STDERR,
	PROC_OUT_PTY
};

struct proc;

struct proc_output {
	struct proc *owner;
	enum proc_output_kind kind;
	int fd; /* -1 once closed */
	struct event *ev;
	bool reading; /* ev is added */
};

/* A unary SendInput/CloseStdin held until its bytes reach the process. */
struct proc_input_wait {
	struct proc_input_wait *next;
	struct proc *proc;
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	uint64_t until;   /* answered once in_written reaches this */
	bool close_after; /* CloseStdin: close the pipe, then answer */
};

struct proc_stream;

/* What a process run by the backend itself reports (process_run.h). */
struct process_observer {
	void (*output)(void *ctx, enum proc_output_kind kind, const uint8_t *data, size_t len);
	/* The process ended (wait status); the observer is forgotten after. */
	void (*ended)(void *ctx, int wait_status);
};

/* What the manager tells the streams of a process. process_stream.c gives
 * these to process_manager_new (main.c wires them): the manager never calls
 * that file by name, while the streams call down into the manager. */
struct process_stream_ops {
	/* Output read from the process, to every stream (fan-out). */
	void (*data)(struct proc *p, enum proc_output_kind kind, const uint8_t *data, size_t len);
	/* The process ended: the end event and end-stream to every stream, then free them. */
	void (*finish_all)(struct proc *p);
	void (*set_paused)(struct proc *p, bool paused);
	/* The sandbox is gone: drop every stream's connection. */
	void (*cut_all)(struct proc *p);
	/* The process is freed: forget every stream, no more sends. */
	void (*detach_all)(struct proc *p);
};

struct proc_manager {
	struct event_base *base;
	const struct process_stream_ops *streams;
	struct event *sigchld;
	struct proc *head;        /* every process, live or retained */
	char *user_name;          /* the uid the backend (and every process) runs as */
	char *path_env;           /* PATH given to processes */
	struct evbuffer *scratch; /* reused to hand frames to evhttp */
	uint8_t read_buf[PROC_STD_CHUNK];
	char frame_buf[PROC_FRAME_MAX];
};

struct proc {
	struct proc *prev, *next;
	struct proc_manager *pm;
	struct sandbox *sb; /* NULL once the sandbox is gone */
	pid_t pid;          /* host pid (the backend's child), also its process group and
	                            * session id; 0 when the sandbox's init started it */
	pid_t ns_pid;       /* the pid inside the sandbox: what clients see */
	bool init_child;    /* its init reports its end (runtime_spawn.h); never our child */
	int pidfd;          /* the process itself (and so its group): signalled through it; -1 none */
	bool ended;         /* the end event was sent; kept for retention only */
	bool reaped;
	int wait_status;
	bool paused;
	bool is_pty;
	struct cJSON *config; /* ProcessConfig as List shows it */
	char *tag;            /* NULL when none */
	struct proc_output out[2];
	int in_fd;                 /* stdin pipe or a dup of the PTY master; -1 when none */
	struct evbuffer *in_queue; /* input not yet accepted by the pipe */
	struct event *in_ev;
	uint64_t in_queued, in_written;
	int in_errno;    /* a write failed: later input fails the same way */
	bool in_closing; /* CloseStdin is waiting for queued input */
	struct proc_input_wait *waits;
	struct proc_stream *streams;
	/* A caller inside the backend that follows the process (process_run.h):
	 * told of every output chunk and of the end, like a stream. */
	const struct process_observer *observer;
	void *observer_ctx;
	int blocked;                         /* streams over the high-water mark */
	bool logged;                         /* its start is in the sandbox's log (process_log.h) */
	struct process_log_lines *log_lines; /* its output goes to that log too, or NULL */
	struct process_timer lifetime;       /* Connect-Timeout-Ms of Start: SIGKILL when it fires */
	char *end_json;                      /* the EndEvent object, once ended */
	struct event *retention;
};

#endif
