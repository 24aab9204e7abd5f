/*
 * Seccomp strict mode, emulated. The kernel refuses strict mode (EINVAL) to a task that
 * already has a filter, and every task of the group has detrun's. So detrun answers the
 * request itself and enforces the mode: a task in strict mode has every syscall stop
 * (tracer.c resumes it with PTRACE_SYSCALL), and a call other than read, write, _exit and
 * rt_sigreturn kills it with SIGKILL at its entry, before it runs, as the kernel does
 * (the kernel ends only the calling thread; here SIGKILL ends its whole process, which is
 * the same for the single-threaded programs strict mode is made for).
 *
 * Entering it: seccomp(SECCOMP_SET_MODE_STRICT, 0, NULL) (the seccomp row's handler) or
 * prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT): the prctl handler calls
 * seccomp_strict_enter() at the call's seccomp stop.
 */
#ifndef DETRUN_SUPERVISOR_SECCOMP_STRICT_H
#define DETRUN_SUPERVISOR_SECCOMP_STRICT_H

#include <stdbool.h>

struct task;

/* At the seccomp stop of prctl or seccomp: if the call asks for strict mode, emulates it
 * (t enters strict mode, the call returns 0, or EINVAL for bad arguments as the kernel
 * would) and returns true; false for any other request, which is left alone. */
bool seccomp_strict_enter(struct task *t);

/* At a syscall-entry stop of a task in strict mode: may call `nr` run? If not, the task
 * has been sent SIGKILL; its death follows. */
bool seccomp_strict_allows(struct task *t, long nr);

#endif
