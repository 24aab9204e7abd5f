/*
 * Files (sys_files.c): opens, stamps and fingerprints, virtual inode and device numbers.
 */
#ifndef DETRUN_SUPERVISOR_SYS_FILES_H
#define DETRUN_SUPERVISOR_SYS_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "supervisor/task.h"

/* stat(2) of a path argument as task t sees it (relative to dirfd, its cwd or root); with
 * `parent`, of the directory holding it. 0 or -errno. */
int stat_path(struct task *t, int dirfd, uint64_t addr, bool parent, bool follow, struct stat *st);
/* sys_files.c's handling of opens (stamping, fingerprints); sys_open_fifo comes first. */
void sys_open(struct task *t);

/* Files: call files_init() before the program starts; files_written() stamps a regular
 * file the group wrote through descriptor `tfd`. */
void files_init(void);
/* t has just executed a new program: the shim fingerprints it like a file read. */
void files_executed(struct task *t);
void files_written(struct task *t, int tfd);
/* The number the group sees for inode ino of dev; nlink is its link count where the caller
 * knows it (a name in a directory links it), NLINK_UNKNOWN otherwise. */
#define NLINK_UNKNOWN (-1L)
uint64_t files_virtual_ino(uint64_t dev, uint64_t ino, long nlink);
uint64_t files_virtual_dev(uint64_t dev);
/* Is fd on a kernel view whose content is made when read (proc, sysfs, cgroup ...)? Such
 * files are not part of a run's starting state. */
bool synthetic_filesystem(int fd);

#endif
