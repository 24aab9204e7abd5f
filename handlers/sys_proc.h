/*
 * /proc views detrun rewrites and kernel-wide ids it renumbers (sys_proc.c).
 */
#ifndef DETRUN_SUPERVISOR_SYS_PROC_H
#define DETRUN_SUPERVISOR_SYS_PROC_H

#include <stdbool.h>
#include <stdint.h>

#include "vkernel/task.h"

/* A mount id as mountinfo and fdinfo show it (unique: statx's 64-bit STATX_MNT_ID_UNIQUE). */
uint64_t proc_virtual_mount_id(uint64_t id, bool unique);

/* At a read(2), readv(2) or preadv2(2) of supervisor descriptor `fd`: if it is a /proc view detrun rewrites
 * (/proc/PID/{stat,status,maps,mountinfo,fdinfo/N}, the random uuid and boot id), answer
 * the read and return true. */
bool proc_view_read(struct task *t, int fd);
/* At a sendfile, splice or copy_file_range whose input (argument `arg`) is such a view:
 * the call fails with EINVAL (true). */
bool proc_view_unspliceable(struct task *t, int arg);
/* At an ioctl or getsockopt that returns a kernel-wide id (FS_IOC_GETVERSION, SO_COOKIE):
 * the call runs and its answer is renumbered; true if it is one. */
bool kernel_id_call(struct task *t);

#endif
