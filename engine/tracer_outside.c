/*
 * detrun's own signals. Signals sent to detrun from outside the group are written to a
 * pipe by the handler and passed on to the group between events, where a shim can log them
 * and a replay deliver them at the same point; SIGCHLD matters only while the scheduler
 * waits for outside input; SIGALRM is the spin detector's budget. Also which CPU a serial
 * group runs on, among the detruns running beside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scheduler/scheduler.h"
#include "shim/shim.h"
#include "engine/debugger_hooks.h"
#include "engine/foreground.h"
#include "engine/jobctl.h"
#include "vkernel/report.h"
#include "vkernel/task.h"
#include "engine/remote.h"
#include "engine/tracer.h"
#include "vkernel/signal_bits.h"
#include "engine/tracer_internal.h"

static int self_pipe[2] = { -1, -1 };
static volatile sig_atomic_t alarm_fired;
static bool stops_waiting;  /* a SIGCHLD came while detrun waited for outside input */
static bool debugger_input; /* gdb sent something while detrun waited for outside input */

/* Set after every write to self_pipe, so that the loop reads the pipe only when something
 * was written: a read that finds it empty cost a call at every pick. */
static volatile sig_atomic_t pipe_written = 1;

void outside_report(const struct outside_signal_msg *msg)
{
	int saved = errno;
	if (write(self_pipe[1], msg, sizeof(*msg)) < 0) {
		/* the pipe is full: the signal is already known to be pending */
	}
	pipe_written = 1;
	errno = saved;
}

static void on_alarm(int sig)
{
	alarm_fired = 1;
}

static void on_outside_signal(int sig, siginfo_t *si, void *ctx)
{
	struct outside_signal_msg msg = { sig, si->si_code, si->si_pid };
	outside_report(&msg);
}

/* A task changed state while detrun was waiting for outside input (killed from outside,
 * say): its stop is handled as soon as the scheduler's pick has ended (handling it may
 * free tasks the scheduler is looking at), rather than when the input comes. */
bool take_waiting_stops(void)
{
	bool waiting = stops_waiting;
	stops_waiting = false;
	return waiting;
}

/* gdb's input (a Ctrl-C) while the group was idle: like a stop, it ends the pick, and the
 * stop loop hands it to the debugger once the pick has returned, never inside it. */
bool take_debugger_input(void)
{
	bool waiting = debugger_input;
	debugger_input = false;
	return waiting;
}

bool waiting_stops_pending(void)
{
	return stops_waiting || debugger_input;
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
void queue_outside_signal(int sig)
{
	for (int i = 0; i < n_outside_signals; i++)
		if (outside_signals[i] == sig)
			return;
	if (n_outside_signals < MAX_OUTSIDE_SIGNALS)
		outside_signals[n_outside_signals++] = sig;
}

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
	tracer_kill_group();
	foreground_restore();
	int code = tracer_exit_code(tracer_group_status(SIGKILL));
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

/* Signals from outside noted by note_outside_signals, not yet handled. */
#define MAX_NOTED 64
static struct outside_signal_msg noted[MAX_NOTED];
static int n_noted;
static int end_requested; /* see outside_end_requested */

/* Reads what the signal handler wrote to the pipe, and only notes it: a SIGCHLD says a
 * task changed state (handled by the main loop, which may free tasks), the others wait for
 * handle_outside_signals. Safe inside the scheduler's pick: it changes nothing there. */
static void note_outside_signals(void)
{
	if (!pipe_written)
		return;
	pipe_written = 0; /* before reading: a write from now on is read now or next time */
	struct outside_signal_msg msg;
	while (n_noted < MAX_NOTED && read(self_pipe[0], &msg, sizeof(msg)) == sizeof(msg)) {
		if (msg.sig == SIGCHLD)
			stops_waiting = true;
		else
			noted[n_noted++] = msg;
		if ((ENDING_SIGNALS & SIGBIT(msg.sig)) && !(msg.pid > 0 && sched_find(msg.pid)))
			end_requested = msg.sig;
	}
	if (n_noted == MAX_NOTED)
		pipe_written = 1; /* more may wait */
}

bool outside_signal_ends_run(int sig)
{
	return sig > 0 && sig <= 64 && (ENDING_SIGNALS & SIGBIT(sig));
}

int outside_end_requested(void)
{
	note_outside_signals();
	return end_requested;
}

/* Signals sent to detrun itself. The terminal's own signals reach the group's process
 * group (the sentinel reports them, engine/foreground.h), so detrun only notes them; a
 * signal aimed at detrun (kill from another shell, a timeout wrapper) is passed on to every
 * process of the group, as if it had been sent to the group's process group. */
static void handle_outside_signal(const struct outside_signal_msg *msg)
{
	static int forwarded_signals;
	bool from_group = msg->pid > 0 && sched_find(msg->pid);
	bool to_detrun_only = (msg->code == SI_USER || msg->code == SI_QUEUE) && !from_group;
	/* Asked twice from outside: the program did not stop, so detrun stops it. */
	if (!from_group && (ENDING_SIGNALS & SIGBIT(msg->sig))) {
		if (repeated_copy(msg->sig))
			return;
		if (++forwarded_signals >= 2) {
			end_group_from_outside(msg->sig, forwarded_signals);
			return;
		}
	}
	bool from_terminal = msg->code == SI_KERNEL && (TERMINAL_SIGNALS & SIGBIT(msg->sig));
	if (shim_intercepts() && (to_detrun_only || from_terminal)) {
		queue_outside_signal(msg->sig);
		return;
	}
	if (!to_detrun_only) {
		sched_signals_changed(); /* the group got it directly (Ctrl-C) */
		return;
	}
	deliver_to_group(msg->sig);
}

static void drain_outside_signals(void)
{
	int n;
	do {
		note_outside_signals();
		n = n_noted;
		n_noted = 0;
		for (int i = 0; i < n; i++)
			handle_outside_signal(&noted[i]);
	} while (n == MAX_NOTED); /* more may wait in the pipe */
}

/* Between two events, every task stopped: signals from outside reach the group here, at a
 * point of the timeline the shim can log and replay, never in the middle of a running
 * task's code. */
void pass_outside_signals(void)
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

bool outside_signals_queued(void)
{
	drain_outside_signals();
	return n_outside_signals > 0;
}

/* Signals someone outside sends to detrun, passed on to the group. */
static const int held[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define N_HELD (sizeof(held) / sizeof(held[0]))
static struct sigaction given[N_HELD]; /* what detrun was started with */
static bool holding;

static void catch_outside_signal(int sig, int flags, struct sigaction *old)
{
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_outside_signal;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, old);
}

/* A shim that does not answer (shim/program.c) while detrun is asked to end: nothing more
 * runs, and the shim goes too (killed by its own atexit). */
static __attribute__((noreturn)) void end_for_shim(int code)
{
	tracer_kill_group();
	foreground_restore();
	exit(code);
}

/* From here on a signal sent to detrun is the group's, even before the group runs: the
 * handler notes it and the tracer passes it on at the first event, where a shim logs it.
 * Before, detrun reacts as any program (an ending signal ends it). Until the group runs,
 * detrun's own calls (starting the program, a cluster's requests) are restarted. */
void hold_outside_signals(void)
{
	if (holding)
		return;
	if (pipe2(self_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		die("cannot create a pipe: %s", strerror(errno));
	static struct shim_outside for_shim = { .end_requested = outside_end_requested,
						.end_run = end_for_shim };
	for_shim.signal_fd = self_pipe[0];
	shim_set_outside(&for_shim);
	for (size_t i = 0; i < N_HELD; i++)
		catch_outside_signal(held[i], SA_RESTART, &given[i]);
	holding = true;
}

/* In the program's process before exec: the dispositions detrun was given (an ignored
 * signal stays ignored across exec), never detrun's handler writing to detrun's pipe. */
void restore_given_signals(void)
{
	for (size_t i = 0; holding && i < N_HELD; i++)
		sigaction(held[i], &given[i], NULL);
}

void install_supervisor_signals(void)
{
	hold_outside_signals();
	/* No SA_RESTART from here on: waitpid must return to notice. */
	for (size_t i = 0; i < N_HELD; i++)
		catch_outside_signal(held[i], 0, NULL);
	catch_outside_signal(SIGCHLD, 0, NULL);
	catch_outside_signal(SIGCONT, 0, NULL);
	struct sigaction al = { 0 };
	al.sa_handler = on_alarm;
	sigemptyset(&al.sa_mask);
	sigaction(SIGALRM, &al, NULL);
	signal(SIGTTOU, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* Every ptrace stop raises SIGCHLD; it matters only while waiting for outside input
	 * (wait_outside lets it through), not while waitpid is already listening. The spin
	 * detector's SIGALRM is for tracer_wait_any alone: elsewhere it would interrupt detrun's
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
	struct pollfd all[259];
	int n = 0;
	for (int i = 0; i < nfds && n < 257; i++)
		all[n++] = (struct pollfd){ fds[i].fd, fds[i].events, 0 };
	int gdb_fd = tracer_debugger ? tracer_debugger->wait_fd() : -1;
	all[n++] = (struct pollfd){ gdb_fd, POLLIN, 0 }; /* -1: none */
	all[n++] = (struct pollfd){ self_pipe[0], POLLIN, 0 };
	sigset_t during;
	sigprocmask(SIG_SETMASK, NULL, &during);
	sigdelset(&during, SIGCHLD);
	struct timespec ts = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };
	int r = ppoll(all, (nfds_t)n, timeout_ms < 0 ? NULL : &ts, &during);
	if (r < 0 && errno != EINTR) /* EINVAL: more descriptors than RLIMIT_NOFILE allows */
		die("cannot wait for input from outside the group: %s", strerror(errno));
	if (r < 0)
		return -1;
	for (int i = 0; i < n - 2; i++)
		fds[i].revents = all[i].revents;
	if (all[n - 2].revents) { /* gdb's Ctrl-C while every task waits: after the pick */
		debugger_input = true;
		if (--r == 0 && !all[n - 1].revents)
			return -1;
	}
	if (all[n - 1].revents) {
		note_outside_signals(); /* handled between events, outside the pick */
		return r - 1 > 0 ? r - 1 : -1;
	}
	return r;
}

int wait_outside(struct pollfd *fds, int nfds, int timeout_ms)
{
	const struct shim_ops *shim = shim_get();
	if (!shim->wait_outside)
		return real_wait_outside(fds, nfds, timeout_ms);
	return shim->wait_outside(sched_now(), fds, nfds, timeout_ms, real_wait_outside);
}

pid_t tracer_wait_any(int *status)
{
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	for (;;) {
		/* A SIGALRM pending from before is taken as the mask opens; one that lands
		 * after the check is followed by the next (tracer_arm_alarm is periodic). */
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

static int armed_ms; /* the period tracer_arm_alarm set last; 0: disarmed */

/* Periodic: a SIGALRM that lands between arming and waitpid (a busy machine can delay
 * detrun that long) is followed by another, instead of leaving waitpid asleep for good
 * beside a task that spins. */
void tracer_arm_alarm(int ms)
{
	struct itimerval it = { { ms / 1000, (ms % 1000) * 1000 },
				{ ms / 1000, (ms % 1000) * 1000 } };
	alarm_fired = 0;
	armed_ms = ms;
	setitimer(ITIMER_REAL, &it, NULL);
}

void tracer_keep_alarm(int ms)
{
	if (armed_ms != ms)
		tracer_arm_alarm(ms);
}

int64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
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
	int len = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "detrun-cpu-%d-%d", cpu,
			   slot);
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
void tracer_pin_to_one_cpu(void)
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
