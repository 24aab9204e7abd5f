/* The conversation with gdb at a stop, and the two hooks of the stop loop. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/debugger_hooks.h"
#include "debugger/internal.h"
#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "engine/remote.h"
#include "vkernel/report.h"
#include "engine/tracer.h"

/* The session launch.c set up (server_start): this file's, and lent to the others'
 * functions it calls. */
static struct dbg_state *dbg;

/* What gdb asked for when the conversation ended. */
static struct {
	int step_vtid; /* 0: continue every task */
	bool detach;
} action;

static char last_reply[256];

int position_cmp(struct position a, struct position b)
{
	if (a.time != b.time)
		return a.time < b.time ? -1 : 1;
	return a.hits < b.hits ? -1 : a.hits > b.hits;
}

struct task *server_find_vtid(int vtid)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if (t->vtid == vtid && (t->state == TASK_STOPPED || t->state == TASK_RUNNING))
			return t;
	return NULL;
}

/* Linux signal numbers to gdb's (they differ from 7 on). */
static int gdb_signal(int sig)
{
	static const unsigned char map[32] = { 0,  1,  2,  3,  4,  5,  6,  10, 8,  9,  30,
					       11, 31, 13, 14, 15, 0,  20, 19, 17, 18, 21,
					       22, 16, 24, 25, 26, 27, 28, 23, 0,  12 };
	return sig > 0 && sig < 32 ? map[sig] : 0;
}

void server_stop_reply(struct task *t, int sig, const char *why, char *out, size_t size)
{
	char id[40];
	procs_ptid(t, id, sizeof(id));
	snprintf(out, size, "T%02xthread:%s;%s", gdb_signal(sig), id, why ? why : "");
}

/* gdb went away while the group was stopped: nothing may go on running. */
static __attribute__((noreturn)) void gdb_gone(void)
{
	if (dbg->killed)
		exit(0); /* gdb killed the program and went: a normal end */
	die("gdb disconnected: the group is ended");
}

void server_send(const char *data, size_t len)
{
	if (packet_send(dbg->conn_fd, data, len) < 0)
		gdb_gone();
}

static void send_or_die(const char *text)
{
	server_send(text, strlen(text));
}

static void set_trap_flag(struct task *t, bool on)
{
	if (remote_load_regs(t) == 0)
		task_set_trap_flag(t, on);
}

/* Resumes a task the debugger stopped (a trap's owner), stepping over an int3 at its pc. */
static void continue_over(struct task *t)
{
	remote_load_regs(t);
	if (points_inserted_at(task_ip(t))) {
		points_step_over(t);
		return;
	}
	remote_store_regs(t);
	t->regs_valid = false;
	if (ptrace(tracer_resume_request(t), t->tid, 0, 0) < 0 && errno != ESRCH)
		task_warn(t, "cannot resume: %s", strerror(errno));
}

/* ---- queries ------------------------------------------------------------------------- */

/* The task gdb selected (Hg), or the one that stopped. */
static struct task *selected(struct task *owner)
{
	struct task *t = server_find_vtid(dbg->selected_vtid);
	return t ? t : owner;
}

static void thread_list(void)
{
	char out[PACKET_MAX], id[40];
	size_t n = 0;
	out[n++] = 'm';
	for (struct task *t = sched_first(); t && n < sizeof(out) - 48; t = t->next)
		if ((t->state == TASK_STOPPED || t->state == TASK_RUNNING) && procs_followed(t)) {
			procs_ptid(t, id, sizeof(id));
			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", n > 1 ? "," : "",
					      id);
		}
	out[n] = 0;
	send_or_die(out);
}

static void monitor(struct task *owner, const char *hex)
{
	char cmd[256], text[1024], out[2200];
	long n = hex_decode(cmd, hex, sizeof(cmd) - 1);
	cmd[n < 0 ? 0 : n] = 0;
	bool ok = travel_monitor(dbg, owner, cmd, text, sizeof(text));
	out[0] = 'O';
	hex_encode(out + 1, text, strlen(text));
	if (text[0])
		send_or_die(out);
	send_or_die(ok ? "OK" : "E01");
}

static void query(struct task *owner, const char *q)
{
	char out[64];
	if (!strncmp(q, "qSupported", 10))
		send_or_die("PacketSize=4000;qXfer:features:read+;qXfer:auxv:read+;"
			    "qXfer:exec-file:read+;qXfer:threads:read+;QStartNoAckMode+;swbreak+;"
			    "hwbreak+;ReverseContinue+;ReverseStep+;vContSupported+;multiprocess+;"
			    "fork-events+;exec-events+");
	else if (!strncmp(q, "qXfer:", 6))
		xfer_answer(selected(owner), q + 6);
	else if (!strcmp(q, "qC"))
		procs_ptid(owner, out + 2, sizeof(out) - 2), memcpy(out, "QC", 2), send_or_die(out);
	else if (!strcmp(q, "qfThreadInfo"))
		thread_list();
	else if (!strcmp(q, "qsThreadInfo"))
		send_or_die("l");
	else if (!strcmp(q, "qAttached"))
		send_or_die(dbg->arrived
				    ? "1"
				    : "0"); /* detrun started it: quitting gdb ends the group */
	else if (!strncmp(q, "qRcmd,", 6))
		monitor(owner, q + 6);
	else if (!strcmp(q, "qDetrunArrived")) /* the gdb detrun debug starts asks at stops */
		send_or_die(dbg->arrived ? "1" : "0");
	else if (!strncmp(q, "qSymbol", 7))
		send_or_die("OK");
	else
		send_or_die("");
}

/* ---- registers, memory, points ------------------------------------------------------- */

static void read_memory(struct task *t, const char *args)
{
	uint64_t addr = hex_number(&args);
	args += *args == ',';
	uint64_t len = hex_number(&args);
	static unsigned char buf[PACKET_MAX / 2];
	static char out[PACKET_MAX];
	if (len > sizeof(buf) - 1)
		len = sizeof(buf) - 1;
	/* A read crossing into unmapped memory gives what could be read, as gdbserver does. */
	while (len > 0 && points_read_memory(t, addr, buf, len))
		len /= 2;
	if (len == 0) {
		send_or_die("E01");
		return;
	}
	hex_encode(out, buf, len);
	send_or_die(out);
}

/* gdb's own writes (`set var`): only where the program itself could write. */
static void write_memory(struct task *t, const char *args)
{
	uint64_t addr = hex_number(&args);
	args += *args == ',';
	uint64_t len = hex_number(&args);
	static unsigned char buf[PACKET_MAX / 2];
	if (*args != ':' || len > sizeof(buf) || hex_decode(buf, args + 1, len) != (long)len ||
	    remote_write(t, REMOTE(addr), buf, len)) {
		send_or_die("E01");
		return;
	}
	send_or_die("OK");
}

static void point(struct task *t, bool add, const char *args)
{
	enum point_type type = (enum point_type)(args[0] - '0');
	if (type > POINT_ACCESS || args[1] != ',') {
		send_or_die("");
		return;
	}
	args += 2;
	uint64_t addr = hex_number(&args);
	args += *args == ',';
	int len = (int)hex_number(&args);
	int err = add ? points_add(t, type, addr, len) : points_remove(t, type, addr, len);
	send_or_die(err ? "E01" : "OK");
	if (!err && type != POINT_SOFT)
		points_sync_all();
}

static void registers(struct task *t, const char *cmd)
{
	static char out[PACKET_MAX];
	const char *p = cmd + 1;
	if (cmd[0] == 'g') {
		regs_read_all(t, out);
	} else if (cmd[0] == 'p') {
		if (regs_read_one(t, (int)hex_number(&p), out))
			snprintf(out, sizeof(out), "E01");
	} else {
		int n = (int)hex_number(&p);
		snprintf(out, sizeof(out), "%s",
			 *p == '=' && !regs_write_one(t, n, p + 1) ? "OK" : "E01");
	}
	send_or_die(out);
}

/* ---- resuming -------------------------------------------------------------------------- */

static int thread_arg(const char *p, struct task *owner)
{
	if (*p != ':')
		return owner->vtid;
	p++;
	struct task *t = procs_parse_thread(&p);
	return t ? t->vtid : owner->vtid;
}

/* vCont;ACTION[:THREAD];...: a step of one task, or continue. The signal of a C or S is
 * not taken: a replay delivers the signals it recorded, and no others. */
static void vcont(struct task *owner, const char *p)
{
	action.step_vtid = 0;
	while (*p == ';') {
		p++;
		if (*p == 's' || *p == 'S') {
			const char *after = p + 1 + (*p == 'S' ? 2 : 0);
			action.step_vtid = thread_arg(after, owner);
		}
		while (*p && *p != ';')
			p++;
	}
}

static void old_resume(struct task *owner, const char *cmd)
{
	action.step_vtid = cmd[0] == 's' || cmd[0] == 'S'
				   ? (dbg->selected_vtid ? dbg->selected_vtid : owner->vtid)
				   : 0;
}

static void select_thread(const char *p)
{
	struct task *t = procs_parse_thread(&p);
	dbg->selected_vtid = t ? t->vtid : 0;
	send_or_die("OK");
}

static bool dispatch_v(struct task *owner, const char *cmd)
{
	if (!strcmp(cmd, "vCont?")) {
		send_or_die("vCont;c;C;s;S");
	} else if (!strncmp(cmd, "vCont;", 5) && cmd[5] == ';') {
		vcont(owner, cmd + 5);
		return true;
	} else if (!strncmp(cmd, "vKill", 5)) {
		travel_kill(dbg);
		send_or_die("OK");
	} else if (!strncmp(cmd, "vRun", 4)) {
		travel_kill(dbg);
		travel_restart(dbg);
	} else if (!strncmp(cmd, "vFile:", 6)) {
		static char out[PACKET_MAX];
		if (packet_send(dbg->conn_fd, out, files_request(cmd + 6, out, sizeof(out))) < 0)
			gdb_gone();
	} else {
		send_or_die("");
	}
	return false;
}

/* A resume after `monitor goto T` to a time already passed runs again from the start. */
static void go_back_if_asked(void)
{
	travel_go_if_asked(dbg); /* `restart N` */
	if (dbg->goto_time && dbg->goto_time <= dbg->now.time)
		travel_reexecute(dbg, MODE_SEEK, (struct position){ dbg->goto_time, 0 });
}

/* QStartNoAckMode, the one mode packet served. */
static void set_mode(const char *cmd)
{
	bool no_ack = !strcmp(cmd, "QStartNoAckMode");
	send_or_die(no_ack ? "OK" : "");
	if (no_ack)
		packet_no_ack();
}

/* bc (reverse-continue) and bs (reverse-stepi) run again from the start and do not come
 * back here, but at the start of the history. */
static void go_backwards(struct task *owner, const char *cmd)
{
	if (cmd[1] == 'c')
		travel_reexecute(dbg, MODE_SCAN, dbg->now);
	stepback_begin(dbg);
	server_stop_reply(owner, SIGTRAP, "replaylog:begin;", last_reply, sizeof(last_reply));
	send_or_die(last_reply);
}

static void thread_alive(const char *p)
{
	send_or_die(procs_parse_thread(&p) ? "OK" : "E01");
}

/* D;pid of one of several processes gdb follows: it runs on, unwatched. Else: the end. */
static bool detach(const char *args)
{
	send_or_die("OK");
	if (procs_detach(args))
		return false;
	action.detach = true;
	return true;
}

static bool dispatch(struct task *owner, const char *cmd)
{
	if (cmd[0] == 'c' || cmd[0] == 'C' || cmd[0] == 'b' || !strncmp(cmd, "vCont;c", 7) ||
	    !strncmp(cmd, "vCont;C", 7))
		go_back_if_asked();
	struct task *t = selected(owner);
	switch (cmd[0]) {
	case '?':
		send_or_die(last_reply);
		return false;
	case 'q':
		query(owner, cmd);
		return false;
	case 'Q':
		set_mode(cmd);
		return false;
	case 'H':
		select_thread(cmd + 2);
		return false;
	case 'T':
		thread_alive(cmd + 1);
		return false;
	case 'g':
	case 'p':
	case 'P':
		registers(t, cmd);
		return false;
	case 'm':
		read_memory(t, cmd + 1);
		return false;
	case 'M':
		write_memory(t, cmd + 1);
		return false;
	case 'Z':
	case 'z':
		point(t, cmd[0] == 'Z', cmd + 1);
		return false;
	case 'v':
		return dispatch_v(owner, cmd);
	case 'c':
	case 's':
	case 'C':
	case 'S':
		old_resume(owner, cmd);
		return true;
	case 'b':
		go_backwards(owner, cmd);
		return false;
	case 'D':
		return detach(cmd + 1);
	case 'k': /* no answer expected */
		travel_kill(dbg);
		return false;
	default:
		send_or_die("");
		return false;
	}
}

void server_converse(struct task *owner, const char *reply)
{
	snprintf(last_reply, sizeof(last_reply), "%s", reply);
	dbg->selected_vtid = owner->vtid;
	dbg->stepping_vtid = 0;
	action.step_vtid = 0;
	action.detach = false;
	if (dbg->connected)
		send_or_die(reply);
	static char buf[PACKET_MAX];
	for (;;) {
		checkpoints_wait_gdb(dbg->conn_fd);
		int n = packet_read(dbg->conn_fd, buf, sizeof(buf));
		if (n < 0)
			gdb_gone();
		const char *refusal = n > 0 ? travel_killed_refusal(dbg, buf) : NULL;
		if (refusal)
			send_or_die(refusal);
		else if (n > 0 && dispatch(owner, buf))
			break;
	}
	if (action.detach) {
		points_remove_all(owner);
		dbg->mode = MODE_DETACHED;
		close(dbg->conn_fd);
		dbg->conn_fd = -1;
		return;
	}
	dbg->stepping_vtid = action.step_vtid;
	dbg->connected = true; /* from now on gdb waits for a stop reply */
	dbg->arrived = false;
}

/* ---- the hooks ----------------------------------------------------------------------- */

/* After a conversation at a trap: the owner goes on as gdb asked. */
static void resume_owner(struct task *t)
{
	if (dbg->mode == MODE_LIVE && dbg->stepping_vtid == t->vtid) {
		points_step_over(t); /* single-steps, with an int3 under the pc taken out */
		return;
	}
	struct task *other = dbg->mode == MODE_LIVE ? server_find_vtid(dbg->stepping_vtid) : NULL;
	if (other) {
		set_trap_flag(other, true); /* steps when the scheduler next runs it */
		remote_store_regs(other);
	}
	continue_over(t);
}

static void reply_trap(struct task *t, enum trap_kind kind, uint64_t addr)
{
	char why[64], reply[128];
	if (kind == TRAP_WATCH)
		snprintf(why, sizeof(why), "watch:%llx;", (unsigned long long)addr);
	else
		snprintf(why, sizeof(why), "%s", kind == TRAP_BREAK ? "swbreak:;" : "");
	server_stop_reply(t, SIGTRAP, why, reply, sizeof(reply));
	server_converse(t, reply);
}

static void on_trap(struct task *t, enum trap_kind kind, uint64_t addr)
{
	if (dbg->now.time != sched_now()) /* events of sys_cpu.c (rdtsc, cpuid) come here too */
		dbg->now = (struct position){ sched_now(), 0 };
	if (kind != TRAP_STEP)
		dbg->now.hits++;
	char reply[128] = "";
	if (stepback_on_trap(dbg, t, kind, addr, reply, sizeof(reply))) {
		if (!reply[0])
			return; /* stepped on towards a position of stepback.c's */
		server_converse(t, reply);
	} else if (dbg->mode == MODE_SCAN && kind != TRAP_STEP) {
		if (position_cmp(dbg->now, dbg->goal) >= 0)
			travel_scan_done(dbg);
		if (procs_history_begun()) /* before, gdb could not be shown the hit */
			dbg->last_hit = dbg->now;
	} else if (dbg->mode == MODE_SEEK && !dbg->seek_event && kind != TRAP_STEP &&
		   position_cmp(dbg->now, dbg->goal) == 0) {
		dbg->mode = MODE_LIVE;
		reply_trap(t, kind, addr);
	} else if (dbg->mode == MODE_LIVE && (kind != TRAP_STEP || dbg->stepping_vtid == t->vtid)) {
		reply_trap(t, kind, addr);
	}
	resume_owner(t);
}

bool server_on_stop(struct task *t, int status)
{
	points_sync_task(t);
	bool stepped_over = points_after_step(t, status);
	if (calls_take_stop(t, status))
		return true;
	int event = (unsigned)status >> 16;
	if (event == 0 && (WSTOPSIG(status) == SIGSEGV || WSTOPSIG(status) == SIGILL) &&
	    (points_stepping(t) || dbg->stepping_vtid == t->vtid)) {
		/* The step met an instruction detrun emulates (rdtsc, cpuid): the emulation
		 * resumes it normally, and the trap flag ends the step one instruction on. */
		set_trap_flag(t, true);
		return false;
	}
	if (event != 0 || WSTOPSIG(status) != SIGTRAP)
		return false;
	uint64_t addr = 0;
	enum trap_kind kind = points_classify(t, &addr);
	bool ours = stepped_over || dbg->stepping_vtid == t->vtid;
	if (kind == TRAP_NONE && dbg->stepping_vtid == t->vtid && points_step_report(t))
		kind = TRAP_STEP;
	if (kind == TRAP_NONE || (kind == TRAP_STEP && !ours))
		return false; /* the program's own int3 or trap flag */
	if (kind == TRAP_BREAK && !procs_followed(t)) {
		continue_over(t); /* a vfork child met its parent's int3: no stop for gdb */
		return true;
	}
	if (kind == TRAP_STEP)
		set_trap_flag(t, false); /* ours, set after an emulated instruction, or none */
	if (kind == TRAP_STEP && dbg->stepping_vtid != t->vtid) {
		continue_over(t); /* our own step over an int3 */
		return true;
	}
	on_trap(t, kind, addr);
	return true;
}

/* gdb sent something while the group ran: an interrupt (Ctrl-C), or it went away. All-stop
 * gdb sends nothing else while the group runs; anything else is dropped. */
bool gdb_interrupt_waiting(void)
{
	struct pollfd p = { dbg->conn_fd, POLLIN, 0 };
	if (poll(&p, 1, 0) <= 0)
		return false;
	char c;
	ssize_t n = recv(dbg->conn_fd, &c, 1, MSG_DONTWAIT);
	if (n == 0)
		gdb_gone();
	return n == 1 && c == 3;
}

/* A stop at an event. A step asked for there: the trap flag stops the task one
 * instruction after it next runs. Stored now: the call's handler may inject calls, which
 * start from the kernel's copy of the registers. */
void converse_at_event(struct task *t, const char *reply)
{
	server_converse(t, reply);
	struct task *stepping = dbg->stepping_vtid ? server_find_vtid(dbg->stepping_vtid) : NULL;
	if (stepping) {
		set_trap_flag(stepping, true);
		remote_store_regs(stepping);
	}
}

void server_converse_resume(struct task *t, const char *reply)
{
	converse_at_event(t, reply);
}

void server_seek_arrives(struct task *t)
{
	dbg->mode = MODE_LIVE;
	char reply[128];
	bool history_begins = dbg->at_begin && !dbg->run_begin;
	server_stop_reply(t, 0, history_begins ? "replaylog:begin;" : "", reply, sizeof(reply));
	converse_at_event(t, reply);
}

static void first_stop(struct task *t)
{
	int fd = listen_accept();
	if (fd < 0)
		gdb_gone();
	dbg->conn_fd = fd;
	char reply[64];
	server_stop_reply(t, SIGTRAP, "", reply, sizeof(reply));
	converse_at_event(t, reply);
}

/* A process gdb follows, not the last one, was killed by a signal: gdb is told at the next
 * event it sees (X with the signal), as it is told of an exit at its exit_group
 * (procs_exit_reply), so that it drops the inferior instead of showing it alive. */
static struct {
	pid_t ns;
	int sig;
} killed;

static void on_death(struct task *t, int status)
{
	if (dbg->mode != MODE_LIVE || !WIFSIGNALED(status) || t->tid != t->proc->tgid ||
	    !procs_followed(t) || procs_count() < 2)
		return;
	killed.ns = t->proc->ns_tgid;
	killed.sig = WTERMSIG(status);
	procs_unfollow(t->proc->tgid);
	points_drop_process(t, false);
}

static void live_event(struct task *t)
{
	char reply[128];
	struct task *shown = procs_shown(t); /* t, or a thread of a process gdb follows */
	if (!shown)
		return;
	int sig = t->syscall_nr == -1 && shown == t ? t->inject_signal : 0;
	if (sig) {
		server_stop_reply(t, sig, "", reply, sizeof(reply));
	} else if (procs_group_ending(t)) {
		server_stop_reply(shown, SIGKILL, "", reply, sizeof(reply));
	} else if (procs_exit_reply(t, reply, sizeof(reply))) {
		;
	} else if (killed.ns) {
		snprintf(reply, sizeof(reply), "X%02x;process:%x", gdb_signal(killed.sig),
			 killed.ns);
		killed.ns = 0;
	} else if (dbg->goto_time && dbg->now.time >= dbg->goto_time) {
		dbg->goto_time = 0;
		server_stop_reply(shown, 0, "", reply, sizeof(reply)); /* gdb: "stopped" */
	} else if (dbg->stepping_vtid == t->vtid || gdb_interrupt_waiting() ||
		   interrupt_take_pending()) {
		server_stop_reply(shown, dbg->stepping_vtid == t->vtid ? SIGTRAP : SIGINT, "",
				  reply, sizeof(reply));
		set_trap_flag(t, false);
	} else {
		return;
	}
	converse_at_event(shown, reply);
}

void server_on_event(struct task *t)
{
	if (dbg->mode == MODE_DETACHED)
		return;
	dbg->now = (struct position){ sched_now(), 0 };
	checkpoints_passed(dbg->now.time);
	procs_start(t);
	points_refresh(t);
	points_sync_all();
	if (stepback_on_event(dbg, t))
		return;
	if (listen_waiting()) {
		if (t->syscall_nr != SYS_execve) /* the first stop is in the program */
			first_stop(t);
	} else if (dbg->mode == MODE_SCAN) {
		if (position_cmp(dbg->now, dbg->goal) >= 0)
			travel_scan_done(dbg);
	} else if (dbg->mode == MODE_SEEK) {
		if (dbg->at_begin && t->syscall_nr == SYS_execve)
			return; /* the start is in the program, as the first stop was */
		/* Shown in a process gdb follows: none yet, the stop waits for one. The start
		 * of the history waits for every one (procs.c). */
		struct task *shown = procs_shown(t);
		if (dbg->seek_event && position_cmp(dbg->now, dbg->goal) >= 0 && shown &&
		    (!dbg->at_begin || procs_history_begun())) {
			if (dbg->park) { /* a checkpoint's copy: used now, with gdb's request */
				checkpoints_park(dbg, t);
				server_on_event(t);
				return;
			}
			server_seek_arrives(shown);
		}
	} else {
		live_event(t);
	}
}

int server_finish(int code)
{
	if (dbg->mode != MODE_LIVE || dbg->conn_fd < 0)
		return code;
	char reply[48];
	snprintf(reply, sizeof(reply), code > 128 ? "X%02x;process:%x" : "W%02x;process:%x",
		 code > 128 ? gdb_signal(code - 128) : code & 0xff, procs_first_pid());
	if (packet_send(dbg->conn_fd, reply, strlen(reply)) == 0) {
		static char buf[PACKET_MAX];
		int n;
		while ((n = packet_read(dbg->conn_fd, buf, sizeof(buf))) >= 0) {
			if (n > 0 && !strncmp(buf, "vRun", 4))
				travel_restart(dbg); /* `run` again after the end */
			if (n > 0 &&
			    (buf[0] == 'k' || buf[0] == 'D' || !strncmp(buf, "vKill", 5))) {
				if (buf[0] != 'k')
					packet_send(dbg->conn_fd, "OK", 2);
				break;
			}
			if (n > 0)
				packet_send(dbg->conn_fd, buf[0] == '?' ? reply : "E01",
					    buf[0] == '?' ? strlen(reply) : 3);
		}
	}
	close(dbg->conn_fd);
	dbg->conn_fd = -1;
	return code;
}

/* ---- the table the stop loop calls ----------------------------------------------------- */

static void on_fork(struct task *parent, struct task *child)
{
	procs_on_fork(dbg, parent, child);
}

static void on_exec(struct task *t)
{
	procs_on_exec(dbg, t);
}

static bool poll_interrupt(struct task *t, void (*handle)(int tid, int status))
{
	return interrupt_poll(dbg, t, handle);
}

static int wait_fd(void)
{
	return interrupt_wait_fd(dbg);
}

static bool single_stepping(const struct task *t)
{
	return dbg->stepping_vtid == t->vtid || points_stepping(t);
}

static const struct debugger_ops gdb_server = {
	.on_stop = server_on_stop,
	.on_event = server_on_event,
	.on_fork = on_fork,
	.on_exec = on_exec,
	.on_death = on_death,
	.poll = poll_interrupt,
	.single_stepping = single_stepping,
	.wait_fd = wait_fd,
	.idle_input = interrupt_idle_input,
	.finish = server_finish,
};

void server_start(struct dbg_state *session)
{
	dbg = session;
	tracer_set_debugger(&gdb_server);
}
