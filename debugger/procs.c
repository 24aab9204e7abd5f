/* The processes gdb follows (gdb's multiprocess extensions): thread ids as gdb sees them,
 * and the stops that tell it of a fork or an exec.
 *
 * gdb names a thread p<pid>.<tid> with the ids the group itself sees (its PID namespace),
 * so that they match what the program prints. It follows the first process from the start;
 * a process it follows that forks is reported with a `fork` stop, and gdb then either
 * keeps the child (set detach-on-fork off: a new inferior, whose breakpoints are its
 * parent's, since its memory is a copy) or detaches it (D;pid: its breakpoints go and it
 * runs on unwatched, still in the group). An exec of a followed process is an `exec` stop
 * with the new program's path: gdb loads its symbols and sets its breakpoints anew, the old
 * image's are dropped (its memory is gone). vfork children share their parent's memory
 * and are not followed: a breakpoint they meet is stepped over silently.
 *
 * Going back stays in the processes gdb follows. Each is followed since a logical time:
 * the start (the first process), the fork that made it, the exec of its program, whichever
 * came last; before that time gdb knew another program in it, or none. A re-execution
 * gets that list (the `plan`) and follows each process from its time, not the first one
 * from the start: only their breakpoints and watchpoints are set and counted, stops are
 * shown in them, and the start of the history is the first process's time, where a
 * reverse-continue that finds no hit stops (README, Debugging a recording). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/remote.h"
#include "debugger/internal.h"
#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "vkernel/report.h"
#include "vkernel/task.h"

enum {
	MAX_FOLLOWED = 64
};
static struct {
	pid_t tgid;     /* host pid */
	pid_t ns;       /* as the group sees it */
	uint64_t since; /* the logical time gdb has known its program from */
} followed[MAX_FOLLOWED];
static int n_followed;
/* A re-execution: the processes gdb followed where it went back from. */
static struct {
	pid_t ns;
	uint64_t since;
} plan[MAX_FOLLOWED];
static int n_plan;
static pid_t last_gone = 1; /* the pid of the last process followed */
static bool started;        /* the first process is followed from its first event */

static bool alive(const struct task *t)
{
	return t->state == TASK_STOPPED || t->state == TASK_RUNNING;
}

bool procs_followed(const struct task *t)
{
	for (int i = 0; i < n_followed; i++)
		if (followed[i].tgid == t->proc->tgid)
			return true;
	return false;
}

static void follow(const struct task *t, uint64_t since)
{
	if (!procs_followed(t) && n_followed < MAX_FOLLOWED)
		followed[n_followed++] = (typeof(followed[0])){ t->proc->tgid, t->proc->ns_tgid,
								since };
}

uint64_t procs_since(const struct task *t)
{
	for (int i = 0; i < n_followed; i++)
		if (followed[i].tgid == t->proc->tgid)
			return followed[i].since;
	return UINT64_MAX;
}

/* gdb goes back no further than where every process it follows has the program it knows:
 * earlier, a fork it knows of would be reported to it again on the way forward. */
uint64_t procs_history_start(void)
{
	uint64_t start = 0;
	for (int i = 0; i < n_followed; i++)
		start = followed[i].since > start ? followed[i].since : start;
	return start;
}

bool procs_history_begun(void)
{
	return n_followed > 0 && n_followed >= n_plan;
}

void procs_plan(pid_t ns, uint64_t since)
{
	if (n_plan < MAX_FOLLOWED)
		plan[n_plan++] = (typeof(plan[0])){ ns, since };
}

void procs_describe(char *spec, size_t size)
{
	size_t n = strlen(spec);
	for (int i = 0; i < n_followed && n < size - 40; i++)
		n += (size_t)snprintf(spec + n, size - n, "/p%d.%llu", followed[i].ns,
				      (unsigned long long)followed[i].since);
}

/* Since when gdb followed t's process where it went back from (UINT64_MAX: not). */
static uint64_t plan_since(const struct task *t)
{
	for (int i = 0; i < n_plan; i++)
		if (plan[i].ns == t->proc->ns_tgid)
			return plan[i].since;
	return UINT64_MAX;
}

/* A re-execution follows t's process if gdb did where it went back from, from the time it
 * did: true when it starts now. */
static bool follow_planned(const struct task *t)
{
	for (int i = 0; i < n_plan; i++)
		if (plan[i].ns == t->proc->ns_tgid && plan[i].since == sched_now() &&
		    !procs_followed(t)) {
			follow(t, plan[i].since);
			return true;
		}
	return false;
}

void procs_start(struct task *t)
{
	bool planned = !n_plan;
	for (int i = 0; i < n_plan; i++)
		planned |= plan[i].ns == t->proc->ns_tgid && plan[i].since == 0;
	if (!started && planned)
		follow(t, 0);
	started = true;
}

int procs_count(void)
{
	return n_followed;
}

pid_t procs_first_pid(void)
{
	return n_followed ? followed[0].ns : last_gone;
}

void procs_unfollow(pid_t tgid)
{
	for (int i = 0; i < n_followed; i++)
		if (followed[i].tgid == tgid) {
			last_gone = followed[i].ns;
			followed[i] = followed[--n_followed];
			return;
		}
}

struct task *procs_shown(struct task *t)
{
	if (t && procs_followed(t))
		return t;
	for (struct task *u = sched_first(); u; u = u->next)
		if (alive(u) && procs_followed(u))
			return u;
	return NULL;
}

void procs_ptid(const struct task *t, char *out, size_t size)
{
	snprintf(out, size, "p%x.%x", t->proc->ns_tgid, t->ns_tid);
}

/* One id of a thread id: hex, or -1 (all). */
static long read_id(const char **p)
{
	if (**p != '-')
		return (long)hex_number(p);
	(*p)++;
	hex_number(p);
	return -1;
}

struct task *procs_parse_thread(const char **p)
{
	long pid = 0, tid;
	if (**p == 'p') {
		(*p)++;
		pid = read_id(p);
		tid = -1;
		if (**p == '.') {
			(*p)++;
			tid = read_id(p);
		}
	} else {
		tid = read_id(p);
	}
	for (struct task *t = sched_first(); t; t = t->next) {
		if (!alive(t) || (pid > 0 && t->proc->ns_tgid != pid))
			continue;
		if (tid > 0 ? t->ns_tid == tid : pid > 0)
			return t;
	}
	return NULL; /* any thread (0, -1), or none such */
}

struct task *procs_find_process(const char *hex)
{
	const char *p = hex;
	long pid = (long)hex_number(&p);
	for (struct task *t = sched_first(); t; t = t->next)
		if (alive(t) && t->proc->ns_tgid == pid)
			return t;
	return NULL;
}

bool procs_detach(const char *args)
{
	struct task *t = *args == ';' ? procs_find_process(args + 1) : NULL;
	if (!t || procs_count() < 2)
		return false; /* the last one: detach from the group */
	points_drop_process(t, true);
	procs_unfollow(t->proc->tgid);
	return true;
}

/* Reports a fork of a followed process in a live session: gdb decides to keep or detach
 * the child; until it detaches it, it is followed with the parent's breakpoints. */
static void report_fork(struct task *parent, struct task *child)
{
	char reply[160], child_id[40], parent_id[40];
	procs_ptid(child, child_id, sizeof(child_id));
	procs_ptid(parent, parent_id, sizeof(parent_id));
	snprintf(reply, sizeof(reply), "T05fork:%s;thread:%s;", child_id, parent_id);
	follow(child, sched_now());
	server_converse_resume(parent, reply);
}

/* A re-execution reached the time from which gdb follows t's process: its points go in,
 * and a seek to the start of the history stops here. */
static void planned_birth(struct dbg_state *dbg, struct task *t)
{
	points_refresh(t);
	points_sync_task(t);
	if (dbg->mode == MODE_SEEK && dbg->at_begin && procs_history_begun())
		server_seek_arrives(t);
}

void procs_on_fork(struct dbg_state *dbg, struct task *parent, struct task *child)
{
	if (child->proc == parent->proc || child->proc->aspace == parent->proc->aspace)
		return; /* a thread, or a vfork child sharing the memory and its int3s */
	bool report = dbg->mode == MODE_LIVE && dbg->connected && procs_followed(parent) &&
		      n_followed < MAX_FOLLOWED;
	points_fork(parent, child, report);
	if (!report) {
		if (dbg->mode != MODE_DETACHED && follow_planned(child))
			planned_birth(dbg, child);
		stepback_on_fork(dbg, child); /* shown to gdb once followed */
		return;
	}
	report_fork(parent, child);
}

void procs_on_exec(struct dbg_state *dbg, struct task *t)
{
	points_task_execed(t);
	if (dbg->mode != MODE_LIVE || !dbg->connected) {
		/* The points a re-execution restored are gdb's of its last stop: the new
		 * image's, followed from here if gdb followed it from this exec. */
		points_unplace_process(t);
		if (dbg->mode == MODE_DETACHED)
			return;
		if (follow_planned(t))
			planned_birth(dbg, t);
		else if (n_plan && procs_since(t) < plan_since(t))
			procs_unfollow(t->proc->tgid); /* gdb knew its old program before */
		return;
	}
	points_drop_process(t, false); /* the old image is gone, and its int3s with it */
	if (!procs_followed(t))
		return;
	for (int i = 0; i < n_followed; i++)
		if (followed[i].tgid == t->proc->tgid)
			followed[i].since = sched_now(); /* gdb knows the new program from here */
	char exe[64], path[1024], hex[2 * sizeof(path) + 1], id[40];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", t->tid);
	ssize_t n = readlink(exe, path, sizeof(path) - 1);
	if (n <= 0)
		return;
	hex_encode(hex, path, (size_t)n);
	procs_ptid(t, id, sizeof(id));
	static char reply[sizeof(hex) + 64];
	snprintf(reply, sizeof(reply), "T05exec:%s;thread:%s;", hex, id);
	dbg->now = (struct position){ sched_now(), dbg->now.hits };
	server_converse_resume(t, reply);
}

/* The last thread of a followed process other than the first one exits: gdb is told the
 * process is gone (W with its pid), so that it drops the inferior. */
bool procs_exit_reply(struct task *t, char *out, size_t size)
{
	if (t->syscall_nr != SYS_exit_group && t->syscall_nr != SYS_exit)
		return false;
	if (!procs_followed(t) || procs_count() < 2)
		return false;
	for (struct task *u = sched_first(); u; u = u->next)
		if (u != t && alive(u) && u->proc == t->proc && t->syscall_nr == SYS_exit)
			return false;
	snprintf(out, size, "W%02x;process:%x", (unsigned)(syscall_arg(t, 0) & 0xff),
		 t->proc->ns_tgid);
	procs_unfollow(t->proc->tgid);
	points_drop_process(t, false);
	return true;
}

/* Does the group end with this event (the last process's exit_group, the last task's
 * exit)? The stop comes before it, so that gdb can still look, and go back. */
bool procs_group_ending(const struct task *t)
{
	if (t->syscall_nr != SYS_exit_group && t->syscall_nr != SYS_exit)
		return false;
	for (struct task *u = sched_first(); u; u = u->next)
		if (u != t && (u->state == TASK_STOPPED || u->state == TASK_RUNNING) &&
		    (t->syscall_nr == SYS_exit || u->proc != t->proc))
			return false;
	return true;
}
