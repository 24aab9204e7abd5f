/*
 * Which files of the kernel's views (/proc, /sys, cgroup, debugfs ...) the group may open
 * (sys_kernfs.c): the host's figures must not reach it.
 */
#ifndef DETRUN_SUPERVISOR_SYS_KERNFS_H
#define DETRUN_SUPERVISOR_SYS_KERNFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vkernel/task.h"

/* At the exit of an open that gave t descriptor `tfd`: if it is a kernel view file the
 * group may not see, the descriptor is closed in t and the call fails with ENOENT (absent)
 * or EACCES (another process's) instead (true). A /proc view detrun rewrites becomes its
 * snapshot (proc_view_substitute); if that fails, so does the open. */
bool views_refuse_open(struct task *t, int tfd);

/* The verdict t's open of supervisor descriptor fd's file (O_PATH is enough) gets: 0,
 * -ENOENT (absent) or -EACCES (another process's). Names agree with it: a listing leaves
 * out what is absent, and a stat or access of it fails with ENOENT. */
int views_open_verdict(struct task *t, int fd);
/* For a listing of the directory at supervisor descriptor dir: true if it is on a procfs,
 * with its path inside it in rel (then each entry goes through views_entry_absent). */
bool views_listing_judged(struct task *t, int dir, char *rel, size_t size);
/* Whether entry `name` (of type DT_*) of that directory (device dir_dev, path rel) is
 * absent for t. */
bool views_entry_absent(struct task *t, int dir, dev_t dir_dev, const char *rel, const char *name,
			unsigned char type);

/* The verdict an open of t's path (tracee address addr, from dirfd) gets, judged in t
 * itself (where /proc/self names t): 0, -ENOENT or -EACCES. */
int views_name_verdict(struct task *t, int dirfd, uint64_t addr);
/* 1 if device dev is a procfs, 0 if not, -1 if not known yet (known from the names
 * views_name_verdict judged): a stat's result elsewhere needs no verdict. */
int views_procfs_device(dev_t dev);
/* Whether supervisor descriptor fd, of device dev, is on a procfs: views_procfs_device, or
 * for a device not met yet the descriptor's file system (then noted). */
bool views_on_procfs(int fd, dev_t dev);
/* The inode number to give files_virtual_ino for the file of supervisor descriptor fd
 * (device dev, inode ino): ino, or on a procfs (whose numbers the host decides) a key made
 * from its path in the group's /proc. views_proc_entry_key: the same key for entry `name`
 * of procfs directory dir (its path as views_proc_identity reads it). */
uint64_t views_proc_identity(int fd, uint64_t dev, uint64_t ino);
uint64_t views_proc_entry_key(const char *dir, const char *name);
/* t's path (at tracee address addr, from dirfd) opened O_PATH in t itself, where /proc/self
 * names t: a supervisor descriptor, or -1. A symbolic link is followed unless nofollow. */
int views_open_name(struct task *t, int dirfd, uint64_t addr, bool nofollow);

#endif
