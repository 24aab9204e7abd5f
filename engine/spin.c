#include "engine/spin.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scheduler/scheduler.h"
#include "vkernel/task.h"
#include "engine/remote.h"
#include "vkernel/report.h"
#include "engine/stack.h"
#include "engine/spin_cycle.h"
#include "engine/spin_watch.h"
#include "syscalls/syscall_table.h"
#include "engine/tracer.h"

enum {
	SAMPLES = 6,             /* register samples per probe */
	SAMPLE_GAP_US = 1500,    /* wall time before the first look at a sample's run */
	SAMPLE_CPU_NS = 1000000, /* CPU time the task must use between two samples */
	SAMPLE_WAIT_US = 500000, /* longest wall-clock wait for that CPU time */
	MAX_BUDGET_MS = 4000,    /* a computing task is looked at no less often than this */
	MAX_CYCLE_BACKOFF = 2,   /* a cycle search at least every 4th probe (cycle_search_due) */
	READONLY_PATIENCE = 8,   /* probes a changing read-only loop gets before a hazard */
};

/* ---- the task's own CPU time ------------------------------------------------------------ */

/* Open /proc/TID/schedstat files, read again with pread at every event: opening one costs
 * a path walk through /proc, three calls where one does. A file reads the task that holds
 * its number (an exec by a thread hands the leader's number to that thread, and the file
 * follows); once that task is gone it reads as ESRCH, even if the number is used again,
 * and is opened again by the number. A handful is enough: one task runs between two
 * events in serial mode, a few at once in parallel mode; the least recently used file
 * makes room. */
enum {
	CPU_FILES = 16
};
static struct cpu_file {
	pid_t tid; /* 0: a free entry */
	int fd;
	uint64_t used;
} cpu_files[CPU_FILES];
static uint64_t cpu_files_clock;

static void cpu_file_drop(struct cpu_file *f)
{
	if (f->tid && f->fd >= 0)
		close(f->fd);
	*f = (struct cpu_file){ 0 };
}

static struct cpu_file *cpu_file_for(pid_t tid)
{
	struct cpu_file *oldest = &cpu_files[0];
	for (int i = 0; i < CPU_FILES; i++) {
		if (cpu_files[i].tid == tid)
			return &cpu_files[i];
		if (cpu_files[i].used < oldest->used)
			oldest = &cpu_files[i];
	}
	cpu_file_drop(oldest);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/schedstat", tid);
	*oldest = (struct cpu_file){ tid, open(path, O_RDONLY | O_CLOEXEC), 0 };
	return oldest;
}

static ssize_t read_cpu_file(struct cpu_file *f, char *buf, size_t size)
{
	f->used = ++cpu_files_clock;
	return f->fd >= 0 ? pread(f->fd, buf, size, 0) : -1;
}

/* Nanoseconds t has run, in the kernel too (/proc/TID/schedstat); -1 when it is gone. On a
 * busy machine wall time says nothing about how far a task got; its CPU time does. */
static int64_t task_cpu_ns(const struct task *t)
{
	char buf[128];
	struct cpu_file *f = cpu_file_for(t->tid);
	ssize_t n = read_cpu_file(f, buf, sizeof(buf) - 1);
	if (n <= 0) { /* a file of a task gone (see cpu_files), or t itself is gone */
		cpu_file_drop(f);
		f = cpu_file_for(t->tid);
		n = read_cpu_file(f, buf, sizeof(buf) - 1);
		if (n <= 0)
			cpu_file_drop(f); /* t is gone: nothing kept for it */
	}
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

void spin_start(struct task *t)
{
	t->run_cpu_ns = task_cpu_ns(t);
}

void spin_start_at_alarm(struct task *t)
{
	t->run_cpu_ns = SPIN_NOT_STARTED;
}

bool spin_started(const struct task *t)
{
	return t->run_cpu_ns != SPIN_NOT_STARTED;
}

int spin_remaining_ms(struct task *t, int budget_ms)
{
	int64_t now = task_cpu_ns(t);
	if (now < 0 || t->run_cpu_ns < 0)
		return 0; /* cannot tell: look, the probe finds out what became of it */
	int64_t left = budget_ms * 1000000LL - (now - t->run_cpu_ns);
	return left <= 0 ? 0 : (int)((left + 999999) / 1000000);
}

/* ---- native calls a probe cuts short ------------------------------------------------------- */

/* The kernel's restart codes: the call did not happen and is restarted through its syscall
 * instruction, so through the filter again (ERESTART_RESTARTBLOCK restarts through
 * restart_syscall, which the filter allows). */
static bool restarted_by_kernel(const struct task *t)
{
	int64_t ax = syscall_result(t);
	return syscall_number(t) >= 0 && ax <= -512 && ax >= -514;
}

static uint64_t args_digest(const struct task *t)
{
	uint64_t h = 1469598103934665603ULL;
	for (int i = 0; i < 6; i++)
		h = (h ^ syscall_arg(t, i)) * 1099511628211ULL;
	return h;
}

/* A probe's interrupt found t inside a native call that the kernel will restart. Without
 * the probe the call would have run once: its restart must not be a second event (nor run
 * its handler twice). Same call = same number, same place, same arguments — a new call
 * with the same arguments as an allowed one would not stop at all. */
static void mark_restart(struct task *t, int request)
{
	t->probe_restart_nr = syscall_number(t);
	t->probe_restart_rip = task_ip(t);
	t->probe_restart_args = args_digest(t);
	t->probe_restart_request = request;
}

bool spin_restarted(struct task *t, bool seccomp)
{
	long nr = t->probe_restart_nr;
	t->probe_restart_nr = -1;
	if (nr < 0 || !seccomp || remote_load_regs(t))
		return false;
	if (syscall_number(t) != nr || task_ip(t) != t->probe_restart_rip ||
	    args_digest(t) != t->probe_restart_args)
		return false;
	t->resume = t->probe_restart_request == PTRACE_SYSCALL ? RESUME_SYSCALL : RESUME_CONT;
	return true;
}

/* ---- stopping and starting the task ---------------------------------------------------- */

static int wait_for(const struct task *t, int *status)
{
	for (;;) {
		pid_t got = waitpid(t->tid, status, __WALL);
		if (got == t->tid)
			return 0;
		if (got < 0 && errno != EINTR)
			return -1;
	}
}

/* Interrupts t and waits for the interrupt stop. A different stop (t reached an event
 * first) is handed to `handle` and reported as false. */
static bool interrupt(struct task *t, void (*handle)(int, int))
{
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		return false;
	int status;
	for (;;) {
		if (wait_for(t, &status))
			return false;
		if (WIFSTOPPED(status) && ((unsigned)status >> 16) == PTRACE_EVENT_STOP) {
			t->regs_valid = false;
			return true;
		}
		/* A syscall-exit stop with a restart code: the interrupt cut short a native call
		 * t was resumed into with PTRACE_SYSCALL. Its exit is the restarted call's, later;
		 * on to the interrupt stop. */
		t->regs_valid = false;
		if (WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80) &&
		    remote_load_regs(t) == 0 && restarted_by_kernel(t)) {
			mark_restart(t, PTRACE_SYSCALL);
			t->regs_valid = false;
			ptrace(PTRACE_CONT, t->tid, 0, 0);
			continue;
		}
		t->interrupt_pending = 2;
		handle(t->tid, status);
		return false;
	}
}

bool spin_stale_interrupt_cut(struct task *t, int status)
{
	if (!t->interrupt_pending || --t->interrupt_pending)
		return false; /* none, or the stop the interrupt lost to */
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != (SIGTRAP | 0x80) || remote_load_regs(t) ||
	    !restarted_by_kernel(t))
		return false;
	mark_restart(t, PTRACE_SYSCALL);
	t->regs_valid = false;
	return ptrace(PTRACE_CONT, t->tid, 0, 0) == 0;
}

bool spin_interrupt(struct task *t, void (*handle)(int, int))
{
	return interrupt(t, handle);
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool blocked_in_kernel(const struct task *t);

/* Lets t run until it has used SAMPLE_CPU_NS more CPU time, however long it waits for a
 * CPU. False when it did not get that within SAMPLE_WAIT_US, or sleeps in the kernel: the
 * samples would then show a task that did not run, not one that spins. */
static bool run_some(struct task *t)
{
	int64_t from = task_cpu_ns(t);
	ptrace(tracer_resume_request(t), t->tid, 0, 0);
	sleep_us(SAMPLE_GAP_US);
	for (long waited = SAMPLE_GAP_US; waited < SAMPLE_WAIT_US; waited += 250) {
		int64_t now = task_cpu_ns(t);
		if (from < 0 || now < 0 || now - from >= SAMPLE_CPU_NS)
			return true;
		if (blocked_in_kernel(t))
			return false;
		sleep_us(250);
	}
	return false;
}

/* ---- the verdict ---------------------------------------------------------------------------- */

static bool same_state(const struct user_regs_struct *a, const struct user_regs_struct *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* In a syscall the task cannot take injected calls cleanly; it is not spinning there. */
static bool in_syscall(const struct task *t)
{
	int64_t ax = syscall_result(t);
	return syscall_number(t) >= 0 && ax <= -512 && ax >= -516;
}

void spin_note_interrupted_call(struct task *t)
{
	if (restarted_by_kernel(t))
		mark_restart(t, PTRACE_CONT);
}

static void longer_budget(struct task *t)
{
	t->run_budget_ms = (t->run_budget_ms ? t->run_budget_ms : 10) * 2;
	if (t->run_budget_ms > MAX_BUDGET_MS)
		t->run_budget_ms = MAX_BUDGET_MS;
}

/* Sleeping in a syscall the kernel runs for it (a blocking connect, a write to a slow pipe
 * outside): not a spin, and interrupting it would make the kernel restart the call — an
 * extra event that a replay, where the call does not wait, would not have. */
static bool blocked_in_kernel(const struct task *t)
{
	char path[64], state[16] = "";
	snprintf(path, sizeof(path), "/proc/%d/syscall", t->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, state, sizeof(state) - 1);
	close(fd);
	return n > 0 && strncmp(state, "running", 7) != 0;
}

static enum spin_verdict keep_running(struct task *t)
{
	longer_budget(t);
	ptrace(tracer_resume_request(t), t->tid, 0, 0);
	return SPIN_KEEP_RUNNING;
}

static enum spin_verdict deschedule(struct task *t)
{
	t->spin_probes = 0;
	t->spin_descheduled = true;
	t->state = TASK_STOPPED;
	t->syscall_nr = -1;
	return SPIN_DESCHEDULE;
}

enum sampling {
	SAMPLED,
	SAMPLING_MET_EVENT,
	SAMPLING_INCONCLUSIVE,
};

/* Lets t run in short slices, sampling its registers after each into samples[0..SAMPLES].
 * A first window shows which pages the loop writes; the verdict window follows. The
 * caller ends the watch. */
static enum sampling take_samples(struct task *t, void (*handle)(int, int),
				  struct user_regs_struct *samples, struct probe *probe)
{
	watch_memory(probe, t);
	for (int taken = 0; taken <= SAMPLES; taken++) {
		bool ran = run_some(t);
		if (!interrupt(t, handle))
			return SAMPLING_MET_EVENT;
		if (!ran)
			return SAMPLING_INCONCLUSIVE; /* not a verdict: look again later */
		remote_load_regs(t);
		samples[taken] = t->regs;
		if (taken == 0)
			watch_settle(probe);
	}
	return SAMPLED;
}

/* Does a task other than t wait for its turn, or for virtual time that t holds still? */
static bool others_wait(const struct task *t)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u != t && u->state == TASK_STOPPED && (!u->parked || u->wait.deadline_ns >= 0))
			return true;
	return false;
}

static bool state_repeats(const struct user_regs_struct *samples)
{
	for (int i = 0; i < SAMPLES; i++)
		if (same_state(&samples[i], &samples[SAMPLES]))
			return true;
	return false;
}

/* Samples of a loop whose writes changed nothing: registers identical at the final stop
 * and an earlier sample, with at least SAMPLE_CPU_NS of the task's own running between
 * them and no page written, are a pure spin (stopped anywhere, it leaves the same memory);
 * changing registers, or pages written back with what they held, are one only if they go
 * on for long. */
static enum spin_verdict judge_samples(struct task *t, const struct user_regs_struct *samples,
				       enum mem_verdict mem)
{
	if (mem == MEM_UNTOUCHED && state_repeats(samples)) {
		trace_event(t, "  spin: no writes, state repeats at 0x%llx; descheduled",
			    (unsigned long long)task_ip(t));
		return deschedule(t);
	}
	if (++t->spin_probes < READONLY_PATIENCE)
		return keep_running(t);
	trace_event(t, "  spin: registers change, memory does not; descheduled at 0x%llx",
		    (unsigned long long)task_ip(t));
	t->spin_hazard_due = true; /* said if it ever runs again (spin_resuming) */
	return deschedule(t);
}

void spin_resuming(struct task *t)
{
	if (!t->spin_hazard_due)
		return;
	t->spin_hazard_due = false;
	hazard(t, "resumes a loop that changed no memory but whose registers changed, "
		  "descheduled at a point chosen by timing: its behaviour from here may vary "
		  "between runs");
	stack_report(t, "descheduled here");
}

/* Is a cycle search due at this probe? Each search that finds none doubles the probes
 * until the next (up to every 2^MAX_CYCLE_BACKOFF-th), until t's next event: a computation
 * would otherwise pay a quarter of its time at every probe (matmul: 1.66x), while a
 * spinner is only found later, at the same state (spin_cycle.h). */
static bool cycle_search_due(struct task *t)
{
	if (t->cycle_skips > 0) {
		t->cycle_skips--;
		return false;
	}
	return true;
}

static void cycle_missed(struct task *t)
{
	if (t->cycle_misses < MAX_CYCLE_BACKOFF)
		t->cycle_misses++;
	t->cycle_skips = (1 << t->cycle_misses) - 1;
}

/* A loop whose whole state comes back (spin_cycle.h) is stopped at the point its cycle
 * chooses, whatever its writes; tried while another task waits for the CPU t holds, for a
 * quarter of the CPU time it just ran at most (a computation pays a bounded share, less as
 * searches fail; a spinner's longer cycles are found as its budget grows). */
static enum spin_verdict judge(struct task *t, void (*handle)(int, int),
			       const struct user_regs_struct *samples, struct probe *probe)
{
	enum mem_verdict mem = watch_verdict(probe);
	if (others_wait(t) && cycle_search_due(t)) {
		struct cycle_memory watch = watch_cycle(probe);
		int64_t ran_ms = t->run_budget_ms ? t->run_budget_ms : tracer_opts->spin_budget_ms;
		switch (spin_cycle_stop(t, handle, &watch, ran_ms * 1000000 / 4)) {
		case CYCLE_STOPPED:
			trace_event(t,
				    "  spin: its state comes back; descheduled at 0x%llx, "
				    "the state its cycle chooses",
				    (unsigned long long)task_ip(t));
			return deschedule(t);
		case CYCLE_EVENT:
			return SPIN_EVENT;
		case CYCLE_NONE:
			cycle_missed(t);
			break;
		}
	}
	if (mem == MEM_CHANGED)
		t->spin_probes = 0;
	if (mem >= MEM_UNKNOWN)
		return keep_running(t); /* a computation, or unknown pages: hashed next time */
	return judge_samples(t, samples, mem);
}

enum spin_verdict spin_check(struct task *t, void (*handle)(int, int))
{
	if (blocked_in_kernel(t)) {
		longer_budget(t);
		return SPIN_KEEP_RUNNING;
	}
	t->probe_restart_nr = -1;
	if (!interrupt(t, handle))
		return SPIN_EVENT;
	if (remote_load_regs(t))
		return keep_running(t);
	if (in_syscall(t)) {
		if (restarted_by_kernel(t))
			mark_restart(t, PTRACE_CONT);
		return keep_running(t);
	}
	if (!t->proc->syscall_insn)
		return keep_running(t);
	struct user_regs_struct samples[SAMPLES + 1];
	struct probe probe;
	enum spin_verdict v;
	switch (take_samples(t, handle, samples, &probe)) {
	case SAMPLING_MET_EVENT:
		v = SPIN_EVENT;
		break;
	case SAMPLING_INCONCLUSIVE:
		v = keep_running(t);
		break;
	default:
		v = judge(t, handle, samples, &probe);
	}
	watch_end(&probe);
	return v;
}

/* Can this machine count a task's branches (what would let detrun stop a loop at a
 * deterministic point)? Asked once. */
static bool branch_counters_present(void)
{
	static int present = -1;
	if (present < 0) {
		struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE,
					     .size = sizeof(a),
					     .config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
					     .disabled = 1,
					     .exclude_kernel = 1,
					     .exclude_hv = 1 };
		int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		present = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	return present;
}

enum spin_verdict spin_preempt_for_timer(struct task *t, void (*handle)(int, int), int64_t ran_ms)
{
	if (blocked_in_kernel(t))
		return SPIN_KEEP_RUNNING; /* a call the kernel runs: interrupting it would restart it */
	if (!interrupt(t, handle))
		return SPIN_EVENT;
	if (!t->timer_hazard_shown) {
		t->timer_hazard_shown = true;
		hazard(t,
		       "a loop without syscalls that stop kept running while a timer signal "
		       "was due; %s, so it is stopped where the wall clock found it "
		       "(after %lld ms) and the signal lands there: this task's output may vary "
		       "between runs",
		       branch_counters_present()
			       ? "this machine has branch counters, which detrun does not use yet"
			       : "without branch counters no deterministic point can be chosen",
		       (long long)ran_ms);
		stack_report(t, "running here");
	} else {
		trace_event(t, "  loop stopped by the wall clock for a timer signal");
	}
	t->spin_probes = 0;
	t->spin_descheduled = true;
	t->state = TASK_STOPPED;
	t->syscall_nr = -1;
	return SPIN_DESCHEDULE;
}
