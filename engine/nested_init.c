#include "engine/nested_init.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vkernel/task.h"
#include "vkernel/report.h"
#include "scheduler/scheduler.h"
#include "engine/remote.h"
#include "engine/tracer.h"
#include "vkernel/signal_bits.h"

#define FAULT_SIGNALS (SIGBIT(SIGSEGV) | SIGBIT(SIGBUS) | SIGBIT(SIGILL) | SIGBIT(SIGFPE))

/* A fault's signal, raised by the kernel at the faulting instruction, that kills t: no
 * handler, or one the signal is blocked from (the kernel then resets it to the default). */
static bool fatal_fault(struct task *t, int sig)
{
	if (!(FAULT_SIGNALS & SIGBIT(sig)))
		return false;
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0 || si.si_code <= 0 ||
	    si.si_code == SI_KERNEL)
		return false; /* sent by kill(), tkill(): not forced */
	uint64_t pending, blocked;
	if (read_signal_state(t, &pending, &blocked) < 0)
		return false;
	return !signal_is_caught(t, sig) || (blocked & SIGBIT(sig));
}

bool nested_init_fault(struct task *t, int sig, void (*handle_status)(pid_t tid, int status),
		       void (*died)(struct task *t, int status))
{
	if (t->ns_tid != 1 || t->tid != t->proc->tgid || !fatal_fault(t, sig))
		return false;
	int pidfd = (int)syscall(SYS_pidfd_open, t->tid, 0);
	if (pidfd < 0)
		return false;
	/* Detached at its signal-delivery stop with no signal, it runs the faulting
	 * instruction again, untraced, and the kernel's forced signal ends it. */
	if (ptrace(PTRACE_DETACH, t->tid, 0, 0) < 0) {
		close(pidfd);
		return false;
	}
	trace_event(t, "  pid 1 of its namespace: killed by signal %d", sig);
	/* Its namespace's other processes are killed with it and stop on their way out:
	 * they are let go on while waiting. */
	struct pollfd p = { pidfd, POLLIN, 0 };
	for (int waited_ms = 0; waited_ms < 10000; waited_ms += 10) {
		int status;
		pid_t tid;
		while ((tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
			handle_status(tid, status);
		if (poll(&p, 1, 10) > 0)
			break;
	}
	close(pidfd);
	if (!p.revents)
		task_warn(t, "the namespace's init did not die of signal %d", sig);
	t->state = TASK_STOPPED;
	died(t, sig);
	return true;
}
