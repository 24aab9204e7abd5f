#include "supervisor/tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/personality.h>

#include "debugger/debugger.h"
#include "scheduler/futex_queue.h"
#include "scheduler/scheduler.h"
#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "supervisor/auxv.h"
#include "supervisor/foreground.h"
#include "supervisor/jobctl.h"
#include "supervisor/launch.h"
#include "supervisor/nested_init.h"
#include "supervisor/remote.h"
#include "supervisor/report.h"
#include "supervisor/seccomp_strict.h"
#include "supervisor/spin.h"
#include "supervisor/stack.h"
#include "supervisor/sys_cpu.h"
#include "supervisor/cpu_patch.h"
#include "supervisor/trap_signals.h"
#include "supervisor/filter.h"
#include "supervisor/sys_common.h"
#include "supervisor/syscall_table.h"

const struct tracer_options *tracer_opts;

static pid_t root_tgid;          /* the first process: its exit status is detrun's */
static pid_t namespace_init;     /* pid 1 of the group's PID namespace, or 0 */
static int root_status = -1;
static int next_aspace = 1;
static int self_pipe[2] = { -1, -1 };
static volatile sig_atomic_t alarm_fired;
static bool stops_waiting; /* a SIGCHLD came while detrun waited for outside input */

/* Stops reported for tasks not yet known (a new child can report before its parent's
 * clone event has been handled). */
static struct early_stop {
	pid_t tid;
	int status;
} early[64];
static int n_early;

static void kill_group(void);
static void handle_status(pid_t tid, int status);
static void quiesce(void);

/* ---- supervisor signals ------------------------------------------------------------ */

static void on_alarm(int sig)
{
	alarm_fired = 1;
}

static void on_outside_signal(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;
	struct outside_signal_msg msg = { sig, si->si_code, si->si_pid };
	if (write(self_pipe[1], &msg, sizeof(msg)) < 0) {
		/* the pipe is full: the signal is already known to be pending */
	}
	errno = saved;
}

/* A task changed state while detrun was waiting for outside input (killed from outside,
 * say): its stop is handled as soon as the scheduler's pick has ended (handling it may
 * free tasks the scheduler is looking at), rather than when the input comes. */
static bool take_waiting_stops(void)
{
	bool waiting = stops_waiting;
	stops_waiting = false;
	return waiting;
}

static bool waiting_stops_pending(void)
{
	return stops_waiting;
}

static void reap_waiting_stops(void)
{
	int status;
	pid_t tid;
	while ((tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
		handle_status(tid, status);
	quiesce();
}

/* A signal aimed at the group as a whole: every process gets it. While a shim intercepts,
 * a process that still holds the terminal's own copy of a terminal signal gets that copy
 * (two copies of a standard signal would merge anyway), and either way the pending signal
 * now counts as delivered (see from_terminal). */
static void deliver_to_group(int sig)
{
	sched_signals_changed();
	jobctl_signal_sent(sig);
	bool terminal = shim_intercepts() && (TERMINAL_SIGNALS & SIGBIT(sig));
	for (struct task *t = sched_first(); t; t = t->next) {
		if (t->tid != t->proc->tgid || t->state == TASK_DEAD)
			continue;
		if (sig == SIGKILL)
			t->proc->dying = true; /* reaped before anything else runs */
		uint64_t pending, blocked;
		bool copy_pending = terminal && read_signal_state(t, &pending, &blocked) == 0 &&
				    (pending & SIGBIT(sig));
		if (terminal)
			t->proc->terminal_due |= SIGBIT(sig);
		if (!copy_pending)
			kill(t->tid, sig);
	}
}

#define MAX_OUTSIDE_SIGNALS 32
static int outside_signals[MAX_OUTSIDE_SIGNALS];
static int n_outside_signals;

/* Passed on between events (pass_outside_signals); a signal already waiting is not
 * queued twice, as the kernel does not queue a standard signal twice. */
static void queue_outside_signal(int sig)
{
	for (int i = 0; i < n_outside_signals; i++)
		if (outside_signals[i] == sig)
			return;
	if (n_outside_signals < MAX_OUTSIDE_SIGNALS)
		outside_signals[n_outside_signals++] = sig;
}

static int exit_code(int status);

/* Asked again from outside to end (the program did not end at the first request): the
 * group is killed by a SIGKILL from outside, passed on between events like any outside
 * signal, so a recording logs it where a replay can deliver it and closes with its end
 * record. Asked a third time (a task that never reaches an event), detrun does not wait
 * for the next event: the kill is logged where the timeline stands and the log closed. */
static void end_group_from_outside(int asked, int times)
{
	if (times == 2) {
		fprintf(stderr, "detrun: %s again: killing the group\n", strsignal(asked));
		queue_outside_signal(SIGKILL);
		return;
	}
	fprintf(stderr, "detrun: %s a third time: killing the group now\n", strsignal(asked));
	int sig = SIGKILL;
	const struct shim_ops *shim = shim_get();
	if (shim->signals)
		shim->signals(sched_now(), &sig, 1, deliver_to_group);
	kill_group();
	foreground_restore();
	int code = exit_code(root_status >= 0 ? root_status : SIGKILL);
	exit(shim->finish ? shim->finish(sched_now(), code) : code);
}

/* The same signal again within a second: one request sent twice (GNU timeout signals its
 * child and then its whole process group), merged as the kernel merges a standard signal
 * still pending. */
static bool repeated_copy(int sig)
{
	static int last_sig;
	static struct timespec last;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ms = (now.tv_sec - last.tv_sec) * 1000LL + (now.tv_nsec - last.tv_nsec) / 1000000;
	bool repeated = sig == last_sig && ms < 1000;
	last_sig = sig;
	last = now;
	return repeated;
}

#define ENDING_SIGNALS (SIGBIT(SIGINT) | SIGBIT(SIGTERM) | SIGBIT(SIGHUP) | SIGBIT(SIGQUIT))

/* Signals sent to detrun itself. The terminal's own signals reach the group's process
 * group (the sentinel reports them, supervisor/foreground.h), so detrun only notes them; a
 * signal aimed at detrun (kill from another shell, a timeout wrapper) is passed on to every
 * process of the group, as if it had been sent to the group's process group. */
static void drain_outside_signals(void)
{
	struct outside_signal_msg msg;
	static int forwarded_signals;
	while (read(self_pipe[0], &msg, sizeof(msg)) == sizeof(msg)) {
		if (msg.sig == SIGCHLD) {
			stops_waiting = true;
			continue;
		}
		bool from_group = msg.pid > 0 && sched_find(msg.pid);
		bool to_detrun_only = (msg.code == SI_USER || msg.code == SI_QUEUE) && !from_group;
		/* Asked twice from outside: the program did not stop, so detrun stops it. */
		if (!from_group && (ENDING_SIGNALS & SIGBIT(msg.sig))) {
			if (repeated_copy(msg.sig))
				continue;
			if (++forwarded_signals >= 2) {
				end_group_from_outside(msg.sig, forwarded_signals);
				continue;
			}
		}
		bool from_terminal = msg.code == SI_KERNEL && (TERMINAL_SIGNALS & SIGBIT(msg.sig));
		if (shim_intercepts() && (to_detrun_only || from_terminal)) {
			queue_outside_signal(msg.sig);
			continue;
		}
		if (!to_detrun_only) {
			sched_signals_changed(); /* the group got it directly (Ctrl-C) */
			continue;
		}
		deliver_to_group(msg.sig);
	}
}

/* Between two events, every task stopped: signals from outside reach the group here, at a
 * point of the timeline the shim can log and replay, never in the middle of a running
 * task's code. */
static void pass_outside_signals(void)
{
	/* One may have come while detrun was not waiting (a task's events keep it busy). */
	drain_outside_signals();
	const struct shim_ops *shim = shim_get();
	int n = n_outside_signals;
	n_outside_signals = 0;
	if (shim->signals)
		shim->signals(sched_now(), outside_signals, n, deliver_to_group);
	else
		for (int i = 0; i < n; i++)
			deliver_to_group(outside_signals[i]);
}

static void install_supervisor_signals(void)
{
	if (pipe2(self_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		die("cannot create a pipe: %s", strerror(errno));
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_outside_signal;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: waitpid must return to notice */
	sigemptyset(&sa.sa_mask);
	int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD, SIGCONT };
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);
	struct sigaction al = { 0 };
	al.sa_handler = on_alarm;
	sigemptyset(&al.sa_mask);
	sigaction(SIGALRM, &al, NULL);
	signal(SIGTTOU, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* Every ptrace stop raises SIGCHLD; it matters only while waiting for outside input
	 * (wait_outside lets it through), not while waitpid is already listening. The spin
	 * detector's SIGALRM is for wait_any alone: elsewhere it would interrupt detrun's
	 * other waits at moments the wall clock picks. */
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigaddset(&chld, SIGALRM);
	sigprocmask(SIG_BLOCK, &chld, NULL);
}

/* Waits for fds (at most 257: the scheduler's 256 and a shim's own) or a signal. */
static int real_wait_outside(struct pollfd *fds, int nfds, int timeout_ms)
{
	struct pollfd all[258];
	int n = 0;
	for (int i = 0; i < nfds && n < 257; i++)
		all[n++] = (struct pollfd){ fds[i].fd, fds[i].events, 0 };
	all[n++] = (struct pollfd){ self_pipe[0], POLLIN, 0 };
	sigset_t during;
	sigprocmask(SIG_SETMASK, NULL, &during);
	sigdelset(&during, SIGCHLD);
	struct timespec ts = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };
	int r = ppoll(all, (nfds_t)n, timeout_ms < 0 ? NULL : &ts, &during);
	if (r < 0)
		return -1;
	for (int i = 0; i < n - 1; i++)
		fds[i].revents = all[i].revents;
	if (all[n - 1].revents) {
		drain_outside_signals();
		return r - 1 > 0 ? r - 1 : -1;
	}
	return r;
}

static int wait_outside(struct pollfd *fds, int nfds, int timeout_ms)
{
	const struct shim_ops *shim = shim_get();
	if (!shim->wait_outside)
		return real_wait_outside(fds, nfds, timeout_ms);
	return shim->wait_outside(sched_now(), fds, nfds, timeout_ms, real_wait_outside);
}

/* ---- signal state ----------------------------------------------------------------- */

int read_signal_state(const struct task *t, uint64_t *pending, uint64_t *blocked)
{
	char buf[4096];
	int err = proc_status_read(t->tid, buf, sizeof(buf));
	if (err)
		return err;
	*pending = proc_status_field(buf, "\nSigPnd:", 16, 0) |
		   proc_status_field(buf, "\nShdPnd:", 16, 0);
	*blocked = proc_status_field(buf, "\nSigBlk:", 16, 0);
	return 0;
}

static uint64_t read_ignored_signals(const struct task *t)
{
	char buf[4096];
	return proc_status_read(t->tid, buf, sizeof(buf)) ? 0
							  : proc_status_field(buf, "\nSigIgn:", 16, 0);
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
			external_wait_interrupted(t);
		return 1;
	}
	bool restart = !signal_is_caught(t, sig) ||
		       (t->wait.restartable && (t->proc->sa_restart & SIGBIT(sig)));
	remote_load_regs(t);
	if (t->parked_at_exit) {
		if (!restart) {
			t->regs.rax = (uint64_t)-EINTR;
			t->regs.rip += 2;
			t->regs_dirty = true;
		}
	} else if (restart) {
		syscall_skip_and_restart(t);
	} else {
		syscall_emulate(t, -EINTR);
	}
	return 1;
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

static void report_deadlock(void)
{
	if (end_orphans())
		return;
	if (jobctl_all_stopped()) {
		foreground_stop_with_group();
		return;
	}
	warn("deadlock at t=%llu: no task can run and nothing outside the group can wake one",
	     (unsigned long long)sched_now());
	for (struct task *t = sched_first(); t; t = t->next)
		if (t->state == TASK_STOPPED)
			fprintf(stderr, "detrun:   task %d (tid %d): %s\n", t->vtid, t->ns_tid,
				t->parked ? t->wait.what : "runnable");
	fprintf(stderr, "detrun:   waiting for a signal from outside (Ctrl-C ends the group)\n");
}

static const struct sched_ops ops = {
	.interrupt_wait = interrupt_wait,
	.wait_outside = wait_outside,
	.report_deadlock = report_deadlock,
	.fire_timers = timers_fire,
	.between_events = pass_outside_signals,
	.next_timer = timers_next_deadline,
	.stops_pending = waiting_stops_pending,
};

/* ---- task lifecycle ------------------------------------------------------------------ */

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

/* Virtual time moves only at events. While a timer that sends a signal is armed for the
 * task's process, or the task is in seccomp strict mode, every syscall of the task stops
 * (PTRACE_SYSCALL), the calls the filter allows included: each allowed call is an event
 * at its exit stop, so a computation that waits for its timer signal and calls only
 * allowed syscalls gets it, at the same point on every run. */
static bool every_syscall_stops(const struct task *t)
{
	return t->seccomp_strict || timers_next_signal(t->proc->tgid) >= 0;
}

int tracer_resume_request(const struct task *t)
{
	return t->exit_stop_wanted || every_syscall_stops(t) ? PTRACE_SYSCALL : PTRACE_CONT;
}

static void resume(struct task *t)
{
	remote_store_regs(t);
	if (t->resume == RESUME_SYSCALL)
		t->exit_stop_wanted = true;
	int request = tracer_resume_request(t);
	int sig = t->inject_signal;
	t->inject_signal = 0;
	t->resume = RESUME_CONT;
	t->regs_valid = false;
	t->state = TASK_RUNNING;
	t->spin_descheduled = false;
	if (ptrace(request, t->tid, 0, sig) < 0 && errno != ESRCH)
		task_warn(t, "cannot resume: %s", strerror(errno));
}

void tracer_want_exit(struct task *t, void (*on_exit)(struct task *t))
{
	t->resume = RESUME_SYSCALL;
	t->exit.on_exit = on_exit;
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
	futex_wake(key, 1, ~0u, futex_woken);
}

static void task_died(struct task *t, int status)
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
	}
	if (t->is_leader || t->tid == t->proc->tgid)
		trace_event(t, "exited, status 0x%x", status);
	sched_remove(t);
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

static void on_exit_event(struct task *t)
{
	if (t->syscall_nr != __NR_exit || live_threads(t->proc) <= 1)
		t->proc->dying = true;
	if (live_threads(t->proc) <= 1)
		rusage_process_exiting(t);
	t->state = TASK_EXITING;
	if (t->parked)
		sched_unpark(t);
	if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0 && errno != ESRCH)
		task_warn(t, "cannot let the task exit: %s", strerror(errno));
}

static struct task *adopt_child(struct task *parent, pid_t tid, int event)
{
	uint64_t flags = parent->exit.saved[0];
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
		trap_signals_inherit(p, parent->proc);
		if (!shares_vm)
			cpu_patch_inherit(parent->proc->aspace, p->aspace);
		if (event == PTRACE_EVENT_VFORK || (flags & CLONE_VFORK))
			p->vfork_parent = parent;
	}
	struct task *child = sched_add(tid, p);
	child->ns_tid = read_ns_tid(tid);
	if (p != parent->proc)
		p->ns_tgid = child->ns_tid;
	if (flags & CLONE_CHILD_CLEARTID)
		child->clear_child_tid = parent->exit.saved[1];
	child->is_leader = child->tid == p->tgid;
	child->vcpu = parent->vcpu; /* affinity is inherited */
	child->tsc_sigsegv = parent->tsc_sigsegv; /* the kernel's TSC mode is inherited too */

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
	if (parent->exit.saved[3] && remote_load_regs(child) == 0) /* clone3 read a copy */
		syscall_set_arg(child, 0, parent->exit.saved[3]);
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

static void on_clone_event(struct task *parent, int event)
{
	unsigned long msg = 0;
	ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg);
	struct task *child = adopt_child(parent, (pid_t)msg, event);
	parent->exit.saved[0] = parent->exit.saved[1] = 0;
	/* clone3 read a copy of its arguments: the program's register comes back here, as
	 * the resume below does not stop at the call's exit. */
	if (parent->exit.saved[3] && remote_load_regs(parent) == 0)
		syscall_set_arg(parent, 0, parent->exit.saved[3]);
	parent->exit.saved[3] = 0;
	parent->state = TASK_STOPPED;
	if (child->proc->vfork_parent == parent) {
		/* The parent sleeps in the kernel until the child execs or exits. */
		struct wait w = { .what = "vfork", .deadline_ns = -1, .ready = vfork_released };
		sched_park(parent, &w);
		return;
	}
	resume(parent);
}

/* After a multithreaded exec the exec'ing thread takes the leader's tid. */
static void on_exec_event(struct task *reported)
{
	unsigned long former = 0;
	ptrace(PTRACE_GETEVENTMSG, reported->tid, 0, &former);
	struct task *t = reported;
	if ((pid_t)former != reported->tid) {
		struct task *execer = sched_find((pid_t)former);
		if (execer) {
			struct process *p = reported->proc;
			reported->state = TASK_DEAD;
			sched_remove(reported);
			execer->tid = p->tgid;
			execer->ns_tid = p->ns_tgid;
			t = execer;
		}
	}
	struct process *p = t->proc;
	p->dying = false; /* the other threads died for the exec, not the process */
	p->aspace = next_aspace++;
	p->syscall_insn = 0;
	p->caught = 0;  /* handlers do not survive exec; ignored signals do */
	p->sa_restart = 0;
	p->ignored = read_ignored_signals(t);
	timers_process_gone(p->tgid, true);
	if (p->vfork_parent)
		p->vfork_parent = NULL;
	t->is_leader = true;
	t->clear_child_tid = 0;
	t->regs_valid = false;
	auxv_rewrite(t, !tracer_opts->keep_vdso);
	t->in_exec_stop = true;
	exec_setup(t, !tracer_opts->keep_vdso);
	trap_signals_exec(t);
	t->in_exec_stop = false;
	cpu_patch_mappings(t);
	files_executed(t);
	trace_event(t, "  exec done");
	sched_children_changed();
	resume(t);
}

/* An event takes the next logical time; the shim sees every one (replay checks digests). */
static void timeline_event(struct task *t)
{
	sched_event(t);
	const struct shim_ops *shim = shim_get();
	if (shim->event)
		shim->event(t, sched_now(), t->syscall_nr);
	debugger_on_event(t);
}

/* ---- syscalls ------------------------------------------------------------------------ */

static void on_syscall_entry(struct task *t)
{
	t->in_allowed_call = false; /* the filter stopped it: a handled call */
	if (remote_load_regs(t))
		return; /* killed meanwhile: its death report follows */
	t->state = TASK_STOPPED;
	if (filter_foreign_call(t)) { /* int 0x80 or x32: refused, never dispatched */
		timeline_event(t);
		return;
	}
	t->syscall_nr = (long)t->regs.orig_rax;
	t->proc->syscall_insn = t->regs.rip - 2;
	t->state = TASK_STOPPED;
	if (spin_restarted(t, true)) {
		trace_event(t, "  %s restarted after a spin probe", syscall_name(t->syscall_nr));
		resume(t);
		return;
	}
	bool restarted = t->external_restart == t->syscall_nr + 1;
	t->external_restart = 0;
	if (restarted) {
		/* The kernel restarts an external call a signal from outside interrupted: the
		 * same call, going on, not an event (a replay never saw it interrupted). */
		trace_event(t, "  %s restarted", syscall_name(t->syscall_nr));
		external_perform(t);
		return;
	}
	timeline_event(t);
	const struct syscall_entry *e = syscall_lookup(t->syscall_nr);
	if (report_trace)
		trace_event(t, "%s(%#llx, %#llx, %#llx, %#llx)", syscall_name(t->syscall_nr),
			    (unsigned long long)t->regs.rdi, (unsigned long long)t->regs.rsi,
			    (unsigned long long)t->regs.rdx, (unsigned long long)t->regs.r10);
	if (e && e->handler)
		e->handler(t);
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
	if (t->parked) {
		t->parked_at_exit = true;
		trace_event(t, "  parked: %s", t->wait.what);
		return;
	}
	if (t->resume == RESUME_CONT && !t->regs_dirty && fn == NULL)
		trace_event(t, "  = %lld", (long long)t->regs.rax);
	resume(t);
}

/* An allowed call of a task whose every call stops has returned: an event, so virtual time
 * moves (and a timer due now fires before the task goes on). */
static void on_allowed_call_done(struct task *t)
{
	if (remote_load_regs(t))
		return;
	t->syscall_nr = (long)t->regs.orig_rax;
	t->state = TASK_STOPPED;
	timeline_event(t);
	trace_event(t, "%s = %lld (every call is an event)", syscall_name(t->syscall_nr),
		    (long long)t->regs.rax);
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
		t->in_allowed_call = true;
		if (t->seccomp_strict && !seccomp_strict_allows(t, (long)info.entry.nr))
			return; /* SIGKILLed: its exit event follows */
		if (ptrace(PTRACE_SYSCALL, t->tid, 0, 0) < 0 && errno != ESRCH)
			task_warn(t, "cannot resume: %s", strerror(errno));
		return;
	}
	bool allowed = t->in_allowed_call;
	t->in_allowed_call = false;
	if (t->exit_stop_wanted) {
		t->exit_stop_wanted = false;
		on_syscall_exit(t);
	} else if (allowed) {
		on_allowed_call_done(t);
	} else {
		resume(t); /* the exit of a call handled at its seccomp stop */
	}
}

/* ---- stops ---------------------------------------------------------------------------- */

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
	if (t->proc->ignored & SIGBIT(sig))
		return true;
	uint64_t default_ignore = SIGBIT(SIGCHLD) | SIGBIT(SIGURG) | SIGBIT(SIGWINCH);
	return !signal_is_caught(t, sig) && (default_ignore & SIGBIT(sig));
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
		resume(t); /* as if the copy had never come: not an event */
		return;
	}
	if (discarded_natively(t, sig)) {
		trace_event(t, "  signal %d (%s) ignored by the program: not an event", sig,
			    strsignal(sig));
		resume(t);
		return;
	}
	t->proc->terminal_due &= ~SIGBIT(sig);
	t->syscall_nr = -1;
	t->inject_signal = sig;
	timers_fix_siginfo(t, sig);
	timeline_event(t);
	trace_event(t, "signal %d (%s)", sig, strsignal(sig));
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
	/* Last: when it applies, t is gone (task_died freed it). */
	nested_init_fault(t, sig, handle_status, task_died);
}

static void handle_status(pid_t tid, int status)
{
	struct task *t = sched_find(tid);
	if (!t) {
		if (WIFSTOPPED(status) && n_early < 64)
			early[n_early++] = (struct early_stop){ tid, status };
		return;
	}
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		task_died(t, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	t->regs_valid = false;
	if (debugger_on_stop(t, status))
		return; /* a breakpoint, watchpoint or step of gdb's: no event */
	int sig = WSTOPSIG(status);
	int event = (unsigned)status >> 16;
	if (event != PTRACE_EVENT_SECCOMP)
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
		resume(t);
		return;
	case PTRACE_EVENT_STOP:
		/* A group stop keeps the task stopped (jobctl.h); a stale interrupt of the spin
		 * detector, or the trap that ends a group stop, lets it go on. A late interrupt
		 * may have cut a native call short: its restart is no new event. */
		if (t->state == TASK_RUNNING && !jobctl_group_stop(t, sig)) {
			if (remote_load_regs(t) == 0)
				spin_note_interrupted_call(t);
			resume(t);
		}
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
	handle_status(tid, status);
}

static pid_t wait_any(int *status)
{
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	for (;;) {
		/* A SIGALRM pending from before is taken as the mask opens; one that lands
		 * after the check is followed by the next (arm_alarm is periodic). */
		sigprocmask(SIG_UNBLOCK, &alrm, NULL);
		pid_t tid = alarm_fired ? -1 : waitpid(-1, status, __WALL);
		int err = alarm_fired ? EINTR : errno;
		sigprocmask(SIG_BLOCK, &alrm, NULL);
		if (tid >= 0)
			return tid;
		if (err == ECHILD)
			return -1;
		if (err == EINTR) {
			drain_outside_signals();
			if (alarm_fired) {
				alarm_fired = 0;
				return 0;
			}
		}
	}
}

/* Periodic: a SIGALRM that lands between arming and waitpid (a busy machine can delay
 * detrun that long) is followed by another, instead of leaving waitpid asleep for good
 * beside a task that spins. */
static void arm_alarm(int ms)
{
	struct itimerval it = { { ms / 1000, (ms % 1000) * 1000 }, { ms / 1000, (ms % 1000) * 1000 } };
	alarm_fired = 0;
	setitimer(ITIMER_REAL, &it, NULL);
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

enum { LONG_COMPUTATION_MS = 30000 }; /* see warn_long_computation */

static int64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

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
		if (u != t && u->state == TASK_STOPPED && (!u->parked || u->wait.deadline_ns >= 0)) {
			t->long_compute_shown = true;
			hazard(t, "has computed for %lld s without an event while task %d waits for "
				  "its turn; if it waits for that task (a spin-wait that writes "
				  "memory), the group cannot go on (README, Limits)",
			       (long long)ran_ms / 1000, u->vtid);
			return;
		}
}

static void run_until_event(struct task *t)
{
	int budget = t->run_budget_ms ? (int)t->run_budget_ms : tracer_opts->spin_budget_ms;
	int64_t since_event = monotonic_ms();
	spin_start(t);
	arm_alarm(budget);
	while (still_traced(t) && t->state == TASK_RUNNING) {
		int status;
		pid_t got = wait_any(&status);
		if (got < 0)
			break;
		if (got > 0) {
			handle_status(got, status);
			continue;
		}
		/* Without a shim to log their logical time, signals from outside need not wait
		 * for an event: a task computing without one would hold them back for ever. */
		if (!shim_intercepts())
			pass_outside_signals();
		/* The budget is the task's CPU time: a task waiting for a CPU is not looked at. */
		int left = spin_remaining_ms(t, budget);
		if (left == 0) {
			arm_alarm(0);
			enum spin_verdict v = spin_check(t, handle_status_cb);
			if (v == SPIN_KEEP_RUNNING && timer_signal_overdue(t, since_event))
				v = spin_preempt_for_timer(t, handle_status_cb,
							   monotonic_ms() - since_event);
			if (v == SPIN_KEEP_RUNNING)
				warn_long_computation(t, monotonic_ms() - since_event);
			if (v == SPIN_DESCHEDULE)
				break;
			if (v == SPIN_KEEP_RUNNING)
				budget = (int)t->run_budget_ms;
			if (v == SPIN_KEEP_RUNNING || still_traced(t)) /* an event may have ended t */
				spin_start(t);
			left = budget;
		}
		arm_alarm(left);
	}
	arm_alarm(0);
	spin_end();
	if (still_traced(t) && t->state == TASK_STOPPED && !t->spin_descheduled) {
		t->run_budget_ms = 0; /* an event: the spin budget starts over */
		t->spin_probes = 0;
	}
}

/* Reaps every task that is on its way out, so deaths happen at one logical time. */
static void quiesce(void)
{
	for (;;) {
		bool waiting = false;
		for (struct task *t = sched_first(); t; t = t->next)
			if ((t->state == TASK_EXITING || t->proc->dying) && !death_delayed(t))
				waiting = true;
		if (!waiting)
			return;
		int status;
		pid_t got = wait_any(&status);
		if (got < 0)
			return;
		if (got > 0)
			handle_status(got, status);
	}
}

/* Concurrent detruns spread over the allowed CPUs: each claims a (CPU, slot) pair for its
 * lifetime by binding an abstract unix socket named after it, and takes the CPU with the
 * fewest claims, so n runs fill n CPUs before any CPU runs two. The kernel drops a claim
 * however detrun ends, nothing is left on disk, and the socket never listens, so nothing
 * can connect to it. Groups in other network namespaces do not see each other's claims. */
static bool claim_cpu_slot(int cpu, int slot)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int len = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "detrun-cpu-%d-%d",
			   cpu, slot);
	socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
	if (bind(fd, (struct sockaddr *)&addr, size) == 0)
		return true; /* held open until detrun exits */
	close(fd);
	return false;
}

static int least_claimed_cpu(const cpu_set_t *allowed)
{
	for (int slot = 0; slot < 256; slot++)
		for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, allowed) && claim_cpu_slot(cpu, slot))
				return cpu;
	return -1;
}

/* Only one task runs at a time, so the group loses no parallelism on one CPU, and every
 * hand-off between a stopped tracee and the supervisor stays on that CPU: a ptrace stop
 * costs several times less than with cross-CPU wake-ups. The tracees inherit the mask.
 * Which CPU it is must not matter to the program: every view it has of "its" CPU
 * (getcpu, sched_getaffinity, /proc/self/stat and status, RDTSCP's TSC_AUX, CPUID's APIC
 * and core ids) is virtual. */
static void pin_to_one_cpu(void)
{
	cpu_set_t allowed, one;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0 || CPU_COUNT(&allowed) == 0)
		return;
	int cpu = least_claimed_cpu(&allowed);
	if (cpu < 0) { /* no claim possible: spread by pid */
		int k = getpid() % CPU_COUNT(&allowed);
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &allowed) && k-- == 0)
				break;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

/* Kills every task and waits until each is gone, so nothing of the group outlives detrun
 * even by the moment it takes to die. A killed tracee still stops once on its way out
 * (PTRACE_EVENT_EXIT) and must be let go on. */
static void kill_group(void)
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
	kill_group();
	exit(125);
}

static int exit_code(int status)
{
	if (status < 0)
		return 125;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int tracer_run(const char *path, char **argv, const struct tracer_options *opt)
{
	tracer_opts = opt;
	sched_init(opt->quantum);
	sched_set_ops(&ops);
	vclock_set_epoch(opt->epoch);
	sys_random_seed(opt->seed);
	files_init();
	report_set_cleanup(kill_group);
	pin_to_one_cpu();
	foreground_prepare();

	/* Forked before detrun changes its own signal dispositions: ignored signals survive
	 * exec, and the program must start with the dispositions it was given. */
	struct launch launched;
	struct launch_options lo = { .cpus = opt->cpus, .namespaces = opt->namespaces,
				     .shim_intercepts = shim_intercepts() };
	shim_set_abort(abort_run);
	int err = launch_program(path, argv, &lo, &launched);
	if (err)
		die("cannot start %s: %s", argv[0], strerror(-err));
	if (opt->namespaces && !launched.namespaced)
		warn("cannot create namespaces (%s): pids, the hostname and the CPU count files "
		     "are the host's", strerror(errno));
	install_supervisor_signals();
	foreground_give(launched.init_pid > 0 ? launched.init_pid : launched.pid, self_pipe[1]);
	struct process *p = new_process(launched.pid, next_aspace++);
	p->persona = (unsigned)personality(0xffffffff); /* what it would inherit natively */
	struct task *t = sched_add(launched.pid, p);
	t->ns_tid = p->ns_tgid = read_ns_tid(launched.pid);
	t->is_leader = true;
	t->state = TASK_RUNNING;
	root_tgid = launched.pid;
	namespace_init = launched.init_pid;
	reach_set_namespaced(launched.namespaced);

	for (;;) {
		if (t)
			run_until_event(t);
		quiesce();
		t = sched_pick();
		if (!t && take_waiting_stops()) {
			reap_waiting_stops();
			continue;
		}
		if (!t)
			break;
		resume(t);
	}
	/* The namespace's init exits once it has reaped everything; waiting for it also
	 * passes the group's resource usage up to detrun's own parent. */
	if (launched.init_pid > 0)
		waitpid_retry(launched.init_pid, NULL, __WALL);
	foreground_restore();
	int exec_errno = launch_exec_error(&launched);
	int code = exit_code(root_status);
	if (exec_errno) {
		fprintf(stderr, "detrun: cannot execute %s: %s\n", argv[0], strerror(exec_errno));
		code = exec_errno == ENOENT ? 127 : 126;
	}
	const struct shim_ops *shim = shim_get();
	return shim->finish ? shim->finish(sched_now(), code) : code;
}
