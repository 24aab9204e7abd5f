/*
 * The program's own seccomp filters, judged by detrun (after rr's SeccompFilterRewriter).
 *
 * A filter the program installs stays on its tasks through fork and execve, and the kernel
 * runs it on every call the task makes, the calls detrun injects included (the vDSO unmap
 * at exec, the signal stand-ins, calls rewritten at their stop). Loaded as written, a
 * filter answering munmap with SECCOMP_RET_ERRNO(0) would make detrun's unmap "succeed"
 * without running, and the program would read the host clock through the vDSO.
 *
 * So the kernel never gets the program's filter as written. At its install detrun keeps
 * the original and loads a copy in which every return that would not let the call run
 * (ERRNO, TRAP, TRACE, USER_NOTIF, KILL_*, and every BPF_RET|BPF_A, whose value only the
 * run knows) is SECCOMP_RET_TRACE with data SECCOMP_FILTER_TAG; ALLOW and LOG stay ALLOW.
 * The kernel takes the lowest action of all filters and, between equal ones, the newest
 * filter's data (kernel/seccomp.c, seccomp_run_filters); detrun's own filter answers only
 * ALLOW or TRACE(0). Hence:
 *   - every call the kernel sees is either allowed or stops at detrun: an injected call
 *     stops and remote_syscall lets it run, so nothing detrun does can be refused;
 *   - a program call one of its filters may refuse stops with the tag. detrun then runs
 *     the original filters of the task itself (a classic BPF interpreter, the subset the
 *     kernel accepts for seccomp) on the call's seccomp_data, combines their answers as
 *     the kernel would, and applies the verdict as the kernel would: ERRNO skips the call
 *     with -data, TRACE and USER_NOTIF give ENOSYS (the program has no tracer or
 *     listener of its own), TRAP skips it and forces SIGSYS with the kernel's siginfo,
 *     KILL_* ends the thread or the process by SIGSYS. An ALLOW verdict (a BPF_RET|BPF_A
 *     that allowed) goes on to detrun's own handling of the call.
 * The verdict is taken at the call's seccomp stop, an event like any other: the same
 * logical time on every run.
 */
#ifndef DETRUN_SUPERVISOR_SECCOMP_FILTER_H
#define DETRUN_SUPERVISOR_SECCOMP_FILTER_H

#include <stdbool.h>

struct task;
struct program_filter; /* one filter of a task's chain, newest first, shared by reference */

/* The data of the TRACE that stands for the program's own refusals; detrun's filter's is 0. */
#define SECCOMP_FILTER_TAG 0x8000u

/* At the seccomp stop of seccomp(SECCOMP_SET_MODE_FILTER) or prctl(PR_SET_SECCOMP,
 * SECCOMP_MODE_FILTER): the kernel gets the rewritten copy, and the original joins the
 * task's chain (every thread's, with TSYNC) once the kernel has accepted the copy. */
void seccomp_filter_install(struct task *t, unsigned flags);

/* At a seccomp stop: if the program's filters refuse the call, applies their verdict (the
 * call does not run, or ends the task) and returns true; false when the call goes on. */
bool seccomp_filter_judge(struct task *t);

struct program_filter *seccomp_filter_ref(struct program_filter *f);
void seccomp_filter_unref(struct program_filter *f);

#endif
