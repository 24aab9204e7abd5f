/* prctl(2) and seccomp(2): the settings detrun itself made on the program's tasks are
 * detrun's, and the program must see its own.
 *
 * detrun traps the TSC (PR_SET_TSC, PR_TSC_SIGSEGV) and installs a seccomp filter; the
 * program must find the TSC as it set it (enabled by default) and no filter unless it
 * installed one. The filter stops prctl only for the options answered here (STOP_WHEN_EQ
 * rows in syscalls.def): PR_SET_NAME and the rest stay as cheap as any allowed call. The
 * death signal detrun gives the program at launch is cleared before exec (launch.c), so
 * PR_GET_PDEATHSIG needs nothing here. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "vkernel/report.h"
#include "engine/seccomp_filter.h"
#include "engine/seccomp_strict.h"
#include "handlers/sys_common.h"

/* Seccomp filters attached to the task: detrun's own is one of them. */
static int filters_attached(const struct task *t)
{
	char buf[4096];
	if (proc_status_read(t->tid, buf, sizeof(buf)))
		return 1;
	return (int)proc_status_field(buf, "\nSeccomp_filters:", 10, 1);
}

/* PR_GET_SECCOMP: 2 (filter mode) only if the program installed a filter itself. */
static void get_seccomp(struct task *t)
{
	if (filters_attached(t) > 1)
		return; /* the kernel's answer is the program's */
	syscall_emulate(t, 0);
}

/* The TSC stays trapped whatever the program asks: rdtsc reads the virtual clock unless
 * the program asked for PR_TSC_SIGSEGV itself, then it gets the SIGSEGV (sys_cpu.c). */
static void set_tsc(struct task *t)
{
	uint64_t mode = syscall_arg(t, 1);
	if (mode != PR_TSC_ENABLE && mode != PR_TSC_SIGSEGV) {
		syscall_emulate(t, -EINVAL);
		return;
	}
	t->tsc_sigsegv = mode == PR_TSC_SIGSEGV;
	syscall_emulate(t, 0);
}

static void get_tsc(struct task *t)
{
	int mode = t->tsc_sigsegv ? PR_TSC_SIGSEGV : PR_TSC_ENABLE;
	if (remote_write(t, REMOTE(syscall_arg(t, 1)), &mode, sizeof(mode)))
		syscall_emulate(t, -EFAULT);
	else
		syscall_emulate(t, 0);
}

/* Implements prctl(2) for PR_SET_SECCOMP (strict mode emulated, a filter judged by detrun:
 * seccomp_filter.h), PR_GET_SECCOMP, PR_GET_TSC and PR_SET_TSC; every other option runs
 * natively (and does not stop). */
void sys_prctl(struct task *t)
{
	if (seccomp_strict_enter(t)) /* PR_SET_SECCOMP, SECCOMP_MODE_STRICT */
		return;
	switch ((int)syscall_arg(t, 0)) {
	case PR_GET_SECCOMP:
		get_seccomp(t);
		break;
	case PR_SET_TSC:
		set_tsc(t);
		break;
	case PR_GET_TSC:
		get_tsc(t);
		break;
	case PR_SET_SECCOMP:
		if (syscall_arg(t, 1) == SECCOMP_MODE_FILTER)
			seccomp_filter_install(t, 0);
		break;
	}
}

/* Implements seccomp(2). A filter is judged by detrun (seccomp_filter.h). A filter with a user-notification listener is refused: a call
 * it notifies sleeps in the kernel until the listener answers, but the listener is a task
 * of the group waiting for its turn (the group would hang); and SECCOMP_RET_USER_NOTIF
 * takes precedence over detrun's SECCOMP_RET_TRACE, so a listener's "continue" would run
 * any call past detrun unseen. EBUSY is what the kernel says when a listener is already
 * installed; programs that can do without one fall back. */
void sys_seccomp(struct task *t)
{
	if (seccomp_strict_enter(t))
		return;
	if (syscall_arg(t, 0) != SECCOMP_SET_MODE_FILTER)
		return;
	if (!(syscall_arg(t, 1) & SECCOMP_FILTER_FLAG_NEW_LISTENER)) {
		seccomp_filter_install(t, (unsigned)syscall_arg(t, 1));
		return;
	}
	task_warn(t, "seccomp user notification (SECCOMP_FILTER_FLAG_NEW_LISTENER) is not "
		     "supported under detrun: refused with EBUSY");
	syscall_emulate(t, -EBUSY);
}
