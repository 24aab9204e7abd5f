/* The kernel's views of the machine, as the group may open them.
 *
 * /proc and /sys are full of figures the host makes: memory and CPU counters, interrupt
 * and I/O counts, pressure, scheduler statistics, other users' sessions. None of them is a
 * function of the group's own state, so none may reach it. Every open that lands on a
 * kernel view (procfs, sysfs, cgroup, debugfs, tracefs, securityfs, bpf, pstore, efivarfs)
 * is judged at its exit, whatever path led there (a symlink like /etc/mtab, a relative
 * path, a procfs the program mounts itself): a whitelist of procfs files whose content is
 * the group's own (or that sys_proc.c replaces by a rewritten snapshot) stays open;
 * everything else is absent (ENOENT), as in a restricted container, and other processes'
 * /proc/PID files are refused (EACCES). Listings, stat and access agree (see "names").
 * The virtual global files (cpuinfo, meminfo, stat, uptime ...) and the group's small
 * /sys are files detrun mounts over the real ones at launch (launch.c): they are not on a
 * kernel view, so no open of them stops here. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/magic.h>

#include "engine/launch.h"
#include "engine/remote.h"
#include "handlers/sys_common.h"
#include "handlers/sys_files.h"
#include "handlers/sys_reach.h"
#include "handlers/sys_kernfs.h"
#include "recorder/fingerprint.h"
#include "engine/tracer.h"
#include "handlers/sys_proc.h"
#include "syscalls/syscall_table.h"

/* Files of /proc/PID and /proc/PID/task/TID of a member the group may open: its own arguments,
 * environment, limits and layout (stat, statm, status, maps, mountinfo and fdinfo are
 * rewritten at read, sys_proc.c). Absent, among others: io, sched, schedstat, smaps,
 * smaps_rollup, numa_maps, pagemap, wchan, stack, syscall, oom_score, autogroup,
 * loginuid, sessionid, cgroup, cpuset, mountstats, arch_status, timers, net, attr. */
static const char *const process_files[] = {
	"task",
	"cmdline",
	"comm",
	"environ",
	"stat",
	"statm",
	"status",
	"maps",
	"mountinfo",
	"mounts",
	"limits",
	"personality",
	"auxv",
	"oom_score_adj",
	"oom_adj",
	"timerslack_ns",
	"coredump_filter",
	"uid_map",
	"gid_map",
	"setgroups",
	"projid_map",
	"mem",
	"clear_refs",
	"fd",
	"fdinfo",
	"ns",
	"map_files",
	"children",
};

/* Global procfs files the group may open: settings of the machine or of the group's own
 * namespaces (IPC, UTS), and the random views sys_proc.c answers from the seed. The
 * virtual cpuinfo, meminfo, stat, uptime, loadavg, version and osrelease are mounted over
 * the real ones, which are absent like every other global file. */
static const char *const global_files[] = {
	"/filesystems",
	"/sys/kernel/hostname",
	"/sys/kernel/domainname",
	"/sys/kernel/ostype",
	"/sys/kernel/pid_max",
	"/sys/kernel/ngroups_max",
	"/sys/kernel/cap_last_cap",
	"/sys/kernel/overflowuid",
	"/sys/kernel/overflowgid",
	"/sys/kernel/perf_event_paranoid",
	"/sys/kernel/random/uuid",
	"/sys/kernel/random/boot_id",
	"/sys/kernel/shmmax",
	"/sys/kernel/shmall",
	"/sys/kernel/shmmni",
	"/sys/kernel/msgmax",
	"/sys/kernel/msgmnb",
	"/sys/kernel/msgmni",
	"/sys/kernel/sem",
	"/sys/vm/overcommit_memory",
	"/sys/vm/max_map_count",
	"/sys/fs/nr_open",
	"/sys/fs/pipe-max-size",
	"/sys/fs/inotify/max_user_watches",
	"/sys/fs/inotify/max_user_instances",
	"/sys/fs/inotify/max_queued_events",
	"/sys/fs/mqueue/msg_max",
	"/sys/fs/mqueue/msgsize_max",
	"/sys/fs/mqueue/queues_max",
	"/sys/net/core/somaxconn",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Skips "/DIGITS" at *p: true (and *p moved past it) if there is one. */
static bool skip_number(const char **p)
{
	const char *s = *p;
	if (*s != '/' || s[1] < '0' || s[1] > '9')
		return false;
	s++;
	while (*s >= '0' && *s <= '9')
		s++;
	if (*s && *s != '/')
		return false;
	*p = s;
	return true;
}

/* rel is the path inside a procfs ("/", "/meminfo", "/12/task/12/stat"): 0 if the group
 * may open it, -EACCES for another process's files (the reaper, or without a PID namespace
 * any process outside the group: there, as for its mem or fd/, the kernel's own answer),
 * -ENOENT for a file that is absent. */
static int procfs_refusal(const char *rel)
{
	const char *p = rel;
	if (skip_number(&p)) {
		if (!reach_is_member(atoi(rel + 1)))
			return -EACCES;
		const char *process = p;
		if (strncmp(p, "/task", 5) || (p += 5, !skip_number(&p)))
			p = process; /* not a thread's directory: a file of the process */
		if (!*p)
			return 0;
		const char *leaf = p + 1;
		if (!strncmp(leaf, "fdinfo/", 7))
			return leaf[7] && !leaf[7 + strspn(leaf + 7, "0123456789")] ? 0 : -ENOENT;
		for (size_t i = 0; i < COUNT(process_files); i++)
			if (!strcmp(leaf, process_files[i]))
				return 0;
		return -ENOENT;
	}
	if (!strcmp(rel, "/"))
		return 0;
	size_t len = strlen(rel);
	for (size_t i = 0; i < COUNT(global_files); i++)
		if (!strncmp(global_files[i], rel, len) &&
		    (global_files[i][len] == 0 || global_files[i][len] == '/'))
			return 0; /* the file, or a directory on the way to it */
	return -ENOENT;
}

/* The root (inside its file system) and the mount point of t's mount `id`: 0, or -1. */
static int mount_of(struct task *t, int id, char *root, char *point, size_t size)
{
	char path[64], line[4096], fmt[64];
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", t->tid);
	snprintf(fmt, sizeof(fmt), "%%d %%*d %%*s %%%zus %%%zus", size - 1, size - 1);
	FILE *f = fopen(path, "re");
	int found = -1, mid;
	while (f && found && fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &mid, root, point) == 3 && mid == id)
			found = 0;
	if (f)
		fclose(f);
	unescape_mount_point(root);
	unescape_mount_point(point);
	return found;
}

/* The path of supervisor descriptor fd inside its file system ("/12/stat" for t's
 * /proc/12/stat, wherever that procfs is mounted): 0, or -1 when it cannot be told. */
static int path_in_fs(struct task *t, int fd, char *rel, size_t size)
{
	char link[64], path[PATH_MAX], root[PATH_MAX], point[PATH_MAX];
	int id;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0 || !fdinfo_scan(0, fd, "mnt_id: %d", &id) ||
	    mount_of(t, id, root, point, sizeof(root)))
		return -1;
	path[n] = 0;
	size_t plen = strcmp(point, "/") ? strlen(point) : 0;
	if (strncmp(path, point, plen) || (path[plen] && path[plen] != '/'))
		return -1;
	const char *tail = path + plen;
	snprintf(rel, size, "%s%s", strcmp(root, "/") ? root : "", *tail ? tail : "");
	if (!*rel)
		snprintf(rel, size, "/");
	return 0;
}

static bool kernel_view(int fd, bool *procfs)
{
	struct statfs fs;
	if (fstatfs(fd, &fs))
		return false;
	*procfs = fs.f_type == PROC_SUPER_MAGIC;
	return synthetic_filesystem(fd);
}

/* 0 if t may open supervisor descriptor fd's file, or the error its open gets. */
static int open_verdict(struct task *t, int fd)
{
	bool procfs = false;
	char rel[PATH_MAX];
	if (!kernel_view(fd, &procfs))
		return 0;
	return !procfs || path_in_fs(t, fd, rel, sizeof(rel)) ? -ENOENT : procfs_refusal(rel);
}

int views_open_verdict(struct task *t, int fd)
{
	return open_verdict(t, fd);
}

bool views_listing_judged(struct task *t, int dir, char *rel, size_t size)
{
	struct statfs fs;
	return fstatfs(dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC &&
	       path_in_fs(t, dir, rel, size) == 0;
}

/* The target of symbolic link `name` in procfs directory dir, opened O_PATH as t would
 * reach it: self and thread-self name t, not detrun (which the group's procfs does not
 * show). A descriptor, or -1. */
static int open_link_target(struct task *t, int dir, const char *name)
{
	char text[PATH_MAX], target[PATH_MAX + 64];
	ssize_t n = readlinkat(dir, name, text, sizeof(text) - 1);
	if (n <= 0)
		return -1;
	text[n] = 0;
	const char *rest = NULL;
	if (!strncmp(text, "self", 4) && (!text[4] || text[4] == '/'))
		rest = text + 4, snprintf(target, sizeof(target), "%d%s", t->proc->ns_tgid, rest);
	else if (!strncmp(text, "thread-self", 11) && (!text[11] || text[11] == '/'))
		rest = text + 11,
		snprintf(target, sizeof(target), "%d/task/%d%s", t->proc->ns_tgid, t->ns_tid, rest);
	return openat(dir, rest ? target : name, O_PATH | O_CLOEXEC);
}

/* A symbolic link (self, thread-self, mounts, net, fd/N, ns/X) is judged by where it
 * leads, as an open through it is; a file mounted over a procfs one (detrun's virtual
 * meminfo, cpuinfo ...) is not on the kernel view. */
bool views_entry_absent(struct task *t, int dir, dev_t dir_dev, const char *rel, const char *name,
			unsigned char type)
{
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	if (type == DT_LNK) {
		int fd = open_link_target(t, dir, name);
		bool absent = fd >= 0 && open_verdict(t, fd) == -ENOENT;
		if (fd >= 0)
			close(fd);
		return absent;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", strcmp(rel, "/") ? rel : "", name);
	struct stat st;
	return procfs_refusal(path) == -ENOENT &&
	       (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev == dir_dev);
}

bool views_refuse_open(struct task *t, int tfd)
{
	int fd = remote_dup_fd(t, tfd);
	if (fd < 0)
		return false;
	int err = open_verdict(t, fd);
	if (!err)
		err = proc_view_substitute(t, tfd, fd);
	close(fd);
	if (!err)
		return false;
	remote_syscall(t, __NR_close, (uint64_t)tfd, 0, 0, 0, 0, 0);
	syscall_set_result(t, err);
	return true;
}

/* ---- names ----------------------------------------------------------------------------------
 *
 * A stat or access of a name agrees with what an open of it gets: an absent /proc file is
 * not there for them either. Only the devices of procfs mounts need a look; which ones
 * those are is learnt at the first name judged on each anonymous device. */

static struct {
	dev_t dev;
	bool procfs;
} devices[32];
static unsigned n_devices;

int views_procfs_device(dev_t dev)
{
	if (major(dev) != 0)
		return 0; /* a procfs has an anonymous device */
	for (unsigned i = 0; i < n_devices && i < 32; i++)
		if (devices[i].dev == dev)
			return devices[i].procfs;
	return -1;
}

static void note_device(dev_t dev, bool procfs)
{
	if (views_procfs_device(dev) < 0)
		devices[n_devices++ % 32] = (typeof(devices[0])){ dev, procfs };
}

bool views_on_procfs(int fd, dev_t dev)
{
	int known = views_procfs_device(dev);
	struct statfs fs;
	if (known >= 0 || fstatfs(fd, &fs))
		return known > 0;
	note_device(dev, fs.f_type == PROC_SUPER_MAGIC);
	return fs.f_type == PROC_SUPER_MAGIC;
}

/* procfs numbers an inode when a name is looked up and forgets it when the dentry cache lets
 * it go (memory pressure, other processes reading /proc, drop_caches), so one file shows
 * several numbers and the numbers' order of first sighting is the host's. A procfs file's
 * identity is its path in the group's /proc, whose pid namespace numbers processes as the
 * schedule does: its virtual number is kept under a hash of that path, top bit set so that
 * no real (32-bit) procfs number is taken for one. */
static uint64_t path_key(const char *dir, size_t dir_len, const char *name)
{
	uint64_t h = fnv64(FNV64_INIT, dir, dir_len);
	if (name && strcmp(name, ".")) {
		if (dir_len != 1 || dir[0] != '/')
			h = fnv64(h, "/", 1);
		h = fnv64(h, name, strlen(name));
	}
	return h | 1ULL << 63;
}

uint64_t views_proc_identity(int fd, uint64_t dev, uint64_t ino)
{
	char link[64], path[PATH_MAX];
	if (fd < 0 || !views_on_procfs(fd, dev))
		return ino;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path));
	return n > 0 && n < (ssize_t)sizeof(path) ? path_key(path, (size_t)n, NULL) : ino;
}

uint64_t views_proc_entry_key(const char *dir, const char *name)
{
	size_t len = strlen(dir);
	if (strcmp(name, ".."))
		return path_key(dir, len, name);
	const char *slash = strrchr(dir, '/');
	return path_key(dir, slash && slash > dir ? (size_t)(slash - dir) : 1, NULL);
}

int views_open_name(struct task *t, int dirfd, uint64_t addr, bool nofollow)
{
	long tfd = remote_syscall(t, __NR_openat, (uint64_t)(int64_t)dirfd, addr,
				  O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0), 0, 0, 0);
	if (tfd < 0)
		return -1;
	int fd = remote_dup_fd(t, (int)tfd);
	remote_syscall(t, __NR_close, (uint64_t)tfd, 0, 0, 0, 0, 0);
	return fd;
}

/* A symbolic link (self, net) is judged by where it leads, as a listing does. */
int views_name_verdict(struct task *t, int dirfd, uint64_t addr)
{
	int fd = views_open_name(t, dirfd, addr, true);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		close(fd);
		fd = views_open_name(t, dirfd, addr, false);
	}
	struct statfs fs;
	if (fd < 0 || fstatfs(fd, &fs) || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	note_device(st.st_dev, fs.f_type == PROC_SUPER_MAGIC);
	int err = fs.f_type == PROC_SUPER_MAGIC ? open_verdict(t, fd) : 0;
	close(fd);
	return err;
}

/* Implements access(2), faccessat(2), faccessat2(2): a name an open finds absent is
 * absent (ENOENT), and another process's /proc files are refused (EACCES) unless only
 * their existence is asked. A name outside a procfs costs one look here. */
void sys_access(struct task *t)
{
	bool at = t->syscall_nr != __NR_access;
	int dirfd = at ? (int)syscall_arg(t, 0) : AT_FDCWD;
	uint64_t addr = syscall_arg(t, at ? 1 : 0);
	int mode = (int)syscall_arg(t, at ? 2 : 1);
	bool follow = !(t->syscall_nr == __NR_faccessat2 &&
			(syscall_arg(t, 3) & AT_SYMLINK_NOFOLLOW));
	struct stat st;
	if (stat_path(t, dirfd, addr, false, follow, &st) == 0 &&
	    views_procfs_device(st.st_dev) == 0)
		return;
	int err = views_name_verdict(t, dirfd, addr);
	if (err == -ENOENT || (err == -EACCES && mode != F_OK)) {
		syscall_emulate(t, err);
		return;
	}
	/* the look injected calls: the program's own one no longer runs from this stop */
	syscall_emulate(t, remote_syscall(t, t->syscall_nr, syscall_arg(t, 0), syscall_arg(t, 1),
					  syscall_arg(t, 2), syscall_arg(t, 3), 0, 0));
}

static void handle_opened(struct task *t)
{
	int64_t fd = syscall_result(t);
	if (fd >= 0)
		views_refuse_open(t, (int)fd);
}

/* Implements open_by_handle_at(2): a handle of a cgroup (kernfs) file opens it without a
 * path, so it is judged where it lands like every open. */
void sys_open_by_handle(struct task *t)
{
	tracer_want_exit(t, handle_opened);
}
