/*
 * /proc views detrun rewrites (sys_proc.c), the snapshots that give them to the program
 * (sys_proc_snapshot.c), and kernel-wide ids it renumbers (sys_ids.c).
 */
#ifndef DETRUN_SUPERVISOR_SYS_PROC_H
#define DETRUN_SUPERVISOR_SYS_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vkernel/task.h"

/* A mount id as mountinfo and fdinfo show it (unique: statx's 64-bit STATX_MNT_ID_UNIQUE). */
uint64_t proc_virtual_mount_id(uint64_t id, bool unique);

/* At the exit of t's open of a /proc view detrun rewrites (/proc/PID/{stat,statm,status,auxv,
 * maps,mountinfo,fdinfo/N}, the random uuid and boot id; supervisor descriptor fd): its
 * descriptor tfd becomes a read-only memfd holding the rewritten text, so that no read
 * form (pread64 and preadv do not stop) reaches the kernel's. 0 (also for any other
 * file), or -errno when the snapshot cannot be made: the open must fail. */
int proc_view_substitute(struct task *t, int tfd, int fd);
/* At a read(2), readv(2) or preadv2(2) of supervisor descriptor `fd`: if it is a view's
 * snapshot and the read starts at offset 0, its text is made anew. The read then runs. */
void proc_view_refresh(struct task *t, int fd);
/* Whether supervisor descriptor fd is such a snapshot (made when read, like the kernel
 * views: not part of a run's starting state). */
bool proc_view_snapshot(int fd);
/* The kernel's file of the view whose snapshot is t's descriptor tfd (for fstat and statx,
 * which found mode and nlink there): a supervisor descriptor, or -1 when tfd is no
 * snapshot. */
int proc_view_kernel_file(struct task *t, int tfd, mode_t mode, uint64_t nlink);
/* At a sendfile, splice or copy_file_range whose input (argument `arg`) is such a view:
 * the call fails with EINVAL (true). */
bool proc_view_unspliceable(struct task *t, int arg);
/* The same for an input already duplicated: supervisor descriptor fd. */
bool proc_view_fd_unspliceable(struct task *t, int fd);
/* At the exit of a readlink that read `link` into t's buffer buf (of size bytes): if it
 * is a link to a view's snapshot, the buffer gets the view's path instead (true). */
bool proc_view_link_read(struct task *t, const char *link, uint64_t buf, uint64_t size);
/* At an ioctl or getsockopt that returns a kernel-wide id (FS_IOC_GETVERSION, SO_COOKIE):
 * the call runs and its answer is renumbered; true if it is one. */
bool kernel_id_call(struct task *t);

#endif
