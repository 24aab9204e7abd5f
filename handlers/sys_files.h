/*
 * Files (sys_files.c): opens, stamps and fingerprints, virtual inode and device numbers.
 */
#ifndef DETRUN_SUPERVISOR_SYS_FILES_H
#define DETRUN_SUPERVISOR_SYS_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "engine/file_view.h"
#include "vkernel/task.h"

/* The path string at addr in t's memory. 0, -EFAULT or -ENAMETOOLONG. */
int tracee_path(struct task *t, uint64_t addr, char *path, size_t size);
/* A supervisor descriptor of the directory tracee path `path` starts from, in t's own
 * view (its root, its cwd or dirfd), or -1. */
int tracee_path_base(struct task *t, int dirfd, const char *path);
/* Before t's call changes entry `path` (at addr, relative to dirfd) for the first time in
 * the run, the shim sees it, so a recording keeps what was there (sys_images.c); with
 * `follow`, a symbolic link there stands for what it points to. */
void files_changing(struct task *t, int dirfd, uint64_t addr, bool follow);
/* The same for an open with `flags` of the path at addr, if it may change it, and for the
 * entries a call's row changes (syscall_entries). */
void files_open_changing(struct task *t, uint64_t flags, int dirfd, uint64_t addr);
struct syscall_entry;
struct syscall_entries;
void files_entries_changing(struct task *t, const struct syscall_entry *e,
			    const struct syscall_entries *c);

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
/* The devices of a replay's view of the files (engine/file_view.h), once launched: each
 * shows as the device below it. files_view_device: is dev one, and is the filesystem below
 * it a tmpfs? */
void files_view_devices(const struct file_view_device *d, int n);
bool files_view_device(uint64_t dev, bool *real_shmem);
/* dev itself, or the device below the view's overlay dev. */
uint64_t files_view_real_dev(uint64_t dev);
/* A directory (supervisor descriptor fd) on view device dev: the size and blocks of the real
 * one at its path, which the recording saw (the overlay's own are its tmpfs's). */
void files_view_directory(int fd, uint64_t dev, int64_t *size, int64_t *blocks);
/* Is fd on a kernel view whose content is made when read (proc, sysfs, cgroup ...)? Such
 * files are not part of a run's starting state. */
bool synthetic_filesystem(int fd);

#endif
