/*
 * What the files of debugger/ share: the connection, the position on the timeline, the
 * breakpoint table. Not for the supervisor: it calls the debugger only through the table
 * of engine/debugger_hooks.h, which launch.c registers.
 */
#ifndef DETRUN_DEBUGGER_INTERNAL_H
#define DETRUN_DEBUGGER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct task;

/* ---- the connection (packets.c) ------------------------------------------------------ */

enum {
	PACKET_MAX = 16384
};

/* Reads one packet into buf (NUL-terminated, checksum checked and acknowledged). Returns
 * its length, 0 for an interrupt byte (Ctrl-C) and -1 when gdb has gone. */
int packet_read(int fd, char *buf, size_t size);
/* Sends one packet and waits for its acknowledgement (unless no-ack mode). -1: gone. */
int packet_send(int fd, const char *data, size_t len);
int packet_sendf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void packet_no_ack(void);
bool packet_acks_off(void);
/* Hex encoding of bytes (lower case) and back; hex_decode returns bytes decoded or -1. */
void hex_encode(char *out, const void *data, size_t len);
long hex_decode(void *out, const char *hex, size_t max);
uint64_t hex_number(const char **p);

/* ---- registers (regs.c) -------------------------------------------------------------- */

const char *target_xml(void);
/* gdb's register n of task t in hex (target byte order) into out; -1 unknown. */
int regs_read_one(struct task *t, int n, char *out);
int regs_write_one(struct task *t, int n, const char *hex);
/* The whole `g` packet. */
void regs_read_all(struct task *t, char *out);
struct user_regs_struct;
bool regs_same_position(const struct user_regs_struct *a, const struct user_regs_struct *b);

/* ---- breakpoints and watchpoints (points.c) ------------------------------------------ */

enum point_type {
	POINT_SOFT = 0,
	POINT_HARD = 1,
	POINT_WRITE = 2,
	POINT_READ = 3,
	POINT_ACCESS = 4
};
struct point {
	enum point_type type;
	uint64_t addr;
	int len;
	bool inserted; /* soft: the int3 is in memory */
	uint8_t saved; /* soft: the byte under it */
	pid_t tgid;    /* the process it is set in (host pid); 0: restored, not placed yet */
	int aspace;    /* that process's address space */
	pid_t owner;   /* that process's pid as the group sees it (kept while not placed) */
};
enum {
	MAX_POINTS = 256
};

int points_add(struct task *t, enum point_type type, uint64_t addr, int len);
int points_remove(struct task *t, enum point_type type, uint64_t addr, int len);
/* Puts every soft point not (or no longer) in t's memory back: after a library loads. */
void points_refresh(struct task *t);
void points_restore(enum point_type type, uint64_t addr, int len, pid_t owner);
/* Debug registers of every task follow the table. */
void points_sync_all(void);
void points_sync_task(struct task *t);
/* A new process copied its parent's memory with the int3s in it: they become its own
 * breakpoints (`follow`) or are taken out. */
void points_fork(struct task *parent, struct task *child, bool follow);
/* Forgets the points of t's process; `remove`: takes its int3s out of its memory. */
void points_drop_process(struct task *t, bool remove);
/* t's process executed a new program: its points go in again where it next stops. */
void points_unplace_process(struct task *t);
/* t executed a new program, and the kernel cleared its debug registers then: they are
 * set again at its next stop, whatever they held before. */
void points_task_execed(struct task *t);
/* Is an int3 of ours in memory at addr (in some process)? */
bool points_inserted_at(uint64_t addr);
/* Is a breakpoint (int3 or debug register) set at addr? A step arriving there is its hit. */
bool points_break_at(uint64_t addr);
/* gdb detached: every point goes, int3s taken out of memory. */
void points_remove_all(struct task *t);
/* Appends every point to spec as /TYPE.ADDR.LEN.OWNER (a re-execution's --gdb-resume=,
 * which points_restore reads back). */
void points_describe(char *spec, size_t size);
/* The set of points, as one number (equal sets, equal numbers; the order does not count). */
uint64_t points_signature(void);
/* The memory of t as the program wrote it, breakpoints hidden. */
int points_read_memory(struct task *t, uint64_t addr, void *buf, size_t len);

enum trap_kind {
	TRAP_NONE,
	TRAP_BREAK,
	TRAP_WATCH,
	TRAP_STEP
};
/* What the SIGTRAP stop of t is; for TRAP_BREAK rip is moved back onto the int3's
 * address, for TRAP_WATCH *addr is the watched address. */
enum trap_kind points_classify(struct task *t, uint64_t *addr);
/* A step the kernel reports itself (TRAP_BRKPT, no debug register bit): the step resumed
 * after an emulated instruction without executing another one. */
bool points_step_report(struct task *t);
/* Moves t over the int3 at its rip: takes it out, single-steps; the next stop of t puts
 * it back (points_after_step). */
void points_step_over(struct task *t);
bool points_after_step(struct task *t, int status);
bool points_stepping(const struct task *t); /* an int3 is out for its step */

/* ---- the server (server.c) ----------------------------------------------------------- */

enum dbg_mode {
	MODE_OFF,      /* no gdb */
	MODE_LIVE,     /* talking to gdb at every stop */
	MODE_SCAN,     /* re-executing silently to find the last hit before `goal` */
	MODE_SEEK,     /* re-executing silently to stop at `goal` */
	MODE_DETACHED, /* gdb went: run to the end */
};

/* A position on the timeline: event `time`, then `hits` breakpoint or watchpoint traps
 * after it (0: at the event itself). The run is deterministic, so with the same points
 * set the same positions come in the same order in every execution. */
struct position {
	uint64_t time;
	uint64_t hits;
};

/* The debugging session. launch.c sets it up from the command line and hands it to the
 * server (server_start), whose hooks lend it to the functions of the other files that
 * read or change it: no file reaches it but through a pointer it was given. */
struct dbg_state {
	enum dbg_mode mode;
	int conn_fd;
	struct position now;      /* where the group is */
	struct position goal;     /* SCAN: where gdb was; SEEK: where to stop */
	struct position last_hit; /* SCAN: the latest hit before goal (time 0: none) */
	bool seek_event;          /* SEEK: goal is an event, not a hit */
	bool at_begin;            /* SEEK: no hit was found: report the start */
	bool run_begin;           /* SEEK to the start for gdb's `run`: a plain stop there */
	bool killed;              /* gdb killed the program: only `run` or the end may come */
	uint64_t goto_time;       /* `monitor goto`: where the next resume goes, 0: none */
	int selected_vtid;        /* Hg */
	int stepping_vtid;        /* vCont;s asked for this task, 0 for none */
	bool connected;
	bool park;    /* SEEK to `goal` as a checkpoint's copy: wait there to be used */
	bool arrived; /* a run that went back (or elsewhere): its first stop is not resumed yet */
	bool quiet;   /* a job's arrival is a plain stop (`restart N`), not a step's trap */
};
/* The server takes the session launch.c set up from the command line, and attaches to
 * the stop loop (tracer_set_debugger). */
void server_start(struct dbg_state *session);

int position_cmp(struct position a, struct position b);
/* Talk to gdb about the stop of t (`reply` is the stop reply to give) until it resumes. */
void server_converse(struct task *t, const char *reply);
/* The same at an event, where a step asked for starts with the trap flag. */
void converse_at_event(struct task *t, const char *reply);
/* The stop reply for a trap or a signal of t. */
void server_stop_reply(struct task *t, int sig, const char *why, char *out, size_t size);
struct task *server_find_vtid(int vtid);
/* Sends one packet to gdb; gdb gone ends the group. */
void server_send(const char *data, size_t len);

/* ---- xfer.c ---- */
/* Answers qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH (q from OBJECT on) for task t. */
void xfer_answer(struct task *t, const char *q);

/* A seek to an event arrived, shown in t (a thread gdb follows): the stop there. Also
 * where a seek to the start of the history reaches the time from which gdb follows t's
 * process (a fork or an exec in it). */
void server_seek_arrives(struct task *t);

/* Talk to gdb at a stop of t that is no trap, and set up the step gdb asked for. */
void server_converse_resume(struct task *t, const char *reply);

/* The hooks of the table (engine/debugger_hooks.h) that server.c serves. */
bool server_on_stop(struct task *t, int status);
void server_on_event(struct task *t);
int server_finish(int code);

/* ---- where gdb connects (listen.c) ------------------------------------------------- */

/* --gdb[=SPEC]: listen on a private unix socket (no SPEC), unix:PATH, tcp:PORT or PORT. */
void listen_start(const char *spec);
/* detrun debug: a socket pair instead; returns the end gdb's pipe command hands over. */
int listen_pair(void);
/* --gdb-handoff=FD, run by gdb: hands its pipe (stdin) over FD and exits. */
__attribute__((noreturn)) void listen_hand_over(int pair_fd);
/* Says where to connect, waits for a peer of this uid (refusing others, one line each):
 * returns its connection, -1 if gdb ended before it connected. Listens no more. */
int listen_accept(void);
/* On TCP, once gdb is connected, the listening socket fd answers every other connection
 * with a refusal gdb shows (a thread of its own); a re-execution passes it on. -1: none. */
void listen_refuse_others(int fd);
int listen_refusing_fd(void);
/* Does the server still wait for gdb (its first stop not reached yet)? */
bool listen_waiting(void);
/* Listens no more (the processes of `detrun debug` that do not serve). */
void listen_close(void);
/* One message of text (its NUL included) with up to two descriptors (SCM_RIGHTS) over a
 * local socket: the gdb pipe's hand-over, and the messages between a session's runs
 * (checkpoints.c). Send: 0, or -1 with errno. Receive: the text's length (NUL-ended in
 * buf), 0 when the peer has gone; descriptors arrive close-on-exec. */
int listen_send_msg(int fd, const char *text, const int *fds, int nfds);
ssize_t listen_recv_msg(int fd, char *buf, size_t size, int *fds, int *nfds);

/* ---- the processes gdb follows (procs.c) --------------------------------------------- */

/* The first process is followed from its first event (t), in a re-execution only if gdb
 * followed it where it went back from. */
void procs_start(struct task *t);
/* The logical time gdb has known the program of t's process from (UINT64_MAX: not
 * followed). */
uint64_t procs_since(const struct task *t);
/* A re-execution's --gdb-resume= names the processes gdb follows (/pNS.SINCE): written by
 * procs_describe, read back by procs_plan. */
void procs_describe(char *spec, size_t size);
void procs_plan(pid_t ns, uint64_t since);
/* Where going back stops ("No more reverse-execution history"): the latest time from which
 * gdb follows one of its processes. A re-execution has begun it once it follows all of
 * them; hits before are not counted. */
uint64_t procs_history_start(void);
bool procs_history_begun(void);
bool procs_followed(const struct task *t);
int procs_count(void);
/* The thread a stop at t's event is shown in: t if gdb follows its process, else the
 * first thread gdb follows (stopped meanwhile); NULL if none. */
struct task *procs_shown(struct task *t);
void procs_unfollow(pid_t tgid);
/* The pid the final W reply names: the first process still followed. */
pid_t procs_first_pid(void);
/* gdb's id of t: p<pid>.<tid>, as the group sees them. */
void procs_ptid(const struct task *t, char *out, size_t size);
/* Parses a thread id at *p (p<pid>.<tid>, <tid>, -1, 0): the thread, or NULL for "any". */
struct task *procs_parse_thread(const char **p);
/* A thread of the process whose pid (as the group sees it) is the hex number at `hex`. */
struct task *procs_find_process(const char *hex);
/* D;pid: true when it detached one of several followed processes (else: detach all). */
bool procs_detach(const char *args);
/* The hooks on_fork and on_exec of the table. */
void procs_on_fork(struct dbg_state *dbg, struct task *parent, struct task *child);
void procs_on_exec(struct dbg_state *dbg, struct task *t);
/* Does the group end with this event (the last process's exit_group, the last task's
 * exit)? The stop comes before it, so that gdb can still look, and go back. */
bool procs_group_ending(const struct task *t);
/* At the exit of a followed child process: its W reply into out, and it is forgotten. */
bool procs_exit_reply(struct task *t, char *out, size_t size);

/* ---- gdb's file requests (files.c) -------------------------------------------------- */

/* Answers vFile:<cmd> (the /proc files of the group's tasks) into out: its length. */
size_t files_request(const char *cmd, char *out, size_t size);

/* ---- interrupts (interrupt.c) -------------------------------------------------------- */

/* The hooks poll, wait_fd and idle_input of the table. */
bool interrupt_poll(struct dbg_state *dbg, struct task *t, void (*handle)(int tid, int status));
int interrupt_wait_fd(struct dbg_state *dbg);
void interrupt_idle_input(void);
/* Was a Ctrl-C taken while the group ran that no stop has reported yet? Clears it. */
bool interrupt_take_pending(void);
/* Has gdb sent its interrupt byte (Ctrl-C)? Ends detrun if gdb went away. (server.c) */
bool gdb_interrupt_waiting(void);

/* ---- gdb's inferior calls (calls.c) ------------------------------------------------- */

/* gdb wrote a register of t, whose pc was `before`: a call of gdb's starts or ends. */
void calls_pc_written(struct task *t, uint64_t before);
/* A stop of a task in a call of gdb's that is gdb's alone (true if so): a signal,
 * reported and dropped, or a system call, refused and skipped. */
bool calls_take_stop(struct task *t, int status);

/* ---- going back and forth (travel.c) ------------------------------------------------- */

/* Kills the group and executes detrun again to reach `goal` (scan: then the last hit
 * before it). Does not return. */
void travel_reexecute(struct dbg_state *dbg, enum dbg_mode mode, struct position goal);
/* gdb's `kill`: the group ends, and gdb may go on with `run` (travel_restart) or quit (a
 * normal end). Until then only queries are answered: the refusal to give to another
 * packet, or NULL to serve it. */
void travel_kill(struct dbg_state *dbg);
const char *travel_killed_refusal(const struct dbg_state *dbg, const char *cmd);
/* gdb's `run`: executes detrun again to the start, where the first stop was. */
__attribute__((noreturn)) void travel_restart(struct dbg_state *dbg);
void travel_save_invocation(int argc, char **argv, char **env);
/* SCAN reached its goal: re-execute to the last hit found. */
void travel_scan_done(struct dbg_state *dbg);
/* The monitor commands: text to show in out. False: the command failed (gdb then stops
 * the command it ran it from: `restart` of no checkpoint does not continue). */
bool travel_monitor(struct dbg_state *dbg, struct task *t, const char *cmd, char *out, size_t size);
/* Executes detrun again to the event at `time` (mode SEEK or SCAN) with a job of
 * stepback.c's (`arg`, its --gdb-step=). Does not return. */
void travel_reexecute_job(struct dbg_state *dbg, enum dbg_mode mode, uint64_t time, const char *arg)
	__attribute__((noreturn));

/* A copy runs: what it was asked and from which time (0: the start), for a scan that
 * finds no hit after that time and must look earlier. */
void travel_set_origin(const char *spec, const char *job, uint64_t start);
/* Starts detrun again as a child with `spec` (and `job`), keeping fds keep, conn and
 * refusing open in it (-1: none). */
pid_t travel_spawn(const char *spec, const char *job, int keep, int conn, int refusing);
/* A /k item of --gdb-resume=: one of gdb's checkpoints. */
void travel_restore_checkpoint(const char *item);
/* A resume after `restart N` goes to checkpoint N. */
void travel_go_if_asked(struct dbg_state *dbg);

/* ---- checkpoints: parked runs (checkpoints.c) ---------------------------------------- */

/* The socket to the server from --gdb-resume='s /c item: a run's, or a copy's (parked). */
void checkpoints_set_socket(int fd, bool parked);
/* Does going back go through the server (a copy exists, or this run is one it started)? */
bool checkpoints_active(void);
/* Parks the copies of a checkpoint at the first event at or after `time`: how many. */
int checkpoints_make(uint64_t time);
/* Ends this run's group and has the server start the next run, from the latest copy at
 * or before `bound` or from the start. Does not return. */
void checkpoints_travel(const char *spec, const char *job, uint64_t bound, int conn, int refusing)
	__attribute__((noreturn));
/* The run passed logical time `now` (every event): automatic copies are kept behind the
 * furthest time the session reached. */
void checkpoints_passed(uint64_t now);
/* Before reading gdb's next packet: in the server, copies that park meanwhile are taken
 * in; a run the server started tells it that it talks to gdb (used copies are made again
 * from then on). */
void checkpoints_wait_gdb(int conn);
/* A line for `info checkpoints`: which copy this run went on from, if any. */
void checkpoints_describe_origin(char *out, size_t size);
/* A copy reached its time: waits to be used (exits if never), then takes its request. */
void checkpoints_park(struct dbg_state *dbg, struct task *t);
/* Applies a --gdb-resume= argument (launch.c); fds: a copy's connection, else NULL. */
void launch_resume(struct dbg_state *dbg, const char *arg, const int *fds, int nfds);

/* ---- instruction positions: reverse-stepi (stepback.c) ------------------------------- */

/* Takes a re-execution's --gdb-step= out of argv (after --gdb-resume= went). */
void stepback_take_arg(int *argc, char **argv);
void stepback_take_job(const char *arg); /* the same, given to a parked copy */
/* The latest event this run saw (where a checkpoint's copies park). */
uint64_t stepback_base(void);
/* The task of the latest stop, the instructions it ran since that event and its
 * registers: true when the instructions were counted (the stop was reached by steps). */
bool stepback_position(int *vtid, uint64_t *steps, struct user_regs_struct *regs);
/* Re-executes to `steps` instructions of vtid's interval after event `base`, or (regs) to
 * where its registers are those. */
void stepback_goto(struct dbg_state *dbg, uint64_t base, int vtid, uint64_t steps,
		   const struct user_regs_struct *regs) __attribute__((noreturn));
/* At every debugger event, first. True: the event is the job's (it conversed or steps). */
bool stepback_on_event(struct dbg_state *dbg, struct task *t);
/* A new process (child): a job whose interval it runs from the fork's event starts now. */
void stepback_on_fork(struct dbg_state *dbg, struct task *child);
/* At every trap stop, after the hit was counted. True: handled; a reply in `reply` is the
 * stop to give gdb (then t resumes as gdb asks), none: t was stepped on. */
bool stepback_on_trap(struct dbg_state *dbg, struct task *t, enum trap_kind kind, uint64_t addr,
		      char *reply, size_t size);
/* bs: re-executes one instruction back. Returns only at the start of the history. */
void stepback_begin(struct dbg_state *dbg);
/* bc: re-executes when this position knows its count (else the plain scan applies). */
void stepback_scan(struct dbg_state *dbg);
bool stepback_past_hit(void);
/* SCAN found its last hit: a watchpoint's is re-executed to just before the write. */
void stepback_scan_done(struct dbg_state *dbg);

#endif
