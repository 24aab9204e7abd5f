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
	SAMPLE_GAP_US = 1500,    /* run time between samples */
	MAX_BUDGET_MS = 4000,    /* a computing task is looked at no less often than this */
	READONLY_PATIENCE = 8,   /* probes a changing read-only loop gets before a hazard */
	MAX_DIGEST_BYTES = 256 << 20, /* writable memory compared per probe, in all */
	MIN_SAMPLED_CPU_US = 200, /* CPU time the samples must span to show a spin */
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

/* ---- stopping and starting the task ---------------------------------------------------- */

/* Interrupts t and waits for the interrupt stop. A different stop (t reached an event
 * first) is handed to `handle` and reported as false. */
static bool interrupt(struct task *t, void (*handle)(int, int))
{
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		return false;
	int status;
	for (;;) {
		pid_t got = waitpid(t->tid, &status, __WALL);
		if (got == t->tid)
			break;
		if (got < 0 && errno != EINTR)
			return false;
	}
	if (WIFSTOPPED(status) && ((unsigned)status >> 16) == PTRACE_EVENT_STOP) {
		t->regs_valid = false;
		return true;
	}
	handle(t->tid, status);
	return false;
}

static void run_for_us(struct task *t, long us)
{
	ptrace(PTRACE_CONT, t->tid, 0, 0);
	struct timespec ts = { 0, us * 1000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
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

/* The interrupt came while t was inside a syscall the kernel will restart (clone and
 * fork restart whenever a stop is pending): the restart is not a new event, or the
 * timeline would depend on when the wall-clock budget ran out (and a replay diverge). */
void spin_note_interrupted_call(struct task *t)
{
	if (!in_syscall(&t->regs))
		return;
	t->probe_restart = (long)t->regs.orig_rax + 1;
	t->probe_restart_rip = t->regs.rip;
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

/* CPU time t has run, in ns (/proc/TID/schedstat); -1 if unknown. */
static int64_t cpu_ns(const struct task *t)
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

/* Did t run at all during its sample runs? On a busy machine it may have waited for a CPU
 * all along: then its repeating registers say nothing, and descheduling it at this
 * wall-clock moment would make the timeline depend on the machine's load. (A spin loop
 * goes round thousands of times in MIN_SAMPLED_CPU_US; a computation that ran that long
 * does not come back to the same registers.) */
static bool ran_enough(const struct task *t, int64_t before)
{
	int64_t after = cpu_ns(t);
	return before < 0 || after < 0 || after - before >= MIN_SAMPLED_CPU_US * 1000LL;
}

enum spin_verdict spin_check(struct task *t, void (*handle)(int, int))
{
	if (blocked_in_kernel(t)) {
		longer_budget(t);
		return SPIN_KEEP_RUNNING;
	}
	if (!interrupt(t, handle))
		return SPIN_EVENT;
	struct user_regs_struct samples[SAMPLES + 1];
	if (remote_load_regs(t))
		goto keep_running;
	spin_note_interrupted_call(t);
	if (in_syscall(&t->regs) || !t->proc->syscall_insn)
		goto keep_running;
	samples[0] = t->regs;

	struct probe probe;
	watch_memory(&probe, t);
	int taken = 1;
	bool wrote = false;
	int64_t cpu_before = cpu_ns(t);
	for (; taken <= SAMPLES && !wrote; taken++) {
		run_for_us(t, SAMPLE_GAP_US);
		if (!interrupt(t, handle)) {
			unwatch_memory(&probe, t);
			return SPIN_EVENT;
		}
		remote_load_regs(t);
		spin_note_interrupted_call(t);
		samples[taken] = t->regs;
	}
	wrote |= unwatch_memory(&probe, t);
	if (wrote) {
		t->spin_probes = 0;
		goto keep_running;
	}
	if (!ran_enough(t, cpu_before)) {
		trace_event(t, "  spin probe: the task hardly ran (a busy machine); it runs on");
		goto keep_running;
	}
	/* Registers identical at the final stop and an earlier sample: a pure spin. */
	for (int i = 0; i < taken - 1; i++)
		if (same_state(&samples[i], &samples[taken - 1])) {
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
