/*
 * The stop loop: runs the task the scheduler picked until its next event, turns each
 * ptrace stop into an event (syscalls, signals; lifecycle stops go to tracer_tasks.c) and
 * serves the scheduler's questions about signals that end a wait.
 */
#include "engine/tracer.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sched.h>

#include "engine/debugger_hooks.h"
#include "scheduler/scheduler.h"
#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "engine/foreground.h"
#include "engine/jobctl.h"
#include "engine/launch.h"
#include "engine/nested_init.h"
#include "engine/remote.h"
#include "vkernel/host_status.h"
#include "vkernel/report.h"
#include "engine/seccomp_filter.h"
#include "engine/seccomp_strict.h"
#include "engine/spin.h"
#include "engine/stack.h"
#include "engine/cpu_emulate.h"
#include "engine/trap_signals.h"
#include "engine/filter.h"
#include "engine/vdso.h"
#include "vkernel/task.h"
#include "vkernel/signal_bits.h"
#include "vkernel/random.h"
#include "engine/handler_ops.h"
#include "vkernel/timers.h"
#include "syscalls/syscall_table.h"
#include "engine/tracer_internal.h"

static void timeline_event(struct task *t);

const struct tracer_options *tracer_opts;
const struct handler_ops *tracer_handlers;
const struct debugger_ops *tracer_debugger;

void tracer_set_handler_ops(const struct handler_ops *ops)
{
	tracer_handlers = ops;
}

void tracer_set_debugger(const struct debugger_ops *ops)
{
	tracer_debugger = ops;
}

void reap_waiting_stops(void)
{
	int status;
	pid_t tid;
	while ((tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
		tracer_handle_status(tid, status);
	tracer_quiesce();
}

int read_signal_state(const struct task *t, uint64_t *pending, uint64_t *blocked)
{
	return proc_signal_state(t->tid, pending, blocked);
}

bool signal_is_caught(const struct task *t, int sig)
{
	return t->proc->caught & SIGBIT(sig);
}

static bool signal_ignored(const struct task *t, int sig)
{
	uint64_t default_ignore = SIGBIT(SIGCHLD) | SIGBIT(SIGCONT) | SIGBIT(SIGURG) |
				  SIGBIT(SIGWINCH);
	uint64_t default_stop = SIGBIT(SIGSTOP) | SIGBIT(SIGTSTP) | SIGBIT(SIGTTIN) |
				SIGBIT(SIGTTOU);
	if (t->proc->ignored & SIGBIT(sig))
		return true;
	if (signal_is_caught(t, sig))
		return false;
	return (default_ignore | default_stop) & SIGBIT(sig);
}

/* A parked task with a deliverable signal leaves its wait the way the kernel would leave a
 * sleeping syscall: restarted after a SA_RESTART handler (or a fatal default action), EINTR
 * otherwise. Calls that install their own mask run natively: with the signal pending and
 * unblocked under that mask they return at once, with the kernel's exact semantics. */
static int interrupt_wait(struct task *t)
{
	uint64_t pending, blocked;
	if (read_signal_state(t, &pending, &blocked))
		return 0;
	if (shim_intercepts()) /* a terminal's own copy is not a delivery (from_terminal) */
		pending &= ~(TERMINAL_SIGNALS & ~t->proc->terminal_due);
	uint64_t mask = t->wait.sigmask_arg ? t->wait.sigmask : blocked;
	uint64_t candidates = pending & ~mask & ~SIGBIT(SIGKILL);
	int sig = jobctl_stop_due(t);
	for (int s = 1; s <= 64 && !sig; s++)
		if ((candidates & SIGBIT(s)) && (!signal_ignored(t, s) || jobctl_stops(t, s)))
			sig = s;
	if (pending & SIGBIT(SIGKILL))
		sig = SIGKILL;
	if (!sig)
		return 0;
	trace_event(t, "  %s interrupted by signal %d", t->wait.what, sig);
	if (t->wait.on_interrupt)
		t->wait.on_interrupt(t);
	if (t->wait.sigmask_arg && !t->parked_at_exit) {
		if (t->wait.external)
			tracer_handlers->outside_wait_interrupted(t);
		return 1;
	}
	bool restart = !signal_is_caught(t, sig) ||
		       (t->wait.restartable && (t->proc->sa_restart & SIGBIT(sig)));
	remote_load_regs(t);
	if (t->parked_at_exit) {
		if (!restart)
			syscall_unrewind(t, -EINTR);
	} else if (restart) {
		syscall_skip_and_restart(t);
	} else {
		syscall_emulate(t, -EINTR);
	}
	return 1;
}

static struct sched_ops ops = {
	.interrupt_wait = interrupt_wait,
	.wait_outside = wait_outside,
	.report_deadlock = tracer_report_deadlock,
	.fire_timers = timers_fire,
	.between_events = pass_outside_signals,
	.next_timer = timers_next_deadline,
	.stops_pending = waiting_stops_pending,
	.woken = vdso_resumed,
};

/* The virtual time t's process stands at: serially the clock's (t is resumed only at points
 * of the timeline); in parallel mode its own last event's, since other domains move the
 * clock meanwhile at moments the wall clock picks. */
static int64_t process_now(const struct task *t)
{
	return tracer_parallel() && t->proc->event_ns ? t->proc->event_ns : vclock_now();
}

/* Virtual time moves only at events. While a signal timer is due soon for t's process
 * (timers_signal_near), or t is in seccomp strict mode, or its process has READ_IMPLIES_EXEC
 * (a PROT_READ mapping is code to scan: sys_misc.c), every syscall of t stops, the allowed
 * ones included: each is an event at its exit stop, so a computation that waits for its
 * timer signal and calls only allowed syscalls gets it at the same point on every run. */
static bool every_syscall_stops(const struct task *t)
{
	return t->seccomp_strict || t->proc->read_implies_exec || t->traced.syscall_mode ||
	       timers_signal_near(t->proc->tgid, process_now(t));
}

int tracer_resume_request(const struct task *t)
{
	return t->exit_stop_wanted || every_syscall_stops(t) ? PTRACE_SYSCALL : PTRACE_CONT;
}

/* A syscall stop of a tracee its tracer inside the group resumed with PTRACE_SYSCALL
 * (sys_ptrace.c decides and holds it): an event, and t stays stopped. */
static bool held_for_tracer(struct task *t, bool entry)
{
	if (!tracer_handlers->syscall_stop(t, entry))
		return false;
	t->state = TASK_STOPPED;
	timeline_event(t);
	return true;
}

void tracer_resume(struct task *t)
{
	/* A call that returns without another exit trap (syscall_unrewind, an exec): the
	 * exit stop its tracer is owed comes now, before it runs on. */
	if (t->traced.exit_due && held_for_tracer(t, false))
		return;
	spin_resuming(t);
	remote_store_regs(t);
	if (t->resume == RESUME_SYSCALL)
		t->exit_stop_wanted = true;
	int request = tracer_resume_request(t);
	if (tracer_parallel()) {
		/* A call the handler emulated (or put off to restart) runs nothing now: no
		 * exit stop to wait for, the timeline is free at once. Not while recording or
		 * replaying: the replay emulates calls the recording ran (and waited for),
		 * and both must look at the domains and the outside at the same points, or a
		 * timer, a signal or outside input lands at another event. */
		bool skipped = t->regs_valid && t->regs.orig_rax == (uint64_t)-1 &&
			       !shim_intercepts();
		if (t->at_entry && !skipped)
			t->in_call = true;
		t->at_entry = false;
		if (t->in_call)
			request = PTRACE_SYSCALL;
		t->run_cpu_ns = -1; /* its budget starts at the next look (parallel_run) */
		t->resumed_ms = monotonic_ms();
	}
	int sig = t->inject_signal;
	t->inject_signal = 0;
	t->resume = RESUME_CONT;
	t->regs_valid = false;
	t->state = TASK_RUNNING;
	t->spin_descheduled = false;
	t->resumed_after = sched_now();
	if (ptrace(request, t->tid, 0, sig) < 0 && errno != ESRCH)
		task_warn(t, "cannot tracer_resume: %s", strerror(errno));
}

void tracer_want_exit(struct task *t, void (*on_exit)(struct task *t))
{
	t->resume = RESUME_SYSCALL;
	t->exit.on_exit = on_exit;
}

void tracer_want_view(struct task *t, void (*view)(struct task *t))
{
	t->resume = RESUME_SYSCALL;
	t->exit.view = view;
}

/* An event takes the next logical time; the shim sees every one (replay checks digests). */
static void timeline_event(struct task *t)
{
	sched_event(t);
	vdso_event(t);
	const struct shim_ops *shim = shim_get();
	if (shim->event)
		shim->event(t, sched_now(), t->syscall_nr);
	if (tracer_debugger)
		tracer_debugger->on_event(t);
}

void tracer_page_event(struct task *t)
{
	timeline_event(t);
}

void tracer_held_event(struct task *t)
{
	t->state = TASK_STOPPED;
	timeline_event(t);
}

/* A path or name argument for --trace: up to the page's end first, so a short string at
 * the end of a mapping still reads. */
static bool trace_string(void *ctx, uint64_t addr, char *out, size_t n)
{
	struct task *t = ctx;
	size_t first = 4096 - (addr & 4095);
	if (first > n - 1)
		first = n - 1;
	if (remote_read(t, REMOTE(addr), out, first))
		return false;
	out[first] = 0;
	if (strlen(out) == first && first < n - 1 &&
	    remote_read(t, REMOTE(addr + first), out + first, n - 1 - first) == 0)
		out[n - 1] = 0;
	return true;
}

/* The --trace line of a call at its stop: its name and its arguments, as many as it takes,
 * each shown by its kind (syscalls.def), paths as strings. */
static void trace_syscall(struct task *t)
{
	if (!report_trace)
		return;
	const uint64_t args[6] = { t->regs.rdi, t->regs.rsi, t->regs.rdx,
				   t->regs.r10, t->regs.r8,  t->regs.r9 };
	char call[512];
	syscall_format_call(call, sizeof(call), t->syscall_nr, args, trace_string, t);
	trace_event(t, "%s", call);
}

static void on_syscall_entry(struct task *t)
{
	t->in_allowed_call = false; /* the filter stopped it: a handled call */
	t->exit.view = NULL;
	if (remote_load_regs(t))
		return; /* killed meanwhile: its death report follows */
	t->state = TASK_STOPPED;
	/* The program's own filter refusing the call: natively it never runs. */
	if (seccomp_filter_judge(t) || filter_foreign_call(t)) { /* int 0x80 or x32: refused */
		timeline_event(t);
		return;
	}
	t->syscall_nr = syscall_number(t);
	t->proc->syscall_insn = syscall_insn_addr(t);
	t->state = TASK_STOPPED;
	if (spin_restarted(t, true)) {
		trace_event(t, "  %s restarted after a spin probe", syscall_name(t->syscall_nr));
		tracer_resume(t);
		return;
	}
	bool restarted = t->external_restart_nr >= 0 && t->external_restart_nr == t->syscall_nr;
	t->external_restart_nr = -1;
	if (restarted) {
		/* The kernel restarts an external call a signal from outside interrupted: the
		 * same call, going on, not an event (a replay never saw it interrupted). */
		trace_event(t, "  %s restarted", syscall_name(t->syscall_nr));
		tracer_handlers->outside_restarted(t);
		return;
	}
	timeline_event(t);
	trace_syscall(t);
	t->at_entry = true;
	tracer_handlers->dispatch(t);
	if (t->parked)
		trace_event(t, "  parked: %s", t->wait.what);
}

static void on_syscall_exit(struct task *t)
{
	if (remote_load_regs(t))
		return;
	void (*fn)(struct task *) = t->exit.on_exit;
	t->exit.on_exit = NULL;
	t->state = TASK_STOPPED;
	if (fn)
		fn(t);
	/* A view applies once the call is complete: not while a handler rewound it for its
	 * next piece (which wants its own exit) or parked it. */
	void (*view)(struct task *) = t->exit.view;
	if (view && !t->exit.on_exit && !t->parked) {
		t->exit.view = NULL;
		view(t);
	}
	if (t->parked) {
		t->parked_at_exit = true;
		trace_event(t, "  parked: %s", t->wait.what);
		return;
	}
	if (t->resume == RESUME_CONT && !t->regs_dirty && fn == NULL && view == NULL)
		trace_event(t, "  = %lld", (long long)syscall_result(t));
	if (!t->traced.syscall_mode || !held_for_tracer(t, false))
		tracer_resume(t);
}

/* An allowed call of a task whose every call stops has returned: an event, so virtual time
 * moves (and a timer due now fires before the task goes on). */
static void on_allowed_call_done(struct task *t)
{
	if (remote_load_regs(t))
		return;
	t->syscall_nr = syscall_number(t);
	t->state = TASK_STOPPED;
	timeline_event(t);
	trace_event(t, "%s = %lld (every call is an event)", syscall_name(t->syscall_nr),
		    (long long)syscall_result(t));
	code_mapped_implicitly(t);
}

/* A syscall stop (SIGTRAP|0x80). Handlers ask for exit stops; a task whose every call
 * stops also has entry stops, and exit stops of calls no handler asked about. The kernel
 * says which kind it is. An entry stop is not an event: a call the filter stops has its
 * seccomp stop next, an allowed one becomes an event at its exit. */
static void on_syscall_trap(struct task *t)
{
	struct __ptrace_syscall_info info;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(info), &info) <= 0)
		info.op = PTRACE_SYSCALL_INFO_EXIT;
	if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
		if (t->in_call && !every_syscall_stops(t)) {
			/* Resumed for a call whose exit stop something else took: it is done,
			 * and this one is the task's own to run as the filter says. */
			t->in_call = false;
			if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0 && errno != ESRCH)
				task_warn(t, "cannot tracer_resume: %s", strerror(errno));
			return;
		}
		t->in_call = false;
		t->in_allowed_call = true;
		if (t->seccomp_strict && !seccomp_strict_allows(t, (long)info.entry.nr))
			return; /* SIGKILLed: its exit event follows */
		if (t->traced.syscall_mode && remote_load_regs(t) == 0) {
			t->syscall_nr = (int)info.entry.nr;
			if (held_for_tracer(t, true))
				return; /* before detrun's handling: its seccomp stop follows */
		}
		if (ptrace(PTRACE_SYSCALL, t->tid, 0, 0) < 0 && errno != ESRCH)
			task_warn(t, "cannot tracer_resume: %s", strerror(errno));
		return;
	}
	spin_restarted(t, false); /* an exit: no seccomp stop of this call follows */
	t->in_call = false;
	t->at_entry = false;
	bool allowed = t->in_allowed_call;
	t->in_allowed_call = false;
	if (t->exit_stop_wanted) {
		t->exit_stop_wanted = false;
		on_syscall_exit(t);
	} else if (allowed) {
		on_allowed_call_done(t);
		if (t->traced.syscall_mode)
			tracer_handlers->syscall_stop(t, false);
	} else if (!t->traced.syscall_mode || remote_load_regs(t) || !held_for_tracer(t, false)) {
		tracer_resume(t); /* the exit of a call handled at its seccomp stop */
	}
}

/* A terminal signal reaches each task of the foreground group wherever it happens to be
 * running, which no replay could reproduce. While a shim intercepts, those copies are
 * dropped; detrun got its own and passes it on between events like any signal from
 * outside (and record logs it). */
static bool from_terminal(const struct task *t, int sig)
{
	siginfo_t si;
	return (TERMINAL_SIGNALS & SIGBIT(sig)) && ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 &&
	       si.si_code == SI_KERNEL;
}

/* A signal the process ignores is discarded by the kernel as it is sent; a traced task
 * gets it all the same (sig_ignored() keeps it for the tracer), and the kernel drops it
 * at delivery. So it is no event: natively it never arrived, and its cause may not happen
 * in a replay (a send to a peer that had closed raises SIGPIPE; the stand-in does not).
 * SIGCONT has done its work when it was sent (jobctl.c watches for it); the trap signals
 * have their own path. */
static bool discarded_natively(const struct task *t, int sig)
{
	if (sig == SIGSEGV || sig == SIGILL || sig == SIGCONT)
		return false;
	if (t->traced.tracer)
		return false; /* its tracer inside the group sees it all the same */
	if (t->proc->ignored & SIGBIT(sig))
		return true;
	uint64_t default_ignore = SIGBIT(SIGCHLD) | SIGBIT(SIGURG) | SIGBIT(SIGWINCH);
	return !signal_is_caught(t, sig) && (default_ignore & SIGBIT(sig));
}

bool tracer_signal_stop_is_no_event(const struct task *t, int status)
{
	int sig = WSTOPSIG(status);
	if (!WIFSTOPPED(status) || (unsigned)status >> 16 != 0 || sig == (SIGTRAP | 0x80))
		return false;
	if (shim_intercepts() && !(t->proc->terminal_due & SIGBIT(sig)) && from_terminal(t, sig))
		return true; /* a stray copy of a terminal signal */
	return discarded_natively(t, sig);
}

static void on_signal_stop(struct task *t, int sig)
{
	t->state = TASK_STOPPED;
	if ((sig == SIGSEGV || sig == SIGILL) && cpu_emulate_fault(t)) {
		trap_signals_after_trap(t, sig);
		t->syscall_nr = -1;
		return;
	}
	if (shim_intercepts() && from_terminal(t, sig) && !(t->proc->terminal_due & SIGBIT(sig))) {
		queue_outside_signal(sig);
		tracer_resume(t); /* as if the copy had never come: not an event */
		return;
	}
	if (discarded_natively(t, sig)) {
		trace_event(t, "  signal %d (%s) ignored by the program: not an event", sig,
			    strsignal(sig));
		tracer_resume(t);
		return;
	}
	t->proc->terminal_due &= ~SIGBIT(sig);
	t->syscall_nr = -1;
	t->inject_signal = sig;
	timers_fix_siginfo(t, sig);
	if (sig == SIGCHLD)
		tracer_handlers->sigchld_siginfo(t);
	timeline_event(t);
	trace_event(t, "signal %d (%s)", sig, strsignal(sig));
	if (tracer_handlers->signal_stop(t, sig))
		return; /* a tracer inside the group took the stop (sys_ptrace.c) */
	bool caught = signal_is_caught(t, sig); /* before SA_RESETHAND applies */
	if ((sig == SIGSEGV || sig == SIGILL) && !trap_signals_deliver(t, sig)) {
		trace_event(t, "  dropped: the program ignores it");
		t->inject_signal = 0;
		return;
	}
	if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)
		if (!caught) {
			char why[64];
			snprintf(why, sizeof(why), "fatal signal %d at t=%llu", sig,
				 (unsigned long long)sched_now());
			stack_report(t, why);
		}
	/* Last: when it applies, t is gone (tracer_task_died freed it). */
	nested_init_fault(t, sig, tracer_handle_status, tracer_task_died);
}

void tracer_handle_status(pid_t tid, int status)
{
	if (tracer_parallel())
		parallel_note_stop(tid, status);
	else
		tracer_handle_stop_now(tid, status);
}

/* A group stop keeps the task stopped (jobctl.h), and its tracer inside the group sees it;
 * a stale interrupt of the spin detector, or the trap that ends a group stop, lets it go
 * on. A late interrupt may have cut a native call short: its restart is no new event. */
static void on_event_stop(struct task *t, int sig)
{
	if (t->state != TASK_RUNNING)
		return;
	if (jobctl_group_stop(t, sig)) {
		tracer_handlers->group_stop(t, sig);
		return;
	}
	if (remote_load_regs(t) == 0)
		spin_note_interrupted_call(t);
	tracer_resume(t);
}

void tracer_handle_stop_now(pid_t tid, int status)
{
	struct task *t = sched_find(tid);
	if (!t) {
		if (WIFSTOPPED(status))
			tracer_note_early_stop(tid, status);
		return;
	}
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		tracer_task_died(t, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	t->regs_valid = false;
	if (spin_stale_interrupt_cut(t, status) ||
	    (tracer_debugger && !tracer_debugger_saw(t) && tracer_debugger->on_stop(t, status)))
		return; /* a probe's restart, or a breakpoint, watchpoint or step of gdb's */
	int sig = WSTOPSIG(status);
	int event = (unsigned)status >> 16;
	/* A restart mark is for the seccomp stop of the restarted call; the entry stop that
	 * comes before it (the task resumed with PTRACE_SYSCALL) keeps it. */
	if (event != PTRACE_EVENT_SECCOMP && sig != (SIGTRAP | 0x80))
		spin_restarted(t, false);
	switch (event) {
	case PTRACE_EVENT_SECCOMP:
		on_syscall_entry(t);
		return;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		on_clone_event(t, event);
		return;
	case PTRACE_EVENT_EXEC:
		on_exec_event(t);
		return;
	case PTRACE_EVENT_EXIT:
		on_exit_event(t);
		return;
	case PTRACE_EVENT_VFORK_DONE:
		if (tracer_handlers->vfork_done(t))
			tracer_held_event(t); /* its tracer inside the group's stop */
		else
			tracer_resume(t);
		return;
	case PTRACE_EVENT_STOP:
		on_event_stop(t, sig);
		return;
	}
	if (sig == (SIGTRAP | 0x80)) {
		on_syscall_trap(t);
		return;
	}
	on_signal_stop(t, sig);
}

static void handle_status_cb(int tid, int status)
{
	tracer_handle_status(tid, status);
}

/* Runs until `t` reaches its next event, handling every other stop meanwhile; a task that
 * runs past its wall-clock budget without an event goes to the spin detector. */
static bool still_traced(const struct task *t)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u == t)
			return true;
	return false;
}

static const int64_t LONG_COMPUTATION_MS = 30000; /* see warn_long_computation */

/* Has t, running since `since` without an event, outrun a timer signal (of its own
 * process, or of another that may act on it: a parent's alarm that kills a child)?
 * Natively the signal would have come by now. */
static bool timer_signal_overdue(const struct task *t, int64_t since)
{
	int64_t due = timers_next_signal(0);
	return due >= 0 && (due - vclock_now()) / 1000000 <= monotonic_ms() - since;
}

/* A task that computes for long without an event while others wait for their turn: if
 * it waits for them (a spin-wait that writes memory, as an interpreter's does), the group
 * cannot go on, and nothing would say so. Said once per task. */
static void warn_long_computation(struct task *t, int64_t ran_ms)
{
	if (t->long_compute_shown || ran_ms < LONG_COMPUTATION_MS)
		return;
	for (struct task *u = sched_first(); u; u = u->next)
		if (u != t && u->state == TASK_STOPPED &&
		    (!u->parked || u->wait.deadline_ns >= 0)) {
			t->long_compute_shown = true;
			hazard(t,
			       "has computed for %lld s without an event while task %d waits for "
			       "its turn; if it waits for that task (a spin-wait that writes "
			       "memory), the group cannot go on (README, Limits)",
			       (long long)ran_ms / 1000, u->vtid);
			return;
		}
}

enum spin_verdict tracer_spin_look(struct task *t, int64_t since, void (*handle)(int, int))
{
	enum spin_verdict v = spin_check(t, handle);
	int64_t ran_ms = monotonic_ms() - since;
	if (v == SPIN_KEEP_RUNNING && timer_signal_overdue(t, since))
		v = spin_preempt_for_timer(t, handle, ran_ms);
	if (v == SPIN_KEEP_RUNNING)
		warn_long_computation(t, ran_ms);
	return v;
}

static void run_until_event(struct task *t)
{
	int budget = t->run_budget_ms ? (int)t->run_budget_ms : tracer_opts->spin_budget_ms;
	int64_t since_event = monotonic_ms();
	spin_start_at_alarm(t);
	/* Armed once for the runs of every event, not twice per run: a SIGALRM that comes
	 * early starts the budget early (spin_start_at_alarm), and one that comes between
	 * runs waits, blocked, for the next run's wait. */
	tracer_keep_alarm(budget);
	while (still_traced(t) && t->state == TASK_RUNNING) {
		int status;
		pid_t got = tracer_wait_any(&status);
		if (got < 0)
			break;
		if (got > 0) {
			tracer_handle_status(got, status);
			continue;
		}
		if (tracer_debugger && tracer_debugger->poll(t, handle_status_cb))
			continue; /* gdb's Ctrl-C: t was stopped for it, or reached an event */
		/* Without a shim to log their logical time, signals from outside need not wait
		 * for an event: a task computing without one would hold them back for ever. */
		if (!shim_intercepts())
			pass_outside_signals();
		/* The budget is the task's CPU time: a task waiting for a CPU is not looked at,
		 * nor one the debugger single-steps (its budget starts when the steps end). */
		int left = budget;
		if (tracer_debugger_steps(t))
			spin_start_at_alarm(t);
		else if (spin_started(t))
			left = spin_remaining_ms(t, budget);
		else
			spin_start(t);
		if (left == 0) {
			tracer_arm_alarm(0);
			enum spin_verdict v = tracer_spin_look(t, since_event, handle_status_cb);
			if (v == SPIN_DESCHEDULE)
				break;
			if (v == SPIN_KEEP_RUNNING)
				budget = (int)t->run_budget_ms;
			if (v == SPIN_KEEP_RUNNING ||
			    still_traced(t)) /* an event may have ended t */
				spin_start(t);
			left = budget;
		}
		tracer_arm_alarm(tracer_debugger && left > INTERRUPT_POLL_MS ? INTERRUPT_POLL_MS
									     : left);
	}
	spin_end();
	if (still_traced(t) && t->state == TASK_STOPPED && !t->spin_descheduled)
		tracer_spin_event_done(t);
}

void tracer_spin_event_done(struct task *t)
{
	t->run_budget_ms = 0; /* an event: the spin budget starts over */
	t->spin_probes = 0;
	t->cycle_misses = t->cycle_skips = 0;
}

/* A shim cannot go on (replay diverged, the shim program broke): say why and where, show
 * the task's stack, and end the group. */
static __attribute__((noreturn)) void abort_run(struct task *t, const char *why)
{
	if (t)
		task_error(t, "%s", why);
	else
		fprintf(stderr, "detrun: %s\n", why);
	if (t && t->state == TASK_STOPPED)
		stack_report(t, "its stack");
	tracer_kill_group();
	exit(125);
}

/* The pick ended early for what came while it waited for outside input: tasks that
 * changed state are reaped first (they may be gone), then gdb's input is answered, every
 * task stopped, outside the pick. */
bool woken_from_outside_wait(void)
{
	bool stops = take_waiting_stops();
	bool gdb = take_debugger_input();
	if (stops)
		reap_waiting_stops();
	if (gdb)
		tracer_debugger->idle_input();
	return stops || gdb;
}

static void start_program(const char *path, char **argv, const struct tracer_options *opt,
			  struct launch *launched)
{
	/* Ignored signals survive exec: the program gets the dispositions detrun was given,
	 * not detrun's own (launch's in_child). */
	struct launch_options lo = { .cpus = opt->cpus,
				     .namespaces = opt->namespaces,
				     .shim_intercepts = shim_intercepts(),
				     .parallel = tracer_parallel(),
				     .no_terminal = foreground_left_terminal(),
				     .in_child = restore_given_signals };
	hold_outside_signals();
	shim_set_abort(abort_run);
	int err = launch_program(path, argv, &lo, launched);
	if (err)
		die("cannot start %s: %s", argv[0], strerror(-err));
	if (opt->namespaces && !launched->namespaced)
		warn("cannot create namespaces (%s): pids and the hostname are the host's, and "
		     "the virtual /proc files and /sys absent",
		     strerror(errno));
}

int tracer_run(const char *path, char **argv, const struct tracer_options *opt)
{
	tracer_opts = opt;
	parallel_init(opt->jobs);
	if (tracer_parallel())
		ops.domain_of = tracer_domain_of;
	sched_init(opt->quantum);
	sched_keep_turn(opt->keep_turn);
	sched_set_ops(&ops);
	vclock_set_epoch(opt->epoch);
	random_seed(opt->seed);
	tracer_handlers->run_starting();
	report_set_cleanup(tracer_kill_group);
	if (!tracer_parallel())
		tracer_pin_to_one_cpu();
	foreground_prepare();

	struct launch launched;
	start_program(path, argv, opt, &launched);
	install_supervisor_signals();
	foreground_give(launched.init_pid > 0 ? launched.init_pid : launched.pid, outside_report);
	struct task *t = tracer_first_task(&launched);
	tracer_handlers->launched(launched.namespaced);

	if (tracer_parallel())
		parallel_run(t);
	for (; !tracer_parallel();) {
		if (t)
			run_until_event(t);
		tracer_quiesce();
		t = sched_pick();
		if (!t && woken_from_outside_wait())
			continue;
		if (!t)
			break;
		vdso_resumed(t);
		tracer_resume(t);
	}
	/* The namespace's init exits once it has reaped everything; waiting for it also
	 * passes the group's resource usage up to detrun's own parent. */
	if (launched.init_pid > 0)
		waitpid_retry(launched.init_pid, NULL, __WALL);
	foreground_restore();
	int exec_errno = launch_exec_error(&launched);
	int code = tracer_exit_code(tracer_group_status(-1));
	if (exec_errno) {
		fprintf(stderr, "detrun: cannot execute %s: %s\n", argv[0], strerror(exec_errno));
		code = exec_errno == ENOENT ? 127 : 126;
	}
	const struct shim_ops *shim = shim_get();
	if (shim->finish)
		code = shim->finish(sched_now(), code);
	return tracer_debugger ? tracer_debugger->finish(code) : code;
}
