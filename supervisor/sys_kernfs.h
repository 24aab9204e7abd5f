/*
 * Which files of the kernel's views (/proc, /sys, cgroup, debugfs ...) the group may open
 * (sys_kernfs.c): the host's figures must not reach it.
 */
#ifndef DETRUN_SUPERVISOR_SYS_KERNFS_H
#define DETRUN_SUPERVISOR_SYS_KERNFS_H

#include <stdbool.h>

#include "supervisor/task.h"

/* At the exit of an open that gave t descriptor `tfd`: if it is a kernel view file the
 * group may not see, the descriptor is closed in t and the call fails with ENOENT (absent)
 * or EACCES (another process's) instead (true). A /proc view detrun rewrites becomes its
 * snapshot (proc_view_substitute); if that fails, so does the open. */
bool views_refuse_open(struct task *t, int tfd);

/* Whether t's open of supervisor descriptor fd's file would stand. */
bool views_may_open(struct task *t, int fd);

#endif
