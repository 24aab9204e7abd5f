/*
 * Calls that name another process (sys_reach.c): confined to members of the group.
 */
#ifndef DETRUN_SUPERVISOR_SYS_REACH_H
#define DETRUN_SUPERVISOR_SYS_REACH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vkernel/task.h"

/* At any call's seccomp stop, before its handler: each argument the table's kinds say
 * names a process (P), a process group (G), a priority's "who" (W, O) or a process
 * descriptor (D) must stay within the group; true if the call was refused (its result
 * set). */
bool reach_refused(struct task *t);
/* At kill's stop: kill(-1) without a PID namespace is done here (true), and a process
 * group outside the group refused (true). */
bool reach_signal_refused(struct task *t);
/* At fcntl's seccomp stop: F_SETOWN(_EX) naming a non-member is refused (true). */
bool reach_owner_refused(struct task *t);
/* At ioctl's stop (the filter stops FIOSETOWN and SIOCSPGRP even without a shim). */
bool reach_ioctl_owner_refused(struct task *t);
void reach_set_namespaced(bool yes);
/* Is `ns_tid` (a pid as the group sees it) one of the group's threads or processes? */
bool reach_is_member(pid_t ns_tid);
/* The task whose tid the group sees as ns_tid (whatever its state), or NULL. */
struct task *reach_task(pid_t ns_tid);

#endif
