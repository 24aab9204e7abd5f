/* gdb's inferior calls (`print f(1)`, `call f()`). gdb saves the registers, points the pc at
 * the function with a return address where it waits (an int3 at the program's entry point,
 * or a spot on the stack, which faults as the stack is not executable), resumes, and at
 * that stop writes the saved registers back.
 *
 * What the call raises belongs to gdb, not to the program. Taken for the program's, the
 * stack's SIGSEGV became an event the recording never had, and detrun delivered it at the
 * next continue: the program died of it. So from gdb's change of a task's pc until gdb puts
 * that pc back, a signal stop of the task is reported to gdb alone and the task resumes
 * without it. A fault the tracer handles itself (an instruction detrun emulates: a general
 * protection fault, SI_KERNEL) still goes to it.
 *
 * A system call the function makes is not run: on a replay it would take an event the
 * recording does not have, or write what the recording did not (`call fflush(0)`), and the
 * replay would diverge or lie. It is refused with one line and reported to gdb as SIGSYS;
 * `detrun debug` starts gdb with `unwindonsignal on`, so gdb puts the registers back at
 * once, and the task goes on from where it was, the call skipped. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "debugger/internal.h"
#include "syscalls/syscall_table.h"
#include "engine/remote.h"
#include "engine/tracer.h"
#include "vkernel/report.h"
#include "vkernel/task.h"

static int call_vtid;      /* the task running a call of gdb's, 0 for none */
static uint64_t call_home; /* its pc before the call: gdb's write of it back ends the call */

void calls_pc_written(struct task *t, uint64_t before)
{
	uint64_t now = task_ip(t);
	if (now == before)
		return;
	if (!call_vtid) {
		call_vtid = t->vtid;
		call_home = before;
	} else if (t->vtid == call_vtid && now == call_home) {
		call_vtid = 0;
	}
}

static bool emulated_fault(struct task *t, int sig)
{
	siginfo_t si;
	return sig == SIGILL || (sig == SIGSEGV && ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 &&
				 si.si_code == SI_KERNEL);
}

/* The call's system call, at its seccomp stop: refused, and skipped however gdb resumes. */
static void refuse_syscall(struct task *t)
{
	long nr = remote_load_regs(t) ? -1 : (long)t->regs.orig_rax;
	static bool said;
	if (!said)
		warn("task %d: a function gdb called makes a system call (%s): not run, as it "
		     "would change the replay; the call is abandoned",
		     t->vtid, syscall_name(nr));
	said = true;
	char reply[128];
	server_stop_reply(t, SIGSYS, "", reply, sizeof(reply));
	server_converse_resume(t, reply);
	if (remote_load_regs(t) == 0) {
		t->regs.orig_rax = (uint64_t)-1; /* the kernel skips the call */
		t->regs_dirty = true;
	}
}

bool calls_take_stop(struct task *t, int status)
{
	int sig = WSTOPSIG(status), event = (int)((unsigned)status >> 16);
	if (t->vtid != call_vtid)
		return false;
	if (event == PTRACE_EVENT_SECCOMP) {
		refuse_syscall(t);
	} else {
		if (event != 0 || sig == SIGTRAP || emulated_fault(t, sig))
			return false;
		char reply[128];
		server_stop_reply(t, sig, "", reply, sizeof(reply));
		server_converse_resume(t, reply);
	}
	remote_store_regs(t);
	t->regs_valid = false;
	if (ptrace(tracer_resume_request(t), t->tid, 0, 0) < 0 && errno != ESRCH)
		task_warn(t, "cannot resume after gdb's call: %s", strerror(errno));
	return true;
}
