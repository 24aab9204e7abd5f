/*
 * Identity and accounting calls (sys_identity.c).
 */
#ifndef DETRUN_SUPERVISOR_SYS_IDENTITY_H
#define DETRUN_SUPERVISOR_SYS_IDENTITY_H

#include "vkernel/task.h"

/* The last thread of t's process is exiting: its peak size counts for its parent's
 * getrusage(RUSAGE_CHILDREN). */
void rusage_process_exiting(struct task *t);

#endif
