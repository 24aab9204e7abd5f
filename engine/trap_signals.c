/* The program's SIGSEGV and SIGILL, kept intact although detrun traps on them: see
 * trap_signals.h for the idea. */
#include "engine/trap_signals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vkernel/report.h"
#include "scheduler/scheduler.h"
#include "vkernel/task.h"
#include "engine/remote.h"
#include "engine/tracer.h"
#include "vkernel/signal_bits.h"

/* Stands for the program's SIG_DFL or SIG_IGN in the kernel. Never run: every delivery of
 * these signals stops in detrun first, which applies the program's own action. */
#define SENTINEL_HANDLER 0xdead0000ULL
#define HANDLER_DFL 0ULL
#define HANDLER_IGN 1ULL

static int slot(int sig)
{
	return sig == SIGSEGV ? 1 : 0;
}

static bool is_handler(uint64_t h)
{
	return h != HANDLER_DFL && h != HANDLER_IGN;
}

/* What the kernel gets for the program's action `a`: always a handler, never one the
 * kernel resets by itself (SA_RESETHAND is applied by detrun at delivery). */
static struct signal_action kernel_action(const struct signal_action *a)
{
	struct signal_action k = *a;
	k.flags &= ~(uint64_t)SA_RESETHAND;
	if (!is_handler(k.handler))
		k.handler = SENTINEL_HANDLER;
	return k;
}

/* Installs `a` as the kernel's action for sig, through an injected rt_sigaction whose
 * argument sits below the task's stack red zone (the bytes there are put back). */
static int install(struct task *t, int sig, const struct signal_action *a)
{
	if (remote_load_regs(t))
		return -ESRCH;
	uint64_t at = ((task_sp(t) - 128 - sizeof(*a)) & ~15ULL);
	struct signal_action saved;
	if (remote_read(t, REMOTE(at), &saved, sizeof(saved)) ||
	    remote_write(t, REMOTE(at), a, sizeof(*a)))
		return -EFAULT;
	long r = remote_syscall(t, __NR_rt_sigaction, (uint64_t)sig, at, 0, 8, 0, 0);
	remote_write(t, REMOTE(at), &saved, sizeof(saved));
	return r < 0 ? (int)r : 0;
}

/* Installs the kernel action that stands for the program's action of sig. */
static bool arm(struct task *t, int sig)
{
	struct process *p = t->proc;
	struct signal_action k = kernel_action(&p->trap_program[slot(sig)]);
	int err = install(t, sig, &k);
	if (err) {
		task_warn(t,
			  "cannot install detrun's stand-in action for signal %d (%s): a "
			  "program that blocks it may find it unblocked after a trap",
			  sig, strerror(-err));
		return false;
	}
	p->trap_kernel[slot(sig)] = k;
	return true;
}

/* Handlers do not survive exec; ignored signals do, with no flags or mask. */
void trap_signals_exec(struct task *t)
{
	struct process *p = t->proc;
	bool armed = true;
	for (int sig = SIGILL; sig <= SIGSEGV; sig += SIGSEGV - SIGILL) {
		bool ignored = p->trap_armed ? p->trap_program[slot(sig)].handler == HANDLER_IGN
					     : (p->ignored & SIGBIT(sig)) != 0;
		p->trap_program[slot(sig)] = (struct signal_action){ ignored ? HANDLER_IGN
									     : HANDLER_DFL,
								     0, 0, 0 };
		if (ignored)
			p->ignored |= SIGBIT(sig);
		else
			p->ignored &= ~SIGBIT(sig);
		armed &= arm(t, sig);
	}
	p->trap_armed = armed;
}

/* Field 34 of /proc/TGID/stat, sigcatch, through a descriptor kept open: the cheapest
 * view of the process's handlers (a trap is frequent: RDTSC). */
static bool kernel_has_handler(struct task *t, int sig)
{
	struct process *p = t->proc;
	if (p->stat_fd < 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/stat", p->tgid);
		p->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (p->stat_fd < 0)
			return true;
	}
	char buf[1024];
	ssize_t n = pread(p->stat_fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	char *at = strrchr(buf, ')');
	for (int field = 2; at && field < 34; field++)
		at = strchr(at + 1, ' ');
	return !at || (strtoull(at + 1, NULL, 10) & SIGBIT(sig));
}

/* Forcing changed the action only if the signal was blocked: then it also unblocked it. */
void trap_signals_after_trap(struct task *t, int sig)
{
	struct process *p = t->proc;
	if (!p->trap_armed || kernel_has_handler(t, sig))
		return;
	uint64_t mask;
	if (install(t, sig, &p->trap_kernel[slot(sig)]) ||
	    ptrace(PTRACE_GETSIGMASK, t->tid, sizeof(mask), &mask) < 0) {
		task_warn(t,
			  "cannot restore signal %d after a trap: it stays unblocked with its "
			  "default action",
			  sig);
		return;
	}
	mask |= SIGBIT(sig);
	if (ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(mask), &mask) < 0)
		task_warn(t, "cannot block signal %d again after a trap", sig);
	trace_event(t, "  signal %d blocked again, its action restored", sig);
}

/* The program's SIG_DFL: the kernel's default action must run, so the stand-in goes. */
static void kernel_default(struct task *t, int sig)
{
	struct process *p = t->proc;
	struct signal_action dfl = { HANDLER_DFL, 0, 0, 0 };
	if (install(t, sig, &dfl) == 0)
		p->trap_kernel[slot(sig)] = dfl;
}

bool trap_signals_deliver(struct task *t, int sig)
{
	struct process *p = t->proc;
	if (!p->trap_armed)
		return true;
	struct signal_action *a = &p->trap_program[slot(sig)];
	if (a->handler == HANDLER_IGN) {
		siginfo_t si;
		bool sent = ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 && si.si_code <= 0;
		if (sent)
			return false; /* the kernel would have discarded it */
		/* A fault while ignored: the kernel resets the action and delivers it. */
		a->handler = HANDLER_DFL;
		p->ignored &= ~SIGBIT(sig);
	}
	if (a->handler == HANDLER_DFL) {
		kernel_default(t, sig);
		return true;
	}
	if (a->flags & SA_RESETHAND) {
		/* The kernel keeps the handler, which now stands for SIG_DFL. */
		a->handler = HANDLER_DFL;
		p->caught &= ~SIGBIT(sig);
		p->sa_restart &= ~SIGBIT(sig);
	}
	return true;
}

/* At the exit of rt_sigaction: the program's new action is recorded and replaced by its
 * stand-in; the old action it asked for is its own, not the kernel's. */
static void sigaction_done(struct task *t)
{
	if (syscall_result(t) < 0)
		return;
	struct process *p = t->proc;
	int sig = (int)syscall_arg(t, 0);
	uint64_t act = syscall_arg(t, 1), oldact = syscall_arg(t, 2);
	struct signal_action old = p->trap_program[slot(sig)], now;
	if (p->trap_armed && oldact && remote_write(t, REMOTE(oldact), &old, sizeof(old)))
		task_warn(t, "cannot write the old action of signal %d", sig);
	if (!act || remote_read(t, REMOTE(act), &now, sizeof(now)))
		return;
	p->trap_program[slot(sig)] = now;
	struct signal_action k = kernel_action(&now);
	if (memcmp(&k, &now, sizeof(k)) == 0) {
		p->trap_kernel[slot(sig)] = now; /* the kernel has just installed it */
		return;
	}
	p->trap_armed = arm(t, sig) && p->trap_armed;
}

void trap_signals_sigaction(struct task *t)
{
	int sig = (int)syscall_arg(t, 0);
	if ((sig == SIGSEGV || sig == SIGILL) && syscall_arg(t, 3) == 8)
		tracer_want_exit(t, sigaction_done);
}

void trap_signals_inherit(struct process *child, const struct process *parent)
{
	memcpy(child->trap_program, parent->trap_program, sizeof(child->trap_program));
	memcpy(child->trap_kernel, parent->trap_kernel, sizeof(child->trap_kernel));
	child->trap_armed = parent->trap_armed;
}
