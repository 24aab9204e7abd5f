/*
 * Task lifecycle: the first task, processes and threads created (clone, fork, vfork),
 * exec, exit and reaping. Deaths are reaped before the scheduler picks (tracer_quiesce),
 * so every member sees a death at one logical time.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h>

#include "scheduler/futex_queue.h"
#include "scheduler/scheduler.h"
#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "engine/auxv.h"
#include "engine/cpu_patch.h"
#include "engine/debugger_hooks.h"
#include "engine/foreground.h"
#include "engine/jobctl.h"
#include "engine/launch.h"
#include "engine/remote.h"
#include "engine/vdso.h"
#include "vkernel/host_status.h"
#include "vkernel/memory_domain.h"
#include "engine/page_share.h"
#include "engine/touch_ticks.h"
#include "vkernel/report.h"
#include "engine/seccomp_filter.h"
#include "vkernel/task.h"
#include "engine/tracer.h"
#include "vkernel/signal_bits.h"
#include "engine/cpu_emulate.h"
#include "engine/handler_ops.h"
#include "vkernel/timers.h"
#include "engine/trap_signals.h"
#include "engine/tracer_internal.h"

static pid_t root_tgid;      /* the first process: its exit status is detrun's */
static pid_t namespace_init; /* pid 1 of the group's PID namespace, or 0 */
static int root_status = -1;
static int next_aspace = 1;

/* Stops reported for tasks not yet known (a new child can report before its parent's
 * clone event has been handled). */
static struct early_stop {
	pid_t tid;
	int status;
} early[64];
static int n_early;

static uint64_t read_ignored_signals(const struct task *t)
{
	char buf[4096];
	return proc_status_read(t->tid, buf, sizeof(buf))
		       ? 0
		       : proc_status_field(buf, "\nSigIgn:", 16, 0);
}

/* The program (the first process) has exited and the tasks it left behind wait for each
 * other for ever: natively the shell would have its prompt back, so detrun ends the run
 * with the program's exit status, killing them (a deterministic point: nothing can wake
 * them). Orphans that still run, sleep or wait for the outside keep the run going. */
static bool end_orphans(void)
{
	if (root_status == -1)
		return false;
	warn("the program exited; at t=%llu the tasks it left behind wait for ever: ending them",
	     (unsigned long long)sched_now());
	for (struct task *t = sched_first(); t; t = t->next) {
		if (t->state == TASK_DEAD)
			continue;
		if (t->state == TASK_STOPPED)
			fprintf(stderr, "detrun:   task %d: %s\n", t->vtid,
				t->parked ? t->wait.what : "runnable");
		t->proc->dying = true;
		kill(t->tid, SIGKILL);
	}
	return true;
}

void tracer_report_deadlock(void)
{
	if (end_orphans())
		return;
	if (jobctl_all_stopped()) {
		/* A replay's SIGCONT comes from the log, at the look the recording took it: no
		 * one outside would continue a stopped detrun. */
		if (!shim_get()->decides_readiness)
			foreground_stop_with_group();
		return;
	}
	warn("deadlock at t=%llu: no task can run and nothing outside the group can wake one",
	     (unsigned long long)sched_now());
	for (struct task *t = sched_first(); t; t = t->next)
		if (t->state == TASK_STOPPED)
			fprintf(stderr, "detrun:   task %d (tid %d): %s\n", t->vtid, t->ns_tid,
				t->traced_stop ? "stopped by its tracer (ptrace)"
				: t->parked    ? t->wait.what
					       : "runnable");
	fprintf(stderr, "detrun:   waiting for a signal from outside (Ctrl-C ends the group)\n");
}

/* The innermost pid of NSpid: what the task itself sees from inside the group's PID
 * namespace (the host tid when there is no namespace). */
static pid_t read_ns_tid(pid_t tid)
{
	char buf[4096];
	if (proc_status_read(tid, buf, sizeof(buf)))
		return tid;
	char *line = strstr(buf, "\nNSpid:");
	if (!line)
		return tid;
	line += 8;
	pid_t last = tid;
	char *end;
	for (long v; (v = strtol(line, &end, 10)), end != line; line = end)
		last = (pid_t)v;
	return last;
}

struct task *task_new(pid_t tid, struct process *proc)
{
	struct task *t = calloc(1, sizeof(*t));
	if (!t)
		abort();
	t->tid = tid;
	t->proc = proc;
	proc->refs++;
	t->syscall_nr = -1;
	t->probe_restart_nr = -1;
	t->external_restart_nr = -1;
	return t;
}

void task_free(struct task *t)
{
	seccomp_filter_unref(t->filters);
	if (--t->proc->refs == 0) {
		vdso_release(t->proc);
		free(t->proc);
	}
	free(t);
}

static struct process *new_process(pid_t tgid, int aspace)
{
	struct process *p = calloc(1, sizeof(*p));
	if (!p)
		abort();
	p->tgid = tgid;
	p->aspace = aspace;
	p->pidfd = -1;
	p->stat_fd = -1;
	p->start_ns = vclock_now();
	return p;
}

static int live_threads(const struct process *p)
{
	int n = 0;
	for (struct task *t = sched_first(); t; t = t->next)
		n += t->proc == p && t->state != TASK_DEAD && t->state != TASK_EXITING;
	return n;
}

/* Does a live task besides t use t's memory (a thread, or a CLONE_VM process)? The kernel
 * clears and wakes the tid word only then. */
static bool memory_shared(const struct task *t)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u != t && u->proc->aspace == t->proc->aspace && u->state != TASK_DEAD &&
		    u->state != TASK_EXITING)
			return true;
	return false;
}

static void wake_joiner(struct task *t)
{
	struct futex_key key = { (uint64_t)t->proc->aspace, 0, t->clear_child_tid };
	futex_wake(key, 1, ~0u, tracer_handlers->joiner_woken);
}

void tracer_task_died(struct task *t, int status)
{
	t->state = TASK_DEAD;
	t->exit_status = status;
	futex_dequeue(t);
	if (t->clear_child_tid && memory_shared(t))
		wake_joiner(t);
	if (t->proc->vfork_parent && t->tid == t->proc->tgid)
		t->proc->vfork_parent = NULL;
	if (t->tid == root_tgid)
		root_status = status;
	if (t->tid == t->proc->tgid) {
		timers_process_gone(t->proc->tgid, false);
		sched_children_changed();
		sched_signals_changed(); /* SIGCHLD for the parent */
		remote_forget_process(t->proc);
		memory_domain_forget(t->proc);
		page_share_gone(t->proc);
		touch_forget(t->proc);
	}
	if (t->is_leader || t->tid == t->proc->tgid)
		trace_event(t, "exited, status 0x%x", status);
	tracer_handlers->task_gone(t);
	if (tracer_debugger)
		tracer_debugger->on_death(t, status);
	sched_remove(t);
	task_free(t);
}

/* The kernel reports a thread-group leader's death only after every other thread is gone;
 * waiting for it earlier would hang. */
static bool death_delayed(const struct task *t)
{
	if (t->tid != t->proc->tgid)
		return false;
	for (struct task *u = sched_first(); u; u = u->next)
		if (u != t && u->proc == t->proc && u->state != TASK_DEAD)
			return true;
	return false;
}

void on_exit_event(struct task *t)
{
	if (t->syscall_nr != __NR_exit || live_threads(t->proc) <= 1)
		t->proc->dying = true;
	if (live_threads(t->proc) <= 1)
		tracer_handlers->process_exiting(t);
	t->state = TASK_EXITING;
	if (t->parked)
		sched_unpark(t);
	if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0 && errno != ESRCH)
		task_warn(t, "cannot let the task exit: %s", strerror(errno));
}

static struct task *adopt_child(struct task *parent, pid_t tid, int event)
{
	uint64_t flags = parent->exit.clone.flags;
	struct process *p;
	if (event == PTRACE_EVENT_CLONE && (flags & CLONE_THREAD)) {
		p = parent->proc;
	} else {
		/* A clone with CLONE_VM and exit signal SIGCHLD reports PTRACE_EVENT_FORK:
		 * the flags, not the event, say whether the memory is shared. */
		bool shares_vm = event == PTRACE_EVENT_VFORK || (flags & CLONE_VM);
		p = new_process(tid, shares_vm ? parent->proc->aspace : next_aspace++);
		p->caught = parent->proc->caught;
		p->ignored = parent->proc->ignored;
		p->sa_restart = parent->proc->sa_restart;
		p->syscall_insn = parent->proc->syscall_insn;
		p->persona = parent->proc->persona;
		p->read_implies_exec = parent->proc->read_implies_exec;
		trap_signals_inherit(p, parent->proc);
		if (!shares_vm)
			cpu_patch_inherit(parent->proc->aspace, p->aspace);
		if (event == PTRACE_EVENT_VFORK || (flags & CLONE_VFORK))
			p->vfork_parent = parent;
		memory_domain_forked(parent->proc, p,
				     event == PTRACE_EVENT_VFORK ? CLONE_VM | CLONE_VFORK : flags);
	}
	struct task *child = task_new(tid, p);
	sched_add(child);
	child->ns_tid = read_ns_tid(tid);
	if (p != parent->proc)
		p->ns_tgid = child->ns_tid;
	if (flags & CLONE_CHILD_CLEARTID)
		child->clear_child_tid = parent->exit.clone.child_tid;
	child->is_leader = child->tid == p->tgid;
	child->creator_tid = parent->tid;
	child->vcpu = parent->vcpu;               /* affinity is inherited */
	child->tsc_sigsegv = parent->tsc_sigsegv; /* the kernel's TSC mode is inherited too */
	child->filters = seccomp_filter_ref(parent->filters);

	int status = -1;
	for (int i = 0; i < n_early; i++)
		if (early[i].tid == tid) {
			status = early[i].status;
			early[i] = early[--n_early];
			break;
		}
	if (status == -1 && waitpid_retry(tid, &status, __WALL) < 0)
		task_die(parent, "lost new task %d: %s", tid, strerror(errno));
	child->state = TASK_STOPPED;
	uint64_t clone3_args = parent->exit.clone.clone3_args;
	if (clone3_args && remote_load_regs(child) == 0) /* clone3 read a copy */
		syscall_set_arg(child, 0, clone3_args);
	trace_event(parent, "  new task %d (tid %d)%s", child->vtid, tid,
		    p == parent->proc ? " thread" : " process");
	return child;
}

static enum wait_result vfork_released(struct task *parent)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u->proc->vfork_parent == parent)
			return WAIT_NOT_READY;
	return WAIT_READY;
}

void on_clone_event(struct task *parent, int event)
{
	unsigned long msg = 0;
	ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg);
	struct task *child = adopt_child(parent, (pid_t)msg, event);
	vdso_forked(parent, child);
	parent->exit.clone.flags = parent->exit.clone.child_tid = 0;
	/* clone3 read a copy of its arguments: the program's register comes back here, as
	 * the tracer_resume below does not stop at the call's exit. */
	if (parent->exit.clone.clone3_args && remote_load_regs(parent) == 0)
		syscall_set_arg(parent, 0, parent->exit.clone.clone3_args);
	parent->exit.clone.clone3_args = 0;
	parent->state = TASK_STOPPED;
	tracer_handlers->cloned(parent, child, event);
	if (tracer_debugger)
		tracer_debugger->on_fork(parent, child);
	if (tracer_parallel())
		parallel_forked(parent, child);
	page_share_forked(parent, child);
	touch_forked(parent, child);
	if (child->proc->vfork_parent == parent) {
		/* The parent sleeps in the kernel until the child execs or exits. */
		struct wait w = { .what = "vfork", .deadline_ns = -1, .ready = vfork_released };
		sched_park(parent, &w);
		return;
	}
	if (sched_of(parent)->traced_stop)
		tracer_held_event(parent); /* its event stop, held for its tracer */
	else
		tracer_resume(parent);
}

/* What a new image needs before its first instruction; a step that fails ends the run
 * (report.h, task_setup_failed). trap_signals_exec only warns: a stand-in action that
 * cannot be installed changes what a program blocking SIGSEGV or SIGILL sees after a
 * trap, not what it reads. */
static void exec_prepare(struct task *t)
{
	const char *step;
	uint64_t vdso_ehdr = 0;
	t->in_exec_stop = true;
	int err = exec_setup(t, !tracer_opts->keep_vdso, &vdso_ehdr, &step);
	if (!err)
		trap_signals_exec(t);
	t->in_exec_stop = false;
	if (!err)
		err = auxv_rewrite(t, !tracer_opts->keep_vdso, vdso_ehdr, &step);
	persona_exec(t);
	if (!err)
		err = cpu_patch_mappings(t, &step);
	if (err)
		task_setup_failed(t, step, err);
}

/* After a multithreaded exec the exec'ing thread takes the leader's tid. */
void on_exec_event(struct task *reported)
{
	unsigned long former = 0;
	ptrace(PTRACE_GETEVENTMSG, reported->tid, 0, &former);
	struct task *t = reported;
	if ((pid_t)former != reported->tid) {
		struct task *execer = sched_find((pid_t)former);
		if (execer) {
			struct process *p = reported->proc;
			reported->state = TASK_DEAD;
			tracer_handlers->task_gone(reported);
			sched_remove(reported);
			task_free(reported);
			execer->tid = p->tgid;
			execer->ns_tid = p->ns_tgid;
			t = execer;
		}
	}
	struct process *p = t->proc;
	p->dying = false; /* the other threads died for the exec, not the process */
	p->aspace = next_aspace++;
	p->touch_brk = 0;
	p->touch_failed = false;
	touch_forget(NULL); /* the old address space, unless a vfork parent has it */
	vdso_release(p);
	p->syscall_insn = 0;
	p->caught = 0; /* handlers do not survive exec; ignored signals do */
	p->sa_restart = 0;
	p->ignored = read_ignored_signals(t);
	timers_process_gone(p->tgid, true);
	if (p->vfork_parent)
		p->vfork_parent = NULL;
	t->is_leader = true;
	t->clear_child_tid = 0;
	t->regs_valid = false;
	exec_prepare(t);
	/* exec_prepare's injected calls took the execve's exit stop: the call is done. */
	t->in_call = false;
	tracer_handlers->exec_done(t);
	trace_event(t, "  exec done");
	sched_children_changed();
	if (tracer_debugger)
		tracer_debugger->on_exec(t);
	if (sched_of(t)->traced_stop)
		tracer_held_event(t); /* its exec event stop, held for its tracer */
	else
		tracer_resume(t);
}

/* Reaps every task that is on its way out, so deaths happen at one logical time. */
void tracer_quiesce(void)
{
	for (;;) {
		bool waiting = false;
		for (struct task *t = sched_first(); t; t = t->next)
			if ((t->state == TASK_EXITING || t->proc->dying) && !death_delayed(t))
				waiting = true;
		if (!waiting)
			return;
		int status;
		pid_t got = tracer_wait_any(&status);
		if (got < 0)
			return;
		if (got > 0)
			tracer_handle_status(got, status);
	}
}

/* Kills every task and waits until each is gone, so nothing of the group outlives detrun
 * even by the moment it takes to die. A killed tracee still stops once on its way out
 * (PTRACE_EVENT_EXIT) and must be let go on. */
void tracer_kill_group(void)
{
	for (struct task *t = sched_first(); t; t = t->next)
		kill(t->tid, SIGKILL);
	if (namespace_init > 0)
		kill(namespace_init, SIGKILL);
	for (;;) {
		bool alive = false;
		for (struct task *t = sched_first(); t; t = t->next)
			alive |= t->state != TASK_DEAD;
		if (!alive)
			break;
		int status;
		pid_t pid = waitpid_retry(-1, &status, __WALL);
		if (pid < 0)
			break;
		struct task *t = sched_find(pid);
		if (WIFSTOPPED(status))
			ptrace(PTRACE_CONT, pid, 0, 0);
		else if (t)
			t->state = TASK_DEAD;
	}
	if (namespace_init > 0)
		waitpid_retry(namespace_init, NULL, __WALL);
}

int tracer_exit_code(int status)
{
	if (status < 0)
		return 125;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int tracer_group_status(int if_unknown)
{
	return root_status >= 0 ? root_status : if_unknown;
}

void tracer_note_early_stop(pid_t tid, int status)
{
	if (n_early < 64)
		early[n_early++] = (struct early_stop){ tid, status };
}

/* The program's first task, stopped at its first event by launch_program. */
struct task *tracer_first_task(const struct launch *launched)
{
	struct process *p = new_process(launched->pid, next_aspace++);
	p->persona = (unsigned)personality(0xffffffff); /* what it would inherit natively */
	struct task *t = task_new(launched->pid, p);
	sched_add(t);
	t->ns_tid = p->ns_tgid = read_ns_tid(launched->pid);
	t->is_leader = true;
	t->state = TASK_RUNNING;
	root_tgid = launched->pid;
	namespace_init = launched->init_pid;
	return t;
}

struct task *tracer_task_in_aspace(int aspace, const struct process *except)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if (t->state != TASK_DEAD && t->proc != except && t->proc->aspace == aspace)
			return t;
	return NULL;
}
