#include "engine/spin_cycle.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include "vkernel/task.h"
#include "engine/remote.h"

enum {
	MAX_CYCLE_STEPS = 6000, /* instructions stepped looking for a cycle */
	MIN_CYCLE_STEPS = 128,  /* stepped whatever the time limit */
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

struct state_key {
	uint64_t weight; /* non-zero words in the pages the cycle writes, stacks aside */
	uint64_t regs;
};

static uint64_t regs_key(const struct user_regs_struct *r)
{
	const unsigned char *p = (const unsigned char *)r;
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < sizeof(*r); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* A system call instruction at rip: stepping over it would run the call without its
 * stop for a call the filter allows; the task is left to reach it as an event. */
static bool at_syscall_insn(struct task *t)
{
	unsigned char insn[2];
	if (remote_read(t, REMOTE(t->regs.rip), insn, sizeof(insn)))
		return true;
	return (insn[0] == 0x0f && (insn[1] == 0x05 || insn[1] == 0x34)) ||
	       (insn[0] == 0xcd && insn[1] == 0x80);
}

/* One instruction. 0: stepped, registers loaded; 1: t reached a stop of its own (a
 * signal, a fault), handed to `handle`; -1: t cannot be stepped. */
static int step(struct task *t, void (*handle)(int, int))
{
	if (at_syscall_insn(t) || ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0)
		return -1;
	int status;
	pid_t got;
	while ((got = waitpid(t->tid, &status, __WALL)) < 0 && errno == EINTR)
		;
	if (got != t->tid)
		return -1;
	t->regs_valid = false;
	siginfo_t si;
	if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP && (status >> 16) == 0 &&
	    ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 && si.si_code == TRAP_TRACE)
		return remote_load_regs(t) ? -1 : 0;
	handle(t->tid, status);
	return 1;
}

static bool same_fpu(struct task *t, const struct user_fpregs_struct *then)
{
	struct user_fpregs_struct now;
	return ptrace(PTRACE_GETFPREGS, t->tid, 0, &now) == 0 && !memcmp(&now, then, sizeof(now));
}

/* Steps from the state the probe left t in until that state comes back: the cycle's
 * length, 0 when it does not within MAX_CYCLE_STEPS or the time limit, -1 when t reached
 * an event. The key of each state of the cycle goes to keys[]. */
static int find_period(struct task *t, void (*handle)(int, int), const struct cycle_memory *mem,
		       struct state_key *keys, int64_t limit_ns)
{
	int64_t until = now_ns() + limit_ns;
	struct user_regs_struct first = t->regs;
	struct user_fpregs_struct fpu;
	if (ptrace(PTRACE_GETFPREGS, t->tid, 0, &fpu) < 0 || !mem->mark(mem->ctx))
		return 0;
	for (int n = 0; n < MAX_CYCLE_STEPS; n++) {
		if (n >= MIN_CYCLE_STEPS && n % 32 == 0 && now_ns() > until)
			return 0;
		keys[n] = (struct state_key){ mem->weight(mem->ctx, t->regs.rsp),
					      regs_key(&t->regs) };
		int r = step(t, handle);
		if (r)
			return r > 0 ? -1 : 0;
		if (!memcmp(&t->regs, &first, sizeof(first)) && same_fpu(t, &fpu) &&
		    mem->unchanged(mem->ctx))
			return n + 1;
	}
	return 0;
}

static int compare_keys(const struct state_key *a, const struct state_key *b)
{
	if (a->weight != b->weight)
		return a->weight < b->weight ? -1 : 1;
	return a->regs < b->regs ? -1 : a->regs > b->regs;
}

/* The state of the cycle with the lowest key, if no other state shares that key. The
 * fewest non-zero words first: a lock is free, its owner field clear, at such a state, so
 * the tasks the spinner waits for do not find it holding their lock. */
static int lowest_state(const struct state_key *keys, int period)
{
	int low = 0, ties = 0;
	for (int i = 1; i < period; i++) {
		int c = compare_keys(&keys[i], &keys[low]);
		if (c < 0) {
			low = i;
			ties = 0;
		} else if (c == 0) {
			ties++;
		}
	}
	return ties ? -1 : low;
}

enum cycle_verdict spin_cycle_stop(struct task *t, void (*handle)(int, int),
				   const struct cycle_memory *mem, int64_t limit_ns)
{
	if (remote_load_regs(t))
		return CYCLE_NONE;
	struct state_key *keys = malloc(MAX_CYCLE_STEPS * sizeof(*keys));
	if (!keys)
		abort();
	enum cycle_verdict v = CYCLE_NONE;
	int period = find_period(t, handle, mem, keys, limit_ns);
	int low = period > 0 ? lowest_state(keys, period) : -1;
	if (period < 0)
		v = CYCLE_EVENT;
	for (int n = 0; low >= 0 && v == CYCLE_NONE; n++) {
		if (n == low) {
			/* Back on the cycle's path: the same state as when it was stepped. */
			v = regs_key(&t->regs) == keys[low].regs ? CYCLE_STOPPED : CYCLE_NONE;
			break;
		}
		int r = step(t, handle);
		if (r)
			v = r > 0 ? CYCLE_EVENT : CYCLE_NONE;
	}
	free(keys);
	return v;
}
