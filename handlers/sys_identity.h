/*
 * Identity and accounting calls (sys_identity.c).
 */
#ifndef DETRUN_SUPERVISOR_SYS_IDENTITY_H
#define DETRUN_SUPERVISOR_SYS_IDENTITY_H

#include "vkernel/task.h"

/* The last thread of t's process is exiting: its peak size counts for its parent's
 * getrusage(RUSAGE_CHILDREN). */
void rusage_process_exiting(struct task *t);
/* At the exit of t's wait4 or waitid that reported a child: the usage it wrote (their
 * rusage argument) is the child's as the group shows it: no CPU time, no faults or
 * context switches, the peak memory it had at its exit. */
void rusage_wait_written(struct task *t);
/* A SIGCHLD stops t before its delivery: a child's CPU times in its siginfo (si_utime,
 * si_stime: real clock ticks) become none, as the group's children show everywhere else
 * (getrusage RUSAGE_CHILDREN, times). */
void rusage_sigchld_times(struct task *t);

#endif
