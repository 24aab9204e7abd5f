/* Breakpoints (int3 in the program's text) and watchpoints (the debug registers).
 *
 * An int3 is written only into a private mapping (the write goes through /proc/PID/mem
 * where the text is read-only, and a private mapping's copy is the process's own: no file
 * changes). Points are per process, as gdb sets them per inferior (debugger/procs.c). A trap at one is the debugger's: the task is moved back onto the breakpoint's
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
#include "engine/remote.h"
#include "engine/tracer.h"

static struct point points[MAX_POINTS];
static int n_points;

static int generation = 1;   /* of the debug registers' contents */
static int *task_generation; /* by vtid: what each task has */
static int n_task_generation;
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

/* Is p a point of t's process? Points restored for a re-execution belong to the process
 * gdb set them in (its pid in the group), from the time gdb follows it on (procs.c). */
static bool mine(struct task *t, struct point *p)
{
	if (p->tgid == 0 && procs_followed(t) && (!p->owner || p->owner == t->proc->ns_tgid)) {
		p->tgid = t->proc->tgid;
		p->aspace = t->proc->aspace;
	}
	return p->tgid == t->proc->tgid;
}

/* Is p's int3 in t's memory (t's process, or a vfork child sharing its memory)? */
static bool in_memory_of(const struct task *t, const struct point *p)
{
	return p->inserted && p->tgid != 0 && p->aspace == t->proc->aspace;
}

static int poke_int3(struct task *t, struct point *p)
{
	uint8_t byte, int3 = INT3;
	if (!private_mapping(t, p->addr))
		return -EFAULT;
	if (remote_read(t, REMOTE(p->addr), &byte, 1) ||
	    remote_patch_code(t, REMOTE(p->addr), &int3, 1))
		return -EFAULT;
	p->saved = byte;
	p->inserted = true;
	return 0;
}

static int insert_soft(struct task *t, struct point *p)
{
	p->tgid = t->proc->tgid;
	p->aspace = t->proc->aspace;
	p->owner = t->proc->ns_tgid;
	return poke_int3(t, p);
}

static void remove_soft(struct task *t, struct point *p)
{
	uint8_t byte;
	if (p->inserted && remote_read(t, REMOTE(p->addr), &byte, 1) == 0 && byte == INT3)
		remote_patch_code(t, REMOTE(p->addr), &p->saved, 1);
	p->inserted = false;
}

static int find_point(struct task *t, enum point_type type, uint64_t addr, int len)
{
	for (int i = 0; i < n_points; i++)
		if (points[i].type == type && points[i].addr == addr &&
		    (len < 0 || points[i].len == len) && mine(t, &points[i]))
			return i;
	return -1;
}

/* Per process: at most 4 hardware points (the debug registers). */
static int hard_points(struct task *t)
{
	int hard = 0;
	for (int i = 0; i < n_points; i++)
		hard += points[i].type != POINT_SOFT && mine(t, &points[i]);
	return hard;
}

int points_add(struct task *t, enum point_type type, uint64_t addr, int len)
{
	if (find_point(t, type, addr, type == POINT_HARD ? 1 : len) >= 0)
		return 0;
	if (n_points == MAX_POINTS || (type != POINT_SOFT && hard_points(t) == 4))
		return -ENOSPC;
	if (type != POINT_SOFT && (len != 1 && len != 2 && len != 4 && len != 8))
		return -EINVAL;
	struct point *p = &points[n_points];
	*p = (struct point){ .type = type,
			     .addr = addr,
			     .len = type == POINT_HARD ? 1 : len,
			     .tgid = t->proc->tgid,
			     .aspace = t->proc->aspace,
			     .owner = t->proc->ns_tgid };
	if (type == POINT_SOFT && insert_soft(t, p))
		return -EFAULT;
	n_points++;
	if (type != POINT_SOFT)
		generation++;
	return 0;
}

static void forget(int i)
{
	if (points[i].type != POINT_SOFT)
		generation++;
	if (step_over_index == i)
		step_over_index = -1;
	else if (step_over_index > i)
		step_over_index--;
	memmove(&points[i], &points[i + 1], (size_t)(n_points - i - 1) * sizeof(points[i]));
	n_points--;
}

int points_remove(struct task *t, enum point_type type, uint64_t addr, int len)
{
	(void)len;
	int i = find_point(t, type, addr, -1);
	if (i < 0)
		return 0;
	if (type == POINT_SOFT)
		remove_soft(t, &points[i]);
	forget(i);
	return 0;
}

void points_drop_process(struct task *t, bool remove)
{
	for (int i = n_points - 1; i >= 0; i--) {
		if (points[i].tgid != t->proc->tgid)
			continue;
		if (remove && points[i].type == POINT_SOFT)
			remove_soft(t, &points[i]);
		forget(i);
	}
}

void points_task_execed(struct task *t)
{
	if (t->vtid < n_task_generation)
		task_generation[t->vtid] = 0;
}

void points_unplace_process(struct task *t)
{
	for (int i = 0; i < n_points; i++)
		if (points[i].tgid == t->proc->tgid) {
			points[i].tgid = 0;
			points[i].inserted = false;
			if (points[i].type != POINT_SOFT)
				generation++;
		}
}

/* A library mapped over an address after its int3 went in, or one not mapped yet when
 * a re-execution set the points: the byte there is not ours any more. */
void points_refresh(struct task *t)
{
	for (int i = 0; i < n_points; i++) {
		struct point *p = &points[i];
		uint8_t byte;
		if (p->type != POINT_SOFT || i == step_over_index || !mine(t, p))
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
	for (int i = 0; i < n_points; i++)
		if (in_memory_of(t, &points[i]) && points[i].addr >= addr &&
		    points[i].addr < addr + len)
			((uint8_t *)buf)[points[i].addr - addr] = points[i].saved;
	return 0;
}

/* A fork copied the parent's memory with its int3s in it. A child gdb follows keeps them
 * as its own breakpoints (gdb counts them inserted in the new inferior); any other child
 * has them taken out (it would die of SIGTRAP). */
void points_fork(struct task *parent, struct task *child, bool follow)
{
	int n = n_points;
	for (int i = 0; i < n; i++) {
		struct point *p = &points[i];
		bool own = mine(parent, p);
		if (!own && !in_memory_of(parent, p))
			continue; /* (a vfork child's copy holds the int3s of the memory it shares) */
		if (follow && own && n_points < MAX_POINTS) {
			struct point *copy = &points[n_points++];
			*copy = *p;
			copy->tgid = child->proc->tgid;
			copy->aspace = child->proc->aspace;
			copy->owner = child->proc->ns_tgid;
			if (copy->type != POINT_SOFT)
				generation++;
		} else if (p->inserted && p->type == POINT_SOFT) {
			uint8_t byte;
			if (remote_read(child, REMOTE(p->addr), &byte, 1) == 0 && byte == INT3)
				remote_patch_code(child, REMOTE(p->addr), &p->saved, 1);
		}
	}
}

/* ---- debug registers ------------------------------------------------------------------ */

static long debugreg_offset(int i)
{
	return (long)(offsetof(struct user, u_debugreg) + (size_t)i * sizeof(long));
}

/* DR7 for t's process's points: slot i enabled locally, with its kind and length. */
static uint64_t dr7_value(struct task *t, uint64_t addr_out[4])
{
	uint64_t dr7 = 0;
	int slot = 0;
	for (int i = 0; i < n_points && slot < 4; i++) {
		struct point *p = &points[i];
		if (p->type == POINT_SOFT || !mine(t, p))
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
	uint64_t dr7 = dr7_value(t, addr);
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

/* The table entry behind debug register slot `slot` of t. */
static const struct point *slot_point(struct task *t, int slot)
{
	for (int i = 0, s = 0; i < n_points; i++)
		if (points[i].type != POINT_SOFT && mine(t, &points[i]) && s++ == slot)
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
		const struct point *p = (dr6 & (1 << slot)) ? slot_point(t, slot) : NULL;
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
	if (si.si_code == SI_KERNEL) {
		for (int i = 0; i < n_points; i++)
			if (in_memory_of(t, &points[i]) && points[i].addr == task_ip(t) - 1) {
				task_set_ip(t, points[i].addr);
				remote_store_regs(t);
				*addr = points[i].addr;
				return TRAP_BREAK;
			}
		return TRAP_NONE; /* the program's own int3 */
	}
	return classify_debugreg(t, addr);
}

bool points_step_report(struct task *t)
{
	siginfo_t si;
	return ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 && si.si_code == TRAP_BRKPT;
}

void points_step_over(struct task *t)
{
	remote_load_regs(t);
	step_over_index = -1;
	for (int i = 0; i < n_points; i++)
		if (points[i].type == POINT_SOFT && in_memory_of(t, &points[i]) &&
		    points[i].addr == task_ip(t)) {
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
		poke_int3(t, &points[step_over_index]);
	step_over_index = -1;
	return true;
}

/* A point gdb had set in process `owner` (its pid in the group), for a re-execution: put
 * in place as the program's memory and threads appear. */
void points_restore(enum point_type type, uint64_t addr, int len, pid_t owner)
{
	if (n_points == MAX_POINTS)
		return;
	points[n_points++] = (struct point){ .type = type,
					     .addr = addr,
					     .len = len,
					     .owner = owner };
	if (type != POINT_SOFT)
		generation++;
}

bool points_inserted_at(uint64_t addr)
{
	for (int i = 0; i < n_points; i++)
		if (points[i].inserted && points[i].addr == addr)
			return true;
	return false;
}

bool points_break_at(uint64_t addr)
{
	for (int i = 0; i < n_points; i++)
		if ((points[i].type == POINT_SOFT || points[i].type == POINT_HARD) &&
		    points[i].addr == addr)
			return true;
	return false;
}

void points_remove_all(struct task *t)
{
	for (int i = n_points - 1; i >= 0; i--)
		points_remove(t, points[i].type, points[i].addr, points[i].len);
	points_sync_all();
}

uint64_t points_signature(void)
{
	uint64_t sum = 0;
	for (int i = 0; i < n_points; i++) {
		const struct point *p = &points[i];
		uint64_t h = (p->addr ^ ((uint64_t)p->type << 56) ^ ((uint64_t)p->len << 48) ^
			      ((uint64_t)p->owner << 32)) *
			     0x9e3779b97f4a7c15ull;
		sum += h ^ (h >> 29); /* a sum: the order of the table does not matter */
	}
	return sum;
}

void points_describe(char *spec, size_t size)
{
	size_t n = strlen(spec);
	for (int i = 0; i < n_points && n < size - 40; i++)
		n += (size_t)snprintf(spec + n, size - n, "/%d.%llx.%d.%d", points[i].type,
				      (unsigned long long)points[i].addr, points[i].len,
				      points[i].owner);
}
