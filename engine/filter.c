#include "engine/filter.h"

#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <linux/ioprio.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "vkernel/task.h"
#include "engine/remote.h"
#include "vkernel/report.h"
#include "syscalls/syscall_table.h"

#define X32_SYSCALL_BIT 0x40000000ULL

/* ALLOW rules for every 32-bit value of argument `arg` in [lo, hi], as aligned blocks
 * (value & mask == base): a range needs at most two blocks per bit. The upper half of the
 * register is not compared: the kernel reads the argument as an int. */
static int allow_range(scmp_filter_ctx ctx, int nr, unsigned arg, uint64_t lo, uint64_t hi)
{
	int err = 0;
	while (!err && lo <= hi) {
		uint64_t size = 1;
		while (size < (1ULL << 32) && lo % (size * 2) == 0 && lo + size * 2 - 1 <= hi)
			size *= 2;
		uint64_t mask = 0xffffffffULL & ~(size - 1);
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				       SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, mask, lo));
		lo += size;
	}
	return err;
}

/* STOP_WHEN_EQ rows of syscall `nr`: allowed for every value of the argument but theirs. */
static int allow_unless_equal(scmp_filter_ctx ctx, long nr)
{
	uint64_t stops[32];
	int n = 0;
	unsigned arg = 0;
	for (size_t j = 0; j < syscall_values_len && n < 32; j++)
		if (syscall_values[j].nr == nr) {
			stops[n++] = (uint32_t)syscall_values[j].value;
			arg = (unsigned)syscall_values[j].arg;
		}
	for (int i = 1; i < n; i++) /* sort: the rows need not be in order */
		for (int k = i; k > 0 && stops[k - 1] > stops[k]; k--) {
			uint64_t s = stops[k];
			stops[k] = stops[k - 1];
			stops[k - 1] = s;
		}
	uint64_t lo = 0;
	int err = 0;
	for (int i = 0; !err && i < n; i++) {
		if (stops[i] > lo)
			err = allow_range(ctx, (int)nr, arg, lo, stops[i] - 1);
		lo = stops[i] + 1;
	}
	if (!err && lo <= 0xffffffffULL)
		err = allow_range(ctx, (int)nr, arg, lo, 0xffffffffULL);
	return err;
}

static bool has_values(long nr)
{
	for (size_t j = 0; j < syscall_values_len; j++)
		if (syscall_values[j].nr == nr)
			return true;
	return false;
}

/* An ALLOW row whose arguments name a process runs freely only in the form that names the
 * caller: every P and G argument 0, every W and O "who" 0 of a process. The other forms,
 * and any call with a process descriptor (D), stop for the membership check. */
static int allow_self_form(scmp_filter_ctx ctx, const struct syscall_entry *e)
{
	struct scmp_arg_cmp cmp[6];
	unsigned n = 0;
	for (int i = 0; i < e->nargs; i++) {
		char k = e->kinds[i];
		if (k == 'D')
			return 0;
		if (k == 'W' || k == 'O')
			cmp[n++] = SCMP_CMP((unsigned)i - 1, SCMP_CMP_MASKED_EQ, 0xffffffffULL,
					    k == 'W' ? PRIO_PROCESS : IOPRIO_WHO_PROCESS);
		if (k == 'P' || k == 'G' || k == 'W' || k == 'O')
			cmp[n++] = SCMP_CMP((unsigned)i, SCMP_CMP_MASKED_EQ, 0xffffffffULL, 0);
	}
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, (int)e->nr, n, cmp);
}

/* The STOP_WHEN narrowing of a row, or NULL: dropped while a shim intercepts, if it says so. */
static const struct syscall_condition *narrowing(const struct syscall_entry *e,
						 bool shim_intercepts)
{
	const struct syscall_condition *c = NULL;
	for (size_t j = 0; j < syscall_conditions_len; j++)
		if (syscall_conditions[j].nr == e->nr)
			c = &syscall_conditions[j];
	return c && c->every_call_with_shim && shim_intercepts ? NULL : c;
}

/* The STOP_WHEN_SHARED widening of a row, or NULL. */
static const struct syscall_condition *shared_widening(const struct syscall_entry *e)
{
	for (size_t j = 0; j < syscall_shared_conditions_len; j++)
		if (syscall_shared_conditions[j].nr == e->nr)
			return &syscall_shared_conditions[j];
	return NULL;
}

/* A row narrowed by STOP_WHEN: allowed unless the argument has one of the bits, and with
 * processes in parallel also unless its STOP_WHEN_SHARED argument has one of its bits (a
 * widening of every call leaves nothing allowed); the rest takes the default, a stop. */
static int allow_narrowed(scmp_filter_ctx ctx, const struct syscall_entry *e,
			  const struct syscall_condition *c, bool parallel, uint32_t action)
{
	const struct syscall_condition *w = parallel ? shared_widening(e) : NULL;
	if (w && w->arg < 0)
		return 0;
	struct scmp_arg_cmp cmp[2] = {
		SCMP_CMP((unsigned)c->arg, SCMP_CMP_MASKED_EQ, c->mask, 0),
	};
	if (w)
		cmp[1] = SCMP_CMP((unsigned)w->arg, SCMP_CMP_MASKED_EQ, w->mask, 0);
	return seccomp_rule_add_array(ctx, action, (int)e->nr, w ? 2 : 1, cmp);
}

/* The rules of every row: which calls run without stopping. With processes in parallel a
 * TICK row stops, tagged, where it would run freely: a tick (syscalls.def). */
static int add_rules(scmp_filter_ctx ctx, bool shim_intercepts, bool parallel)
{
	int err = 0;
	for (size_t i = 0; !err && i < syscall_table_len; i++) {
		const struct syscall_entry *e = &syscall_table[i];
		const struct syscall_condition *c = narrowing(e, shim_intercepts);
		bool freely = syscall_runs_freely(e, parallel);
		uint32_t action = parallel && syscall_ticks(e->nr)
					  ? SCMP_ACT_TRACE(SYSCALL_TICK_TAG)
					  : SCMP_ACT_ALLOW;
		if (e->cls == SC_EXTERNAL && !shim_intercepts)
			err = has_values(e->nr)
				      ? allow_unless_equal(ctx, e->nr)
				      : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, (int)e->nr, 0);
		else if (c)
			err = allow_narrowed(ctx, e, c, parallel, action);
		else if (has_values(e->nr) && e->cls != SC_EXTERNAL) /* with a shim: every call */
			err = allow_unless_equal(ctx, e->nr);
		else if (freely && syscall_names_process(e))
			err = allow_self_form(ctx, e);
		else if (freely)
			err = seccomp_rule_add(ctx, action, (int)e->nr, 0);
	}
	return err;
}

/* The filter of a run, not loaded: NULL with *err set, or a context to release. */
static scmp_filter_ctx build(bool shim_intercepts, bool parallel, int *err)
{
	/* Calls the table does not know (newer than detrun) stop too, and fail with ENOSYS
	 * (sys_unsupported): never silently allowed. */
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRACE(0));
	if (!ctx) {
		*err = -ENOMEM;
		return NULL;
	}
	/* 32-bit (int 0x80) and x32 calls stop too instead of killing the process without a
	 * word: the tracer refuses them by name (filter_foreign_call). */
	*err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRACE(0));
	/* As root, no_new_privs is not needed and would break setuid programs in the group. */
	if (!*err && geteuid() == 0)
		*err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	/* A binary search over syscall numbers instead of a linear scan: allowed calls, the
	 * common case, pay a few comparisons. */
	if (!*err)
		*err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (!*err)
		*err = add_rules(ctx, shim_intercepts, parallel);
	if (*err) {
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

int filter_install(bool shim_intercepts, bool parallel)
{
	int err;
	scmp_filter_ctx ctx = build(shim_intercepts, parallel, &err);
	if (!ctx)
		return err;
	err = seccomp_load(ctx);
	seccomp_release(ctx);
	return err;
}

int filter_export(bool shim_intercepts, bool parallel, int fd)
{
	int err;
	scmp_filter_ctx ctx = build(shim_intercepts, parallel, &err);
	if (!ctx)
		return err;
	err = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	return err;
}

/* One warning per process and kind: a 32-bit program would otherwise print one a call. */
static bool first_time(const struct task *t, bool x32)
{
	static pid_t warned[64][2];
	static int n;
	for (int i = 0; i < n; i++)
		if (warned[i][0] == t->proc->tgid && warned[i][1] == x32)
			return false;
	if (n < 64) {
		warned[n][0] = t->proc->tgid;
		warned[n][1] = x32;
		n++;
	}
	return true;
}

bool filter_foreign_call(struct task *t)
{
	uint64_t nr = syscall_number(t);
	/* The kernel reads the number as an int: x32's are 0x40000000 and up; a negative one
	 * (syscall(-1), a point rr's tests mark) has that bit too, and is no call at all. */
	bool x32 = ((uint32_t)nr & 0xc0000000u) == X32_SYSCALL_BIT;
	if (!x32) {
		/* int 0x80 looks like a native call in the registers: only the kernel's
		 * description of the stop tells them apart. */
		struct __ptrace_syscall_info info;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(info), &info) <= 0 ||
		    info.op != PTRACE_SYSCALL_INFO_SECCOMP || info.arch == AUDIT_ARCH_X86_64)
			return false;
		nr = info.seccomp.nr;
	}
	t->syscall_nr = -1; /* its number means another call in the x86_64 table */
	if (first_time(t, x32)) {
		char *name = seccomp_syscall_resolve_num_arch(x32 ? SCMP_ARCH_X32 : SCMP_ARCH_X86,
							      (int)nr);
		task_warn(t, "%s system call %s (%s %llu) is not supported: it fails with ENOSYS",
			  x32 ? "x32" : "32-bit", name ? name : "?",
			  x32 ? "x32 number" : "int 0x80 number",
			  (unsigned long long)(nr & ~X32_SYSCALL_BIT));
		free(name);
	}
	syscall_emulate(t, -ENOSYS);
	return true;
}
