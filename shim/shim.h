/*
 * Shims: the one door through which the outside reaches the group.
 *
 * The supervisor decides what is external (handlers/sys_external.c: sockets, and
 * descriptors inherited from outside such as a terminal) and hands every external event to
 * the active shim, stamped with its logical time and task:
 *
 *   - an external call: a shim may *control* it (supply its result; the call never runs) or
 *     *monitor* it (the call runs; the shim sees the result and the bytes it produced);
 *   - readiness: a task parked on outside input is about to be checked; the shim says
 *     whether it proceeds (by default: what the kernel says now);
 *   - waiting: nothing in the group can run and it waits for the outside in real time;
 *   - outside signals, files opened for reading, every event (for digests), the end.
 *
 * A shim is a table of hooks; a missing hook means "let it happen as it would" —
 * passthrough is the table with no hooks. Built in: record (monitors everything into a
 * log), replay (controls everything from a log) and program (speaks proto/shim.proto to a
 * shim written in any language).
 */
#ifndef DETRUN_SHIM_SHIM_H
#define DETRUN_SHIM_SHIM_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct task;

/* Where an external call leaves bytes in the program's memory (the data read, an address
 * filled in, a length updated ...), in the order sys_external.c lists them. */
struct shim_region {
	uint64_t addr;
	uint64_t max;   /* the room there */
	uint64_t len;   /* bytes actually produced (monitor) or to produce (control) */
	uint8_t *bytes; /* len bytes */
	bool data;      /* holds data from the peer (a read's buffer), not metadata */
};

struct shim_call {
	struct task *task;
	uint64_t time;
	int vtid;
	long nr;
	int fd; /* the descriptor it works on, -1 for none (poll sets) */
	uint64_t args[6];
	int64_t ret;
	struct shim_region *out;
	size_t n_out;
	uint32_t sent_digest; /* of the bytes it sends outside */
	const uint8_t *sent;  /* those bytes (writes), sent_len of them */
	size_t sent_len;
	/* Does a signal wait for the task (sent by a barrier of parallel mode while its
	 * stop at this call was held)? Asked by a replay that finds no result for the call:
	 * then the recording's call was interrupted by that signal, and `interrupted` says so. */
	bool (*signal_waits)(struct task *t);
	bool interrupted;
	/* Is tracee descriptor fd one the group's output goes to (standard output or error, a
	 * channel inherited from outside: sys_external.h)? For a shim that answers sends. */
	bool (*to_output)(struct task *t, int fd);
};

/* A write to the group's output about to run (shim_ops.output_entry). */
struct shim_write {
	int fd;
	uint64_t asked; /* bytes it asks to write */
	/* The first n of them (got < n: the rest cannot be read); the caller frees them. */
	uint8_t *(*read)(struct task *t, uint64_t n, size_t *got);
	/* Does anyone see what is written to fd: not a device other than a terminal
	 * (/dev/null, /dev/full)? */
	bool (*seen)(struct task *t, int fd);
};

struct shim_ops {
	const char *name;
	/* Supply c->ret and the bytes of every region (each len <= max) instead of running
	 * the call; false: the call runs. */
	bool (*control)(struct shim_call *c);
	/* The call ran: c->ret and the regions' bytes are what it produced. */
	void (*monitor)(const struct shim_call *c);
	/* May t's outside wait end now? `native` says whether the kernel reports one of its
	 * descriptors ready; shims that decide themselves ignore it. */
	bool (*ready)(struct task *t, uint64_t time, bool native);
	bool decides_readiness; /* then `native` is not even computed */
	/* Waits in real time for outside input (real_wait does it), or stands in for that
	 * wait. Returns like real_wait: >0 ready, 0 timed out, -1 interrupted. */
	int (*wait_outside)(uint64_t time, struct pollfd *fds, int nfds, int timeout_ms,
			    int (*real_wait)(struct pollfd *, int, int));
	/* Between events, when every task is stopped: outside signals are passed on here,
	 * at a fixed point of the timeline. `pending` lists signals received from outside
	 * since last time; the shim calls `deliver` for each signal the group gets now. */
	void (*signals)(uint64_t time, const int *pending, int n, void (*deliver)(int sig));
	/* Does the shim have outside signals of its own to pass on at `time` (a replay's,
	 * from the log)? Parallel mode stops every domain for them. Optional. */
	bool (*signals_due)(uint64_t time);
	/* t opened a regular file for reading. */
	void (*file_opened)(struct task *t, uint64_t time, const char *path, uint64_t size,
			    uint64_t hash);
	/* t is about to change, for the first time in the run, entry `name` of directory
	 * `dirfd` (a supervisor O_PATH descriptor), which the group knows as `path`: record
	 * keeps its before-image (recorder/file_image.h), replay matches it (and puts it back
	 * where it runs on real files). Calls alike in record and replay (handlers/). */
	void (*file_changing)(struct task *t, uint64_t time, const char *path, int dirfd,
			      const char *name);
	/* t is about to write `w` where the group's output goes. A shim that knows what the
	 * write must be (replay) checks it here, at the call's entry, so that a write other
	 * than the recording's never reaches the user. Returns how many of the first bytes
	 * it found right (0: none looked at). Optional; `output` follows at the exit of a
	 * write that ran. */
	uint64_t (*output_entry)(struct task *t, uint64_t time, const struct shim_write *w);
	/* t wrote `len` bytes to descriptor fd, where the group's output goes (standard
	 * output and error, a channel inherited from outside: sys_external.h). bytes NULL:
	 * they are the ones output_entry found right, not read again. */
	void (*output)(struct task *t, uint64_t time, int fd, const uint8_t *bytes, size_t len);
	/* Every event of the timeline (nr: the syscall, -1 for a signal). */
	void (*event)(struct task *t, uint64_t time, long nr);
	/* The group is gone; returns the exit code detrun should give (normally code). */
	int (*finish)(uint64_t time, int code);
};

/* The active shim: passthrough until one is set. */
void shim_set(const struct shim_ops *ops);
const struct shim_ops *shim_get(void);
/* Does the active shim want external calls to stop at all? (Passthrough does not: the
 * seccomp filter then lets them run freely.) */
bool shim_intercepts(void);

/* A checkpoint's run parked ahead of time (debugger/checkpoints.c) shows nothing until it
 * is used: while output is held, a write to the group's output is checked against the
 * recording as written in full, and not performed (handlers/sys_external.c). */
void shim_hold_output(bool held);
bool shim_output_held(void);

/* The supervisor's side, set once by the tracer: how a shim ends the run when what it
 * meets does not fit (replay divergence, a broken shim program). Prints `why` about task
 * t (NULL: no task) with its stack, kills the group, exits 125. */
void shim_set_abort(void (*abort_run)(struct task *t, const char *why));
__attribute__((format(printf, 2, 3), noreturn)) void shim_abort(struct task *t, const char *fmt,
								...);

/* The supervisor's side too: a shim's wait that may last (for a verdict, for room in its
 * socket) also watches `signal_fd`, readable when a signal reaches detrun; when
 * end_requested() then names an ending signal sent from outside, end_run(code) kills the
 * group and exits with `code`. */
struct shim_outside {
	int signal_fd;
	int (*end_requested)(void);
	__attribute__((noreturn)) void (*end_run)(int code);
};
void shim_set_outside(const struct shim_outside *outside);
const struct shim_outside *shim_outside(void);

/* The running digest of the event stream (logical time, task, syscall of every event)
 * that record logs every so often and replay checks. */
uint64_t shim_digest_step(uint64_t digest, uint64_t time, int vtid, long nr);
/* Steps the one running digest of this run (record and replay share it, so a replica
 * that stops replaying and starts recording goes on with it) and returns it. */
uint64_t shim_digest_event(uint64_t time, int vtid, long nr);

/* Built-in shims. Each returns 0 or -1 after printing why. */
struct log;
struct tracer_options;
/* `program` is the executable resolved to an absolute path, `exec_path` the string
 * given to execve (PROGRAM as found on PATH, or as typed). */
struct record_start {
	char **argv;
	const char *program;
	const char *exec_path;
	const struct tracer_options *opt;
	const int *outside_fds;
	int n_outside;
};
int record_shim_start(const char *path, const struct record_start *rs);
/* A replay of a log file meets the before-images already presented to the group (the
 * launch's view of the files, engine/file_view.h); one from a live source (a replica) puts
 * each back on its own files at the recording's first change of it. */
int replay_shim_start(const struct log *log);
/* The same with other places for the inputs (recorder/input.h; replicate/ uses these). */
struct input_sink;
struct input_source;
typedef struct Detrun__Log__Header Detrun__Log__Header;
int record_shim_start_sink(struct input_sink *(*open)(const Detrun__Log__Header *, void *),
			   void *arg, const struct record_start *rs);
void record_shim_continue(struct input_sink *sink);
int replay_shim_start_source(struct input_source *source);
int program_shim_start(const char *command, bool control, char **argv);

#endif
