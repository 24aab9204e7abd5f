/* Breakpoints (int3 in the program's text) and watchpoints (the debug registers).
 *
 * An int3 is written only into a private mapping (the write goes through /proc/PID/mem
 * where the text is read-only, and a private mapping's copy is the process's own: no file
 * changes). A trap at one is the debugger's: the task is moved back onto the breakpoint's
 * address and never reaches the scheduler, so logical time does not move. The debug
 * registers are per thread: every task gets them as it next stops, new ones included. */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "debugger/internal.h"
#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "supervisor/remote.h"
#include "supervisor/tracer.h"

struct point points[MAX_POINTS];
int n_points;

static int points_aspace = -1; /* the address space the int3s are in */
static int generation = 1;     /* of the debug registers' contents */
static int *task_generation;   /* by vtid: what each task has */
static int n_task_generation;
enum {
	MAX_FORKED = 64
};
static pid_t forked[MAX_FORKED]; /* children of forks not cleaned yet */
static int n_forked;
static int step_over_vtid; /* a task stepping over an int3 taken out */
static int step_over_index = -1;

enum {
	INT3 = 0xcc
};

/* Is addr in a private mapping of t? Breakpoints go nowhere else. */
static bool private_mapping(struct task *t, uint64_t addr)
{
	struct remote_mapping m;
	return remote_mapping_at(t, addr, &m) == 0 && m.perms[3] == 'p';
}

static int insert_soft(struct task *t, struct point *p)
{
	uint8_t byte, int3 = INT3;
	if (!private_mapping(t, p->addr))
		return -EFAULT;
	if (remote_read(t, REMOTE(p->addr), &byte, 1) ||
	    remote_patch_code(t, REMOTE(p->addr), &int3, 1))
		return -EFAULT;
	p->saved = byte;
	p->inserted = true;
	points_aspace = t->proc->aspace;
	return 0;
}

static void remove_soft(struct task *t, struct point *p)
{
	uint8_t byte;
	if (p->inserted && remote_read(t, REMOTE(p->addr), &byte, 1) == 0 && byte == INT3)
		remote_patch_code(t, REMOTE(p->addr), &p->saved, 1);
	p->inserted = false;
}

int points_add(struct task *t, enum point_type type, uint64_t addr, int len)
{
	for (int i = 0; i < n_points; i++)
		if (points[i].type == type && points[i].addr == addr && points[i].len == len)
			return 0;
	int hard = 0;
	for (int i = 0; i < n_points; i++)
		hard += points[i].type != POINT_SOFT;
	if (n_points == MAX_POINTS || (type != POINT_SOFT && hard == 4))
		return -ENOSPC;
	if (type != POINT_SOFT && (len != 1 && len != 2 && len != 4 && len != 8))
		return -EINVAL;
	struct point *p = &points[n_points];
	*p = (struct point){ .type = type, .addr = addr, .len = type == POINT_HARD ? 1 : len };
	if (type == POINT_SOFT && insert_soft(t, p))
		return -EFAULT;
	n_points++;
	if (type != POINT_SOFT)
		generation++;
	return 0;
}

int points_remove(struct task *t, enum point_type type, uint64_t addr, int len)
{
	for (int i = 0; i < n_points; i++) {
		struct point *p = &points[i];
		if (p->type != type || p->addr != addr)
			continue;
		if (type == POINT_SOFT)
			remove_soft(t, p);
		else
			generation++;
		if (step_over_index == i)
			step_over_index = -1;
		else if (step_over_index > i)
			step_over_index--;
		memmove(p, p + 1, (size_t)(n_points - i - 1) * sizeof(*p));
		n_points--;
		return 0;
	}
	return 0;
}

/* A library mapped over an address after its int3 went in, or one not mapped yet when
 * a re-execution set the points: the byte there is not ours any more. */
void points_refresh(struct task *t)
{
	if (points_aspace >= 0 && t->proc->aspace != points_aspace)
		return;
	for (int i = 0; i < n_points; i++) {
		struct point *p = &points[i];
		uint8_t byte;
		if (p->type != POINT_SOFT || i == step_over_index)
			continue;
		if (p->inserted && remote_read(t, REMOTE(p->addr), &byte, 1) == 0 && byte == INT3)
			continue;
		p->inserted = false;
		insert_soft(t, p);
	}
}

int points_read_memory(struct task *t, uint64_t addr, void *buf, size_t len)
{
	int err = remote_read(t, REMOTE(addr), buf, len);
	if (err)
		return err;
	if (t->proc->aspace != points_aspace)
		return 0;
	for (int i = 0; i < n_points; i++)
		if (points[i].inserted && points[i].addr >= addr && points[i].addr < addr + len)
			((uint8_t *)buf)[points[i].addr - addr] = points[i].saved;
	return 0;
}

/* A fork copies the parent's memory with the int3s in it. The child is adopted without a
 * stop this code sees, and first runs after the parent's next event: noted at the
 * parent's fork stop, cleaned at that event (after an exec its memory is another
 * program's, which must not be touched: hence not "every new address space"). */
void points_note_fork(struct task *parent)
{
	unsigned long child = 0;
	if (ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &child) == 0 && n_forked < MAX_FORKED &&
	    parent->proc->aspace == points_aspace)
		forked[n_forked++] = (pid_t)child;
}

void points_clean_forks(void)
{
	for (int k = 0; k < n_forked; k++) {
		struct task *t = sched_find(forked[k]);
		if (!t || t->proc->aspace == points_aspace)
			continue; /* gone, or a thread or vfork child: the same memory */
		for (int i = 0; i < n_points; i++) {
			uint8_t byte;
			struct point *p = &points[i];
			if (p->inserted && remote_read(t, REMOTE(p->addr), &byte, 1) == 0 &&
			    byte == INT3)
				remote_patch_code(t, REMOTE(p->addr), &p->saved, 1);
		}
	}
	n_forked = 0;
}

/* ---- debug registers ------------------------------------------------------------------ */

static long debugreg_offset(int i)
{
	return (long)(offsetof(struct user, u_debugreg) + (size_t)i * sizeof(long));
}

/* DR7 for the table: slot i enabled locally, with its kind and length. */
static uint64_t dr7_value(uint64_t addr_out[4])
{
	uint64_t dr7 = 0;
	int slot = 0;
	for (int i = 0; i < n_points && slot < 4; i++) {
		const struct point *p = &points[i];
		if (p->type == POINT_SOFT)
			continue;
		uint64_t rw = p->type == POINT_HARD ? 0 : p->type == POINT_WRITE ? 1 : 3;
		uint64_t len = p->type == POINT_HARD ? 0
			       : p->len == 1         ? 0
			       : p->len == 2         ? 1
			       : p->len == 8         ? 2
						     : 3;
		addr_out[slot] = p->addr;
		dr7 |= (1ull << (2 * slot)) | (rw << (16 + 4 * slot)) | (len << (18 + 4 * slot));
		slot++;
	}
	return dr7;
}

void points_sync_task(struct task *t)
{
	if (t->vtid >= n_task_generation) {
		int n = t->vtid + 64;
		int *g = realloc(task_generation, (size_t)n * sizeof(int));
		if (!g)
			return;
		memset(g + n_task_generation, 0, (size_t)(n - n_task_generation) * sizeof(int));
		task_generation = g;
		n_task_generation = n;
	}
	if (task_generation[t->vtid] == generation)
		return;
	uint64_t addr[4] = { 0 };
	uint64_t dr7 = dr7_value(addr);
	if (generation == 1 && dr7 == 0) {
		task_generation[t->vtid] = generation;
		return; /* never set: nothing to clear */
	}
	ptrace(PTRACE_POKEUSER, t->tid, debugreg_offset(7), 0);
	for (int i = 0; i < 4; i++)
		ptrace(PTRACE_POKEUSER, t->tid, debugreg_offset(i), addr[i]);
	if (ptrace(PTRACE_POKEUSER, t->tid, debugreg_offset(7), dr7) < 0 && errno != ESRCH)
		fprintf(stderr, "detrun: cannot set the debug registers of task %d: %s\n", t->vtid,
			strerror(errno));
	task_generation[t->vtid] = generation;
}

/* A new task is adopted without a stop this hook sees, and runs only after the task
 * that created it reaches its next event (one task runs at a time): every event brings
 * every task's debug registers up to date. */
void points_sync_all(void)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if (t->state == TASK_STOPPED || t->state == TASK_RUNNING)
			points_sync_task(t);
}

/* The table entry behind debug register slot `slot`. */
static const struct point *slot_point(int slot)
{
	for (int i = 0, s = 0; i < n_points; i++)
		if (points[i].type != POINT_SOFT && s++ == slot)
			return &points[i];
	return NULL;
}

static enum trap_kind classify_debugreg(struct task *t, uint64_t *addr)
{
	errno = 0;
	long dr6 = ptrace(PTRACE_PEEKUSER, t->tid, debugreg_offset(6), 0);
	if (errno)
		return TRAP_NONE;
	ptrace(PTRACE_POKEUSER, t->tid, debugreg_offset(6), 0);
	for (int slot = 0; slot < 4; slot++) {
		const struct point *p = (dr6 & (1 << slot)) ? slot_point(slot) : NULL;
		if (!p)
			continue;
		*addr = p->addr;
		return p->type == POINT_HARD ? TRAP_BREAK : TRAP_WATCH;
	}
	return (dr6 & 0x4000) ? TRAP_STEP : TRAP_NONE;
}

enum trap_kind points_classify(struct task *t, uint64_t *addr)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0 || remote_load_regs(t))
		return TRAP_NONE;
	if (si.si_code == SI_KERNEL && t->proc->aspace == points_aspace) {
		for (int i = 0; i < n_points; i++)
			if (points[i].inserted && points[i].addr == t->regs.rip - 1) {
				t->regs.rip--;
				t->regs_dirty = true;
				remote_store_regs(t);
				*addr = points[i].addr;
				return TRAP_BREAK;
			}
		return TRAP_NONE; /* the program's own int3 */
	}
	if (si.si_code == SI_KERNEL)
		return TRAP_NONE;
	return classify_debugreg(t, addr);
}

void points_step_over(struct task *t)
{
	remote_load_regs(t);
	step_over_index = -1;
	for (int i = 0; i < n_points; i++)
		if (points[i].type == POINT_SOFT && points[i].inserted &&
		    points[i].addr == t->regs.rip) {
			remove_soft(t, &points[i]);
			step_over_index = i;
		}
	step_over_vtid = t->vtid;
	remote_store_regs(t);
	t->regs_valid = false;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0 && errno != ESRCH)
		fprintf(stderr, "detrun: cannot step task %d: %s\n", t->vtid, strerror(errno));
}

bool points_stepping(const struct task *t)
{
	return step_over_vtid == t->vtid;
}

/* Puts the stepped-over int3 back at t's next stop. True if t was stepping over one.
 * Not at a SIGSEGV or SIGILL stop: the stepped instruction may be one detrun emulates
 * (rdtsc, cpuid), and it decodes the instruction at the pc from memory, where the int3
 * must not be yet; the int3 goes back at the stop after that. */
bool points_after_step(struct task *t, int status)
{
	if (step_over_vtid != t->vtid)
		return false;
	int sig = WSTOPSIG(status);
	if ((status >> 16) == 0 && (sig == SIGSEGV || sig == SIGILL))
		return false;
	step_over_vtid = 0;
	if (step_over_index >= 0)
		insert_soft(t, &points[step_over_index]);
	step_over_index = -1;
	return true;
}

/* A point gdb had set, for a re-execution: put in place as the program's memory and
 * threads appear. */
void points_restore(enum point_type type, uint64_t addr, int len)
{
	if (n_points == MAX_POINTS)
		return;
	points[n_points++] = (struct point){ .type = type, .addr = addr, .len = len };
	if (type != POINT_SOFT)
		generation++;
}
