/* The program's own seccomp filters, judged by detrun (seccomp_filter.h). */
#include "engine/seccomp_filter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "scheduler/scheduler.h"
#include "engine/remote.h"
#include "vkernel/report.h"
#include "vkernel/signal_bits.h"
#include "vkernel/task.h"
#include "engine/tracer.h"
#include "syscalls/syscall_table.h"

#define SYS_SECCOMP 1 /* si_code of a seccomp SIGSYS (asm-generic/siginfo.h) */

struct program_filter {
	int refs;
	struct program_filter *prev; /* the filter installed before it */
	unsigned len;
	struct sock_filter insns[];
};

/* struct sock_fprog as the tracee lays it out. */
struct tracee_fprog {
	uint16_t len;
	uint16_t pad[3];
	uint64_t filter;
};
_Static_assert(sizeof(struct tracee_fprog) == 16, "struct sock_fprog on x86_64");

#define KNOWN_FLAGS \
	(SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW | \
	 SECCOMP_FILTER_FLAG_NEW_LISTENER | (1u << 4) | \
	 (1u << 5)) /* TSYNC_ESRCH, WAIT_KILLABLE_RECV */

struct program_filter *seccomp_filter_ref(struct program_filter *f)
{
	if (f)
		f->refs++;
	return f;
}

void seccomp_filter_unref(struct program_filter *f)
{
	while (f && --f->refs == 0) {
		struct program_filter *prev = f->prev;
		free(f);
		f = prev;
	}
}

/* ---- the kernel's copy ------------------------------------------------------------------------ */

/* The copy the kernel loads: each return that would keep a call from running stops it at
 * detrun instead, which knows the original. */
static void rewrite(struct sock_filter *insns, unsigned len)
{
	for (unsigned i = 0; i < len; i++) {
		struct sock_filter *in = &insns[i];
		if (in->code == (BPF_RET | BPF_A)) {
			in->code = BPF_RET | BPF_K;
			in->k = SECCOMP_RET_TRACE | SECCOMP_FILTER_TAG;
		} else if (in->code == (BPF_RET | BPF_K)) {
			uint32_t action = in->k & SECCOMP_RET_ACTION_FULL;
			bool runs = action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG;
			in->k = runs ? SECCOMP_RET_ALLOW : SECCOMP_RET_TRACE | SECCOMP_FILTER_TAG;
		}
	}
}

/* Places the rewritten program and a sock_fprog naming it in scratch memory of t: the
 * sock_fprog's address, or 0. */
static uint64_t place_copy(struct task *t, const struct program_filter *f)
{
	size_t size = sizeof(struct tracee_fprog) + f->len * sizeof(struct sock_filter);
	uint8_t *buf = calloc(1, size);
	if (!buf)
		abort();
	struct tracee_fprog fprog = { .len = (uint16_t)f->len };
	memcpy(buf, &fprog, sizeof(fprog));
	struct sock_filter *copy = (struct sock_filter *)(buf + sizeof(fprog));
	memcpy(copy, f->insns, f->len * sizeof(*copy));
	rewrite(copy, f->len);
	uint64_t at = remote_scratch(t, buf, size);
	free(buf);
	fprog.filter = at + sizeof(fprog);
	if (at && remote_write(t, REMOTE(at), &fprog, sizeof(fprog)))
		at = 0;
	return at;
}

static void installed(struct task *t)
{
	struct program_filter *f = t->exit.seccomp.filter;
	syscall_set_arg(t, 2, t->exit.seccomp.prog_arg); /* the program's own pointer back */
	if (syscall_result(t) != 0) {
		seccomp_filter_unref(f);
		return;
	}
	for (struct task *u = sched_first(); u; u = u->next) {
		if (u != t && (!t->exit.seccomp.tsync || u->proc != t->proc))
			continue;
		seccomp_filter_unref(u->filters);
		u->filters = seccomp_filter_ref(f);
	}
	seccomp_filter_unref(f); /* the reference the install held */
	trace_event(t, "  the program's seccomp filter (%u instructions) installed", f->len);
}

/* Reads the program's filter: 0, or the error the kernel gives for it. */
static int read_filter(struct task *t, struct program_filter **out)
{
	struct tracee_fprog fprog;
	if (remote_read(t, REMOTE(syscall_arg(t, 2)), &fprog, sizeof(fprog)))
		return -EFAULT;
	if (fprog.len == 0 || fprog.len > BPF_MAXINSNS)
		return -EINVAL;
	struct program_filter *f = calloc(1, sizeof(*f) + fprog.len * sizeof(struct sock_filter));
	if (!f)
		abort();
	f->refs = 1;
	f->len = fprog.len;
	if (remote_read(t, REMOTE(fprog.filter), f->insns, f->len * sizeof(struct sock_filter))) {
		free(f);
		return -EFAULT;
	}
	*out = f;
	return 0;
}

void seccomp_filter_install(struct task *t, unsigned flags)
{
	if (flags & ~KNOWN_FLAGS)
		return; /* the kernel refuses it (EINVAL) before it reads the filter */
	struct program_filter *f = NULL;
	int err = read_filter(t, &f);
	if (err) {
		syscall_emulate(t, err);
		return;
	}
	uint64_t at = place_copy(t, f);
	if (!at) {
		task_warn(t,
			  "no scratch memory below the stack for the program's seccomp filter "
			  "(%u instructions): refused with ENOMEM",
			  f->len);
		seccomp_filter_unref(f);
		syscall_emulate(t, -ENOMEM);
		return;
	}
	t->exit.seccomp.filter = f;
	t->exit.seccomp.prog_arg = syscall_arg(t, 2);
	t->exit.seccomp.tsync = flags & SECCOMP_FILTER_FLAG_TSYNC;
	syscall_set_arg(t, 2, at);
	tracer_want_exit(t, installed);
}

/* ---- the original, run by detrun --------------------------------------------------------------- */

/* An ALU instruction on A; false for a division by zero, which ends the program with 0
 * (SECCOMP_RET_KILL_THREAD) as in the kernel. Shifts take the count modulo 32, as x86. */
static bool alu(const struct sock_filter *in, uint32_t *a, uint32_t x)
{
	uint32_t v = BPF_SRC(in->code) == BPF_X ? x : in->k;
	switch (BPF_OP(in->code)) {
	case BPF_ADD:
		*a += v;
		break;
	case BPF_SUB:
		*a -= v;
		break;
	case BPF_MUL:
		*a *= v;
		break;
	case BPF_DIV:
		if (!v)
			return false;
		*a /= v;
		break;
	case BPF_MOD:
		if (!v)
			return false;
		*a %= v;
		break;
	case BPF_AND:
		*a &= v;
		break;
	case BPF_OR:
		*a |= v;
		break;
	case BPF_XOR:
		*a ^= v;
		break;
	case BPF_LSH:
		*a <<= v & 31;
		break;
	case BPF_RSH:
		*a >>= v & 31;
		break;
	case BPF_NEG:
		*a = -*a;
		break;
	}
	return true;
}

static bool jump_taken(const struct sock_filter *in, uint32_t a, uint32_t x)
{
	uint32_t v = BPF_SRC(in->code) == BPF_X ? x : in->k;
	switch (BPF_OP(in->code)) {
	case BPF_JEQ:
		return a == v;
	case BPF_JGT:
		return a > v;
	case BPF_JGE:
		return a >= v;
	case BPF_JSET:
		return (a & v) != 0;
	}
	return false;
}

/* Runs one filter on `d`. The kernel checked it at its install: loads are aligned and in
 * bounds, scratch words are written before read, jumps stay inside, the last is a return. */
static uint32_t run(const struct program_filter *f, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	for (unsigned pc = 0; pc < f->len; pc++) {
		const struct sock_filter *in = &f->insns[pc];
		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			memcpy(&a, (const char *)d + in->k, sizeof(a));
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			a = sizeof(*d);
			break;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = sizeof(*d);
			break;
		case BPF_LD | BPF_IMM:
			a = in->k;
			break;
		case BPF_LDX | BPF_IMM:
			x = in->k;
			break;
		case BPF_LD | BPF_MEM:
			a = mem[in->k];
			break;
		case BPF_LDX | BPF_MEM:
			x = mem[in->k];
			break;
		case BPF_ST:
			mem[in->k] = a;
			break;
		case BPF_STX:
			mem[in->k] = x;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_RET | BPF_K:
			return in->k;
		case BPF_RET | BPF_A:
			return a;
		case BPF_JMP | BPF_JA:
			pc += in->k;
			break;
		default:
			if (BPF_CLASS(in->code) == BPF_ALU && !alu(in, &a, x))
				return SECCOMP_RET_KILL_THREAD;
			if (BPF_CLASS(in->code) == BPF_JMP)
				pc += jump_taken(in, a, x) ? in->jt : in->jf;
		}
	}
	return SECCOMP_RET_KILL_THREAD;
}

/* The kernel's combination: the lowest action wins, the newest filter among equals. */
static uint32_t verdict(const struct program_filter *f, const struct seccomp_data *d)
{
	uint32_t ret = SECCOMP_RET_ALLOW;
	for (; f; f = f->prev) {
		uint32_t cur = run(f, d);
		if ((int32_t)(cur & SECCOMP_RET_ACTION_FULL) <
		    (int32_t)(ret & SECCOMP_RET_ACTION_FULL))
			ret = cur;
	}
	return ret;
}

/* ---- the verdict, applied as the kernel applies it ------------------------------------------- */

/* An injected call whose argument 1 is `data`, placed in scratch memory. */
static long with_scratch(struct task *t, long nr, uint64_t a0, const void *data, size_t len)
{
	uint64_t at = remote_scratch(t, data, len);
	return at ? remote_syscall(t, nr, a0, at, 0, 8, 0, 0) : -ENOMEM;
}

/* SIGSYS, forced as force_sig_seccomp forces it: with the default action when the program
 * blocks or ignores it (or always, for a kill), and unblocked. The injected calls that do
 * that take the place of the refused call (it does not run) and leave the task in the
 * signal stop of their single step; the step's SIGTRAP becomes SIGSYS with the kernel's
 * siginfo, delivered at the resume as the call returns. */
static int force_sigsys(struct task *t, const struct seccomp_data *d, uint32_t data, bool kill)
{
	uint64_t bit = SIGBIT(SIGSYS), mask;
	if (ptrace(PTRACE_GETSIGMASK, t->tid, sizeof(mask), &mask) < 0)
		return -errno;
	long r = 0;
	if (kill || (mask & bit) || (t->proc->ignored & bit)) {
		struct signal_action dfl = { 0 };
		r = with_scratch(t, __NR_rt_sigaction, SIGSYS, &dfl, sizeof(dfl));
		t->proc->ignored &= ~bit;
		t->proc->caught &= ~bit;
		t->proc->sa_restart &= ~bit;
	}
	if (r >= 0)
		r = with_scratch(t, __NR_rt_sigprocmask, SIG_UNBLOCK, &bit, sizeof(bit));
	if (r < 0)
		return (int)r;
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGSYS;
	si.si_errno = (int)data;
	si.si_code = SYS_SECCOMP;
	si.si_call_addr = (void *)(uintptr_t)d->instruction_pointer;
	si.si_syscall = d->nr;
	si.si_arch = d->arch;
	if (ptrace(PTRACE_SETSIGINFO, t->tid, 0, &si) < 0)
		return -errno;
	syscall_emulate(t, d->nr); /* syscall_rollback: rax holds the refused call's number */
	t->inject_signal = SIGSYS;
	return 0;
}

static int live_threads(const struct task *t)
{
	int n = 0;
	for (struct task *u = sched_first(); u; u = u->next)
		n += u->proc == t->proc && u->state != TASK_DEAD && u->state != TASK_EXITING;
	return n;
}

/* Applies the verdict `ret` to the call described by `d`: 0, or -errno when the SIGSYS of
 * a trap or a kill could not be forced. */
static int apply(struct task *t, uint32_t ret, const struct seccomp_data *d)
{
	uint32_t data = ret & SECCOMP_RET_DATA;
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ERRNO:
		syscall_emulate(t, -(int64_t)(data > 4095 ? 4095 : data)); /* MAX_ERRNO */
		return 0;
	case SECCOMP_RET_TRACE:      /* no tracer of the program's own */
	case SECCOMP_RET_USER_NOTIF: /* no listener (detrun refuses them) */
		syscall_emulate(t, -ENOSYS);
		return 0;
	case SECCOMP_RET_TRAP:
		return force_sigsys(t, d, data, false);
	case SECCOMP_RET_KILL_THREAD:
		if (live_threads(t) > 1) { /* the thread alone ends, without a signal */
			syscall_set_number(t, __NR_exit);
			syscall_set_arg(t, 0, 0);
			return 0;
		}
		__attribute__((fallthrough)); /* the last thread takes its process with it */
	default: /* SECCOMP_RET_KILL_PROCESS, and any action the kernel does not know */
		return force_sigsys(t, d, data, true);
	}
}

static bool foreign(const struct seccomp_data *d)
{
	return d->arch != AUDIT_ARCH_X86_64 || (d->nr & 0x40000000); /* int 0x80, x32 */
}

/* A call refused natively with ENOSYS, made through a foreign ABI, is left to
 * filter_foreign_call: the same ENOSYS, and the call named. */
static bool foreign_enosys(const struct seccomp_data *d, uint32_t ret)
{
	uint32_t action = ret & SECCOMP_RET_ACTION_FULL;
	return (action == SECCOMP_RET_TRACE || action == SECCOMP_RET_USER_NOTIF) && foreign(d);
}

bool seccomp_filter_judge(struct task *t)
{
	unsigned long msg = 0;
	if (!t->filters || ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) < 0 ||
	    !(msg & SECCOMP_FILTER_TAG))
		return false;
	struct __ptrace_syscall_info info;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(info), &info) <= 0 ||
	    info.op != PTRACE_SYSCALL_INFO_SECCOMP)
		return false;
	struct seccomp_data d = { .nr = (int)info.seccomp.nr,
				  .arch = info.arch,
				  .instruction_pointer = info.instruction_pointer };
	for (int i = 0; i < 6; i++)
		d.args[i] = info.seccomp.args[i];
	uint32_t ret = verdict(t->filters, &d);
	uint32_t action = ret & SECCOMP_RET_ACTION_FULL;
	if (action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG || foreign_enosys(&d, ret))
		return false;
	t->syscall_nr = foreign(&d) ? -1 : d.nr; /* a foreign number means another call */
	trace_event(t, "%s refused by the program's own seccomp filter (%#x)", syscall_name(d.nr),
		    ret);
	int err = apply(t, ret, &d);
	if (err && err != -ESRCH) /* ESRCH: killed meanwhile, its death report follows */
		task_die(t, "cannot force SIGSYS for the program's own seccomp filter: %s",
			 strerror(-err));
	return true;
}
