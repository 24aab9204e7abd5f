#include "supervisor/spin.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scheduler/task.h"
#include "supervisor/remote.h"
#include "supervisor/report.h"
#include "supervisor/stack.h"
#include "supervisor/tracer.h"


enum {
	SAMPLES = 6,             /* register samples per probe */
	SAMPLE_GAP_US = 1500,    /* wall time before the first look at a sample's run */
	SAMPLE_CPU_NS = 1000000, /* CPU time the task must use between two samples */
	SAMPLE_WAIT_US = 500000, /* longest wall-clock wait for that CPU time */
	MAX_BUDGET_MS = 4000,    /* a computing task is looked at no less often than this */
	READONLY_PATIENCE = 8,   /* probes a changing read-only loop gets before a hazard */
	MAX_DIGEST_BYTES = 256 << 20, /* writable memory compared per probe, in all */
};

struct region {
	uint64_t start, end;
	uint64_t digest;
};

struct probe {
	struct region *regions;
	int n;
	bool untrackable; /* writable memory too large to compare */
};

/* ---- the task's own CPU time ------------------------------------------------------------ */

/* Nanoseconds t has run, in the kernel too (/proc/TID/schedstat); -1 when it is gone. On a
 * busy machine wall time says nothing about how far a task got; its CPU time does. */
static int64_t task_cpu_ns(const struct task *t)
{
	char path[64], buf[128];
	snprintf(path, sizeof(path), "/proc/%d/schedstat", t->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

void spin_start(struct task *t)
{
	t->run_cpu_ns = task_cpu_ns(t);
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
static bool restarted_by_kernel(const struct user_regs_struct *r)
{
	int64_t ax = (int64_t)r->rax;
	return (int64_t)r->orig_rax >= 0 && ax <= -512 && ax >= -514;
}

static uint64_t args_digest(const struct user_regs_struct *r)
{
	uint64_t a[6] = { r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9 }, h = 1469598103934665603ULL;
	for (int i = 0; i < 6; i++)
		h = (h ^ a[i]) * 1099511628211ULL;
	return h;
}

/* A probe's interrupt found t inside a native call that the kernel will restart. Without
 * the probe the call would have run once: its restart must not be a second event (nor run
 * its handler twice). Same call = same number, same place, same arguments — a new call
 * with the same arguments as an allowed one would not stop at all. */
static void mark_restart(struct task *t, int request)
{
	t->probe_restart_nr = (long)t->regs.orig_rax;
	t->probe_restart_rip = t->regs.rip;
	t->probe_restart_args = args_digest(&t->regs);
	t->probe_restart_request = request;
}

bool spin_restarted(struct task *t, bool seccomp)
{
	long nr = t->probe_restart_nr;
	t->probe_restart_nr = -1;
	if (nr < 0 || !seccomp || remote_load_regs(t))
		return false;
	if ((long)t->regs.orig_rax != nr || t->regs.rip != t->probe_restart_rip ||
	    args_digest(&t->regs) != t->probe_restart_args)
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
		    remote_load_regs(t) == 0 && restarted_by_kernel(&t->regs)) {
			mark_restart(t, PTRACE_SYSCALL);
			t->regs_valid = false;
			ptrace(PTRACE_CONT, t->tid, 0, 0);
			continue;
		}
		handle(t->tid, status);
		return false;
	}
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
	ptrace(PTRACE_CONT, t->tid, 0, 0);
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

/* ---- memory watch ------------------------------------------------------------------------ */

static uint64_t digest(struct task *t, uint64_t start, uint64_t end)
{
	uint64_t h = 1469598103934665603ULL;
	static unsigned char buf[1 << 16];
	for (uint64_t a = start; a < end; a += sizeof(buf)) {
		size_t n = end - a < sizeof(buf) ? (size_t)(end - a) : sizeof(buf);
		if (remote_read(t, REMOTE(a), buf, n))
			return 0;
		for (size_t i = 0; i < n; i += 8) {
			uint64_t w;
			memcpy(&w, buf + i, 8);
			h = (h ^ w) * 1099511628211ULL;
		}
	}
	return h;
}

static void watch_memory(struct probe *p, struct task *t)
{
	*p = (struct probe){ 0 };
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", t->tid);
	FILE *f = fopen(path, "re");
	if (!f) {
		p->untrackable = true;
		return;
	}
	int cap = 0;
	uint64_t total = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char perms[8], name[256] = "";
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %255s", &start, &end, perms, name) < 3)
			continue;
		if (perms[1] != 'w' || !strcmp(name, "[vvar]") || !strcmp(name, "[vdso]"))
			continue;
		total += end - start;
		if (total > MAX_DIGEST_BYTES) {
			p->untrackable = true;
			break;
		}
		if (p->n == cap) {
			cap = cap ? cap * 2 : 64;
			p->regions = realloc(p->regions, (size_t)cap * sizeof(*p->regions));
			if (!p->regions)
				abort();
		}
		p->regions[p->n++] = (struct region){ start, end, digest(t, start, end) };
	}
	fclose(f);
}

/* Ends the watch; true if watched memory differs from when the watch began. */
static bool unwatch_memory(struct probe *p, struct task *t)
{
	bool changed = p->untrackable;
	for (int i = 0; i < p->n && !changed; i++)
		changed = digest(t, p->regions[i].start, p->regions[i].end) != p->regions[i].digest;
	free(p->regions);
	return changed;
}

/* ---- the verdict ---------------------------------------------------------------------------- */

static bool same_state(const struct user_regs_struct *a, const struct user_regs_struct *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* In a syscall the task cannot take injected calls cleanly; it is not spinning there. */
static bool in_syscall(const struct user_regs_struct *r)
{
	int64_t ax = (int64_t)r->rax;
	return (int64_t)r->orig_rax >= 0 && ax <= -512 && ax >= -516;
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

enum spin_verdict spin_check(struct task *t, void (*handle)(int, int))
{
	if (blocked_in_kernel(t)) {
		longer_budget(t);
		return SPIN_KEEP_RUNNING;
	}
	t->probe_restart_nr = -1;
	if (!interrupt(t, handle))
		return SPIN_EVENT;
	struct user_regs_struct samples[SAMPLES + 1];
	if (remote_load_regs(t))
		goto keep_running;
	if (in_syscall(&t->regs)) {
		if (restarted_by_kernel(&t->regs))
			mark_restart(t, PTRACE_CONT);
		goto keep_running;
	}
	if (!t->proc->syscall_insn)
		goto keep_running;
	samples[0] = t->regs;

	struct probe probe;
	watch_memory(&probe, t);
	int taken = 1;
	for (; taken <= SAMPLES; taken++) {
		bool ran = run_some(t);
		if (!interrupt(t, handle)) {
			unwatch_memory(&probe, t);
			return SPIN_EVENT;
		}
		if (!ran) {
			/* Inconclusive, not a verdict: look again later. */
			unwatch_memory(&probe, t);
			goto keep_running;
		}
		remote_load_regs(t);
		samples[taken] = t->regs;
	}
	taken--; /* samples[0..taken] */
	if (unwatch_memory(&probe, t)) {
		t->spin_probes = 0;
		goto keep_running;
	}
	/* Registers identical at the final stop and an earlier sample, with at least
	 * SAMPLE_CPU_NS of the task's own running between them: a pure spin. */
	for (int i = 0; i < taken; i++)
		if (same_state(&samples[i], &samples[taken])) {
			trace_event(t, "  spin: no writes, state repeats at 0x%llx; descheduled",
				    (unsigned long long)t->regs.rip);
			goto deschedule;
		}
	if (++t->spin_probes < READONLY_PATIENCE) {
		t->run_budget_ms = (t->run_budget_ms ? t->run_budget_ms : 10) * 2;
		if (t->run_budget_ms > MAX_BUDGET_MS)
			t->run_budget_ms = MAX_BUDGET_MS;
		ptrace(PTRACE_CONT, t->tid, 0, 0);
		return SPIN_KEEP_RUNNING;
	}
	hazard(t, "a loop that writes no memory but whose registers change kept running "
		  "without an event; descheduled at a point chosen by the wall clock, so this "
		  "task's later behaviour may vary between runs");
	stack_report(t, "spinning here");
deschedule:
	t->spin_probes = 0;
	t->spin_descheduled = true;
	t->state = TASK_STOPPED;
	t->syscall_nr = -1;
	return SPIN_DESCHEDULE;

keep_running:
	longer_budget(t);
	ptrace(PTRACE_CONT, t->tid, 0, 0);
	return SPIN_KEEP_RUNNING;
}
