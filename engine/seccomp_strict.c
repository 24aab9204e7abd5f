/* Seccomp strict mode, emulated (seccomp_strict.h). */
#include "engine/seccomp_strict.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vkernel/report.h"
#include "scheduler/scheduler.h"
#include "vkernel/task.h"
#include "engine/remote.h"
#include "engine/tracer.h"
#include "vkernel/signal_bits.h"
#include "syscalls/syscall_table.h"

bool seccomp_strict_enter(struct task *t)
{
	int64_t result;
	if (t->syscall_nr == __NR_prctl) {
		if (syscall_arg(t, 0) != PR_SET_SECCOMP || syscall_arg(t, 1) != SECCOMP_MODE_STRICT)
			return false;
		result = 0; /* prctl ignores the third argument for strict mode */
	} else if (t->syscall_nr == __NR_seccomp) {
		if (syscall_arg(t, 0) != SECCOMP_SET_MODE_STRICT)
			return false;
		result = syscall_arg(t, 1) || syscall_arg(t, 2) ? -EINVAL : 0;
	} else {
		return false;
	}
	if (result == 0) {
		t->seccomp_strict = true;
		trace_event(t,
			    "  seccomp strict mode: only read, write, _exit, rt_sigreturn from now");
	}
	syscall_emulate(t, result);
	return true;
}

bool seccomp_strict_allows(struct task *t, long nr)
{
	if (nr == __NR_read || nr == __NR_write || nr == __NR_exit || nr == __NR_rt_sigreturn)
		return true;
	trace_event(t, "%s in seccomp strict mode: killed", syscall_name(nr));
	syscall(SYS_tgkill, t->proc->tgid, t->tid, SIGKILL);
	return false;
}
