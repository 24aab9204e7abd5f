/*
 * Files (sys_files.c): opens, stamps and fingerprints, virtual inode and device numbers.
 */
#ifndef DETRUN_SUPERVISOR_SYS_FILES_H
#define DETRUN_SUPERVISOR_SYS_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "vkernel/task.h"

/* stat(2) of a path argument as task t sees it (relative to dirfd, its cwd or root); with
 * `parent`, of the directory holding it. 0 or -errno. */
int stat_path(struct task *t, int dirfd, uint64_t addr, bool parent, bool follow, struct stat *st);
/* Where an open of t lands, looked up once at its stop in t's own view (following the
 * last link unless O_NOFOLLOW) and shared by sys_open_fifo and sys_open: `resolved` is
 * false when the path does not resolve there (a new file, /proc/self, a bad address). */
struct open_target {
	bool resolved;
	bool on_kernel_view; /* proc, sysfs, cgroup ...: judged at the open's exit */
	struct stat st;
};
void open_target_lookup(struct task *t, struct open_target *o);
/* sys_files.c's handling of opens (stamping, fingerprints, kernel views); sys_open_fifo
 * comes first and passes the target it looked up. openat2 (its own resolution rules)
 * comes here directly. */
void sys_open(struct task *t);
void sys_open_target(struct task *t, const struct open_target *o);

/* Files: call files_init() before the program starts; files_written() stamps a regular
 * file the group wrote through descriptor `tfd`. */
void files_init(void);
/* t has just executed a new program: the shim fingerprints it like a file read. */
void files_executed(struct task *t);
void files_written(struct task *t, int tfd);
/* The same for a descriptor already duplicated (supervisor descriptor fd, its fstat). */
void files_written_fd(int fd, const struct stat *st);
/* The number the group sees for inode ino of dev; nlink is its link count where the caller
 * knows it (a name in a directory links it), NLINK_UNKNOWN otherwise. */
#define NLINK_UNKNOWN (-1L)
uint64_t files_virtual_ino(uint64_t dev, uint64_t ino, long nlink);
uint64_t files_virtual_dev(uint64_t dev);
/* Is fd on a kernel view whose content is made when read (proc, sysfs, cgroup ...)? Such
 * files are not part of a run's starting state. */
bool synthetic_filesystem(int fd);

#endif
