/*
 * ptrace inside the group (sys_ptrace.c): what the wait calls and the engine's lifecycle
 * need of it. A member that traces another member is served by detrun, which stays the
 * only real tracer; the tracee's stops are detrun's own stops, held (traced_stop) until
 * its tracer lets it go, and reported to the tracer's wait4 or waitid from the tracee's
 * record (ptrace_wait.c).
 */
#ifndef DETRUN_HANDLERS_SYS_PTRACE_H
#define DETRUN_HANDLERS_SYS_PTRACE_H

#include <stdbool.h>

struct task;

/* At a wait4's or waitid's seccomp stop: a stop of one of the caller's tracees that its
 * pid argument (waitid: its idtype and id) selects, not yet waited for, is reported (wait4:
 * status, rusage, the virtual tid; waitid: a siginfo, CLD_TRAPPED for a stop) and the
 * call emulated. True if so. */
bool ptrace_wait_report(struct task *t);
/* Does the wait of t (its pid argument) select a task that t's process traces? Then the
 * kernel's ECHILD (the tracee is no child of its) means "nothing yet": a stop may come. */
bool ptrace_waits_for_tracee(struct task *t);
/* A signal stops t: true if t's tracer inside the group takes the stop (it is held until
 * that tracer resumes it, with the signal or without). */
bool ptrace_signal_stop(struct task *t, int sig);
/* t, traced with PTRACE_SYSCALL, is at a call's entry (its trap, before detrun handles
 * the call) or at its exit (complete, as the program sees it): true if its tracer takes
 * the stop. A call detrun rewinds or parks goes on: one entry and one exit stop each. */
bool ptrace_syscall_stop(struct task *t, bool entry);
/* t enters a group stop (stop signal `sig`): its tracer sees it, PTRACE_EVENT_STOP if
 * seized, and CONT lets t run while its process stays stopped. */
void ptrace_group_stop(struct task *t, int sig);
/* t's process is continued while t is in its group stop: if its tracer listens to it
 * (PTRACE_LISTEN), t stops with PTRACE_EVENT_STOP (SIGTRAP) instead of running on, and
 * true is returned. */
bool ptrace_continued(struct task *t);
/* parent made child: with PTRACE_O_TRACECLONE, _FORK or _VFORK (as `event` says) the
 * child is traced by parent's tracer and stopped (SIGSTOP, or PTRACE_EVENT_STOP if
 * seized), and parent stops with the event (GETEVENTMSG: the child's virtual tid). */
void ptrace_cloned(struct task *parent, struct task *child, int event);
/* At t's seccomp stop of call -1: true if its tracer skipped the call at its entry stop
 * (SYSEMU, or orig_rax set to -1): nothing runs, and rax keeps what the tracer left. */
bool ptrace_skipped(struct task *t);
/* A SIGCHLD stops t: if detrun sent it for a stop of a tracee of t's process's, it gets
 * the kernel's siginfo for it (CLD_TRAPPED, the tracee, its stop signal). */
void ptrace_sigchld_siginfo(struct task *t);
/* t's vfork child has exec'd or exited: with PTRACE_O_TRACEVFORKDONE t stops
 * (PTRACE_EVENT_VFORK_DONE, GETEVENTMSG: the child's virtual tid); true if so. */
bool ptrace_vfork_done(struct task *t);
/* t calls exit or exit_group: with PTRACE_O_TRACEEXIT it stops first (PTRACE_EVENT_EXIT,
 * GETEVENTMSG: its wait status). */
void ptrace_exiting(struct task *t);
/* t's process runs a new image: a traced t gets the SIGTRAP the kernel sends then. */
void ptrace_exec_done(struct task *t);
/* t is dead: its tracees are let go (killed with PTRACE_O_EXITKILL), and it leaves its
 * tracer's list. */
void ptrace_task_gone(struct task *t);

#endif
