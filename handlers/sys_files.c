/* Files as the group sees them: inode and device numbers, timestamps, directory order.
 *
 * The files a run starts with are its input, and their metadata is left as it is. What the
 * run changes must not carry the real clock or the filesystem's allocator into the output:
 *   - inode and device numbers are renumbered in order of first sight (a bijection, so
 *     equality tests and hard links still work);
 *   - a file the group writes, creates, truncates, renames or whose directory it changes is
 *     stamped with the virtual time of that change; a file whose real times show a change
 *     detrun did not see (an mmap write, a chmod) is stamped when the group first looks;
 *   - directories are listed in name order, across the whole directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include <linux/magic.h>
#include <stdio.h>
#include <sys/vfs.h>
#include <sys/statfs.h>

#ifndef STATX_MNT_ID_UNIQUE /* Linux 6.8 */
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

#include "recorder/fingerprint.h"
#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_external.h"
#include "handlers/sys_files.h"
#include "handlers/sys_proc.h"
#include "handlers/sys_kernfs.h"
#include "syscalls/syscall_table.h"

/* ---- virtual identities and times ------------------------------------------------------- */

struct vfile {
	uint64_t dev, ino, vino;
	bool stamped, created;
	bool unlinked; /* its last name was removed: only a descriptor can still reach it */
	int64_t atime, mtime, ctime, btime;
	struct vfile *next;
};

enum {
	BUCKETS = 4096,
	MAX_DEVS = 256
};
static struct vfile *buckets[BUCKETS];
static uint64_t next_vino = 2;
static uint64_t real_devs[MAX_DEVS];
static int n_devs;
static int64_t start_real_ns;

void files_init(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	/* A file changed before this moment shows its own times however soon the run starts
	 * (a timestamp is never later than the real clock when it was taken); one whose times
	 * are later was changed during the run. A change the group makes unseen (an mmap
	 * write) in the first clock tick may go unnoticed: filesystem clocks lag a tick. */
	start_real_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct vfile **vfile_slot(uint64_t dev, uint64_t ino)
{
	struct vfile **pp = &buckets[(size_t)((dev * 31 + ino) % BUCKETS)];
	while (*pp && ((*pp)->dev != dev || (*pp)->ino != ino))
		pp = &(*pp)->next;
	return pp;
}

/* The inode's last name is gone, so the kernel may give its number to the next new file
 * (or not, as other activity on the machine decides). A descriptor still open on it keeps
 * the inode, and so its number, alive: it keeps its virtual number too, and only a linked
 * inode met under the same number is a new file. nlink is the inode's link count where the
 * caller knows it, NLINK_UNKNOWN otherwise. */
static struct vfile *vfile_of(uint64_t dev, uint64_t ino, long nlink)
{
	struct vfile **pp = vfile_slot(dev, ino);
	if (*pp && (*pp)->unlinked && nlink > 0) {
		struct vfile *gone = *pp;
		*pp = gone->next;
		free(gone);
	}
	if (*pp)
		return *pp;
	struct vfile *v = calloc(1, sizeof(*v));
	if (!v)
		abort();
	*v = (struct vfile){ .dev = dev, .ino = ino, .vino = next_vino++ };
	*pp = v;
	return v;
}

static uint64_t virtual_dev(uint64_t dev)
{
	dev = files_view_real_dev(dev);
	for (int i = 0; i < n_devs; i++)
		if (real_devs[i] == dev)
			return makedev(0, 200 + i);
	if (n_devs == MAX_DEVS)
		return dev;
	real_devs[n_devs] = dev;
	return makedev(0, 200 + n_devs++);
}

static void unlinked(uint64_t dev, uint64_t ino)
{
	struct vfile *v = *vfile_slot(dev, ino);
	if (v)
		v->unlinked = true;
}

uint64_t files_virtual_ino(uint64_t dev, uint64_t ino, long nlink)
{
	return vfile_of(dev, ino, nlink)->vino;
}

uint64_t files_virtual_dev(uint64_t dev)
{
	return virtual_dev(dev);
}

static void stamp(struct vfile *v, bool created)
{
	int64_t now = vclock_now() + vclock_epoch_ns();
	v->stamped = true;
	v->atime = v->mtime = v->ctime = now;
	if (created && !v->created) {
		v->created = true;
		v->btime = now;
	}
}

static void touched(const struct stat *st, bool created)
{
	stamp(vfile_of(st->st_dev, st->st_ino, (long)st->st_nlink), created);
}

/* Virtual wall-clock time at the start: no input file may look newer than the run. */
static int64_t clamp_to_epoch(int64_t ns)
{
	int64_t start = vclock_epoch_ns() + VCLOCK_BOOT_NS;
	return ns < start ? ns : start;
}

/* The times a stat shows. A file the group changed (or that changed during the run)
 * carries virtual times; any other file shows its own modification, change and birth
 * times, no later than the virtual start, and its modification time as access time
 * (reading a file moves its real access time: a replay would find the recording's reads
 * there). So what a run sees of a file it did not change depends on the file alone. */
static void virtual_times(struct vfile *v, int64_t *atime, int64_t *mtime, int64_t *ctime,
			  int64_t *btime)
{
	if (!v->stamped && (*mtime > start_real_ns || *ctime > start_real_ns))
		stamp(v, btime && *btime > start_real_ns);
	if (v->stamped) {
		*atime = v->atime, *mtime = v->mtime, *ctime = v->ctime;
		if (btime && v->created)
			*btime = v->btime;
		return;
	}
	*mtime = clamp_to_epoch(*mtime);
	*ctime = clamp_to_epoch(*ctime);
	*atime = *mtime;
	if (btime)
		*btime = clamp_to_epoch(*btime);
}

/* stat(2) of a tracee path, or of its parent directory. */
int stat_path(struct task *t, int dirfd, uint64_t addr, bool parent, bool follow, struct stat *st)
{
	char path[PATH_MAX];
	if (tracee_path(t, addr, path, sizeof(path)))
		return -EFAULT;
	int base = tracee_path_base(t, dirfd, path);
	if (base < 0)
		return -EBADF;
	char *rel = path;
	while (*rel == '/')
		rel++;
	if (parent) {
		size_t len = strlen(rel);
		while (len > 1 && rel[len - 1] == '/')
			rel[--len] = 0;
		char *slash = strrchr(rel, '/');
		if (slash)
			*slash = 0;
		else
			rel = ".";
	}
	int err = fstatat(base, *rel ? rel : ".", st,
			  (follow ? 0 : AT_SYMLINK_NOFOLLOW) | (*rel ? 0 : AT_EMPTY_PATH));
	close(base);
	return err ? -errno : 0;
}

static int stat_fd(struct task *t, int tfd, struct stat *st)
{
	int fd = remote_dup_fd(t, tfd);
	if (fd < 0)
		return fd;
	int err = fstat(fd, st) ? -errno : 0;
	close(fd);
	return err;
}

void files_written_fd(int fd, const struct stat *st)
{
	if (S_ISREG(st->st_mode))
		stamp(vfile_of(st->st_dev, views_proc_identity(fd, st->st_dev, st->st_ino),
			       (long)st->st_nlink),
		      false);
}

/* ---- stat, statx -------------------------------------------------------------------------------- */

/* fstat, or newfstatat of "" with AT_EMPTY_PATH (how glibc implements fstat). */
static int stat_of_descriptor(struct task *t)
{
	if (t->syscall_nr == __NR_fstat)
		return (int)syscall_arg(t, 0);
	char path[1];
	if (t->syscall_nr != __NR_newfstatat || !(syscall_arg(t, 3) & AT_EMPTY_PATH) ||
	    remote_read(t, REMOTE(syscall_arg(t, 1)), path, 1) || path[0])
		return -1;
	return (int)syscall_arg(t, 0);
}

/* statx of "" (or NULL) with AT_EMPTY_PATH: the descriptor, or -1. */
static int statx_of_descriptor(struct task *t)
{
	char path[1] = { 0 };
	uint64_t at = syscall_arg(t, 1);
	if (!(syscall_arg(t, 2) & AT_EMPTY_PATH) ||
	    (at && (remote_read(t, REMOTE(at), path, 1) || path[0])))
		return -1;
	return (int)syscall_arg(t, 0);
}

/* The path form of a stat call (not fstat, not "" with AT_EMPTY_PATH): its directory and
 * path arguments, or false. */
static bool stat_path_args(struct task *t, int *dirfd, uint64_t *addr)
{
	switch (t->syscall_nr) {
	case __NR_stat:
	case __NR_lstat:
		*dirfd = AT_FDCWD, *addr = syscall_arg(t, 0);
		return true;
	case __NR_newfstatat:
		*dirfd = (int)syscall_arg(t, 0), *addr = syscall_arg(t, 1);
		return stat_of_descriptor(t) < 0;
	case __NR_statx:
		*dirfd = (int)syscall_arg(t, 0), *addr = syscall_arg(t, 1);
		return statx_of_descriptor(t) < 0;
	default:
		return false;
	}
}

/* At a successful stat's exit: true if an open of the name would find it absent: the call
 * then fails with ENOENT, and the `size` bytes the kernel wrote at out are cleared. */
static bool stat_of_absent_name(struct task *t, dev_t dev, uint64_t out, size_t size)
{
	int dirfd;
	uint64_t addr;
	if (views_procfs_device(dev) == 0 || !stat_path_args(t, &dirfd, &addr) ||
	    views_name_verdict(t, dirfd, addr) != -ENOENT)
		return false;
	char zero[sizeof(struct statx) > sizeof(struct stat) ? sizeof(struct statx)
							     : sizeof(struct stat)] = { 0 };
	remote_write(t, REMOTE(out), zero, size);
	syscall_set_result(t, -ENOENT);
	return true;
}

/* The key of the virtual number of the file a stat call of t has just described (see
 * views_proc_identity): view, a supervisor descriptor of the /proc view's procfs file, or -1;
 * tfd, the descriptor stat'ed, or -1 for a path. A file on a device known not to be a
 * procfs costs nothing; another, a look at the file the descriptor or path names. */
static uint64_t stat_key(struct task *t, int view, int tfd, uint64_t dev, uint64_t ino,
			 bool nofollow)
{
	int dirfd;
	uint64_t addr;
	if (view >= 0)
		return views_proc_identity(view, dev, ino);
	if (views_procfs_device(dev) == 0)
		return ino;
	int fd = tfd >= 0                           ? remote_dup_fd(t, tfd)
		 : stat_path_args(t, &dirfd, &addr) ? views_open_name(t, dirfd, addr, nofollow)
						    : -1;
	uint64_t key = views_proc_identity(fd, dev, ino);
	if (fd >= 0)
		close(fd);
	return key;
}

/* A directory of a replay's view shows the size of the one below it (sys_view.c). */
static void view_directory(struct task *t, int tfd, bool nofollow, uint64_t dev, int64_t *size,
			   int64_t *blocks)
{
	int dirfd;
	uint64_t addr;
	if (!files_view_device(dev, &(bool){ false }))
		return;
	int fd = tfd >= 0                           ? remote_dup_fd(t, tfd)
		 : stat_path_args(t, &dirfd, &addr) ? views_open_name(t, dirfd, addr, nofollow)
						    : -1;
	if (fd >= 0)
		files_view_directory(fd, dev, size, blocks);
	if (fd >= 0)
		close(fd);
}

static void stat_done(struct task *t)
{
	if (syscall_result(t) != 0)
		return;
	uint64_t addr = syscall_arg(t, t->syscall_nr == __NR_newfstatat ? 2 : 1);
	struct stat st;
	if (remote_read(t, REMOTE(addr), &st, sizeof(st)) ||
	    stat_of_absent_name(t, st.st_dev, addr, sizeof(st)))
		return;
	/* a /proc view's snapshot shows the view's procfs file, as natively */
	int tfd = stat_of_descriptor(t);
	int view = proc_view_kernel_file(t, tfd, st.st_mode, st.st_nlink);
	if (view >= 0)
		fstat(view, &st);
	bool nofollow = t->syscall_nr == __NR_lstat || (t->syscall_nr == __NR_newfstatat &&
							(syscall_arg(t, 3) & AT_SYMLINK_NOFOLLOW));
	uint64_t key = stat_key(t, view, tfd, st.st_dev, st.st_ino, nofollow);
	if (view >= 0)
		close(view);
	struct vfile *v = vfile_of(st.st_dev, key, (long)st.st_nlink);
	if (S_ISDIR(st.st_mode) && view < 0)
		view_directory(t, tfd, nofollow, st.st_dev, &st.st_size, &st.st_blocks);
	int64_t a = timespec_to_ns(st.st_atim), m = timespec_to_ns(st.st_mtim),
		c = timespec_to_ns(st.st_ctim);
	virtual_times(v, &a, &m, &c, NULL);
	st.st_atim = ns_to_timespec(a), st.st_mtim = ns_to_timespec(m);
	st.st_ctim = ns_to_timespec(c);
	st.st_ino = v->vino;
	st.st_dev = virtual_dev(st.st_dev);
	if (remote_write(t, REMOTE(addr), &st, sizeof(st))) /* never the real numbers */
		syscall_set_result(t, -EFAULT);
}

/* Implements stat(2), lstat(2), fstat(2), newfstatat(2): the call runs, the result is
 * renumbered and restamped. */
void sys_stat(struct task *t)
{
	int fd = shim_intercepts() ? stat_of_descriptor(t) : -1;
	if (fd >= 0 && external_fd_call(t, fd, 0))
		return;
	tracer_want_exit(t, stat_done);
}

static int64_t statx_ns(const struct statx_timestamp *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static void set_statx_ns(struct statx_timestamp *ts, int64_t ns)
{
	ts->tv_sec = ns / 1000000000LL;
	ts->tv_nsec = (uint32_t)(ns % 1000000000LL);
}

static void statx_done(struct task *t)
{
	if (syscall_result(t) != 0)
		return;
	uint64_t addr = syscall_arg(t, 4);
	struct statx sx;
	if (remote_read(t, REMOTE(addr), &sx, sizeof(sx)) ||
	    stat_of_absent_name(t, makedev(sx.stx_dev_major, sx.stx_dev_minor), addr, sizeof(sx)))
		return;
	int view = proc_view_kernel_file(t, statx_of_descriptor(t), sx.stx_mode,
					 (sx.stx_mask & STATX_NLINK) ? sx.stx_nlink : 1);
	if (view >= 0)
		statx(view, "", AT_EMPTY_PATH, (unsigned)syscall_arg(t, 3), &sx);
	uint64_t dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	uint64_t key = stat_key(t, view, statx_of_descriptor(t), dev, sx.stx_ino,
				syscall_arg(t, 2) & AT_SYMLINK_NOFOLLOW);
	if (view >= 0)
		close(view);
	struct vfile *v = vfile_of(dev, key,
				   (sx.stx_mask & STATX_NLINK) ? (long)sx.stx_nlink
							       : NLINK_UNKNOWN);
	if (S_ISDIR(sx.stx_mode) && view < 0)
		view_directory(t, statx_of_descriptor(t), syscall_arg(t, 2) & AT_SYMLINK_NOFOLLOW,
			       dev, (int64_t *)&sx.stx_size, (int64_t *)&sx.stx_blocks);
	int64_t a = statx_ns(&sx.stx_atime), m = statx_ns(&sx.stx_mtime),
		c = statx_ns(&sx.stx_ctime), b = statx_ns(&sx.stx_btime);
	virtual_times(v, &a, &m, &c, (sx.stx_mask & STATX_BTIME) ? &b : NULL);
	if (!v->created && b > start_real_ns)
		b = m;
	set_statx_ns(&sx.stx_atime, a), set_statx_ns(&sx.stx_mtime, m);
	set_statx_ns(&sx.stx_ctime, c), set_statx_ns(&sx.stx_btime, b);
	sx.stx_ino = v->vino;
	uint64_t vdev = virtual_dev(dev);
	sx.stx_dev_major = major(vdev), sx.stx_dev_minor = minor(vdev);
	if (sx.stx_mask & (STATX_MNT_ID | STATX_MNT_ID_UNIQUE))
		sx.stx_mnt_id = proc_virtual_mount_id(sx.stx_mnt_id,
						      sx.stx_mask & STATX_MNT_ID_UNIQUE);
	if (remote_write(t, REMOTE(addr), &sx, sizeof(sx))) /* never the real numbers */
		syscall_set_result(t, -EFAULT);
}

/* Implements statx(2). */
void sys_statx(struct task *t)
{
	tracer_want_exit(t, statx_done);
}

/* ---- calls that change files -------------------------------------------------------------------- */

/* Implements pwrite64(2), pwritev(2), pwritev2(2), ftruncate(2), fallocate(2): the file
 * written is stamped. */
void sys_file_write_at(struct task *t)
{
	files_written(t, (int)syscall_arg(t, 0));
	external_output_call(t, (int)syscall_arg(t, 0));
}

/* Implements copy_file_range(2) and sendfile(2) stamping: the output descriptor. */
void sys_file_copy(struct task *t)
{
	if (t->syscall_nr == __NR_copy_file_range && proc_view_unspliceable(t, 0))
		return;
	if (t->syscall_nr == __NR_sendfile && external_fd_call(t, (int)syscall_arg(t, 0), 0))
		return;
	files_written(t, (int)syscall_arg(t, t->syscall_nr == __NR_sendfile ? 0 : 2));
}

/* Implements truncate(2). */
void sys_truncate(struct task *t)
{
	files_changing(t, AT_FDCWD, syscall_arg(t, 0), true);
	struct stat st;
	if (stat_path(t, AT_FDCWD, syscall_arg(t, 0), false, true, &st) == 0)
		touched(&st, false);
}

static uint64_t open_flags(struct task *t)
{
	switch (t->syscall_nr) {
	case __NR_open:
		return syscall_arg(t, 1);
	case __NR_creat:
		return O_CREAT | O_TRUNC | O_WRONLY;
	case __NR_openat2: {
		uint64_t flags = 0;
		remote_read(t, REMOTE(syscall_arg(t, 2)), &flags, sizeof(flags));
		return flags;
	}
	default:
		return syscall_arg(t, 2);
	}
}

static void fingerprint_opened(struct task *t, int tfd);

/* The path t's open names, and the directory it is relative to, where its row says. */
static uint64_t open_path(struct task *t, int *dirfd)
{
	const struct syscall_entry *e = syscall_lookup(t->syscall_nr);
	int path = syscall_path_arg(e), at = syscall_dirfd_arg(e, path);
	*dirfd = at < 0 ? AT_FDCWD : (int)syscall_arg(t, at);
	return syscall_arg(t, path);
}

static void open_done(struct task *t)
{
	int64_t fd = syscall_result(t);
	bool created = t->exit.open.created;
	struct stat st;
	if (fd < 0 || views_refuse_open(t, (int)fd) || stat_fd(t, (int)fd, &st) ||
	    !S_ISREG(st.st_mode))
		return;
	uint64_t flags = t->exit.open.flags;
	if (created || (flags & O_TRUNC))
		touched(&st, created);
	else if ((flags & O_ACCMODE) != O_WRONLY) /* O_CREAT of a file that was there */
		fingerprint_opened(t, (int)fd);
	int dirfd;
	uint64_t path = open_path(t, &dirfd);
	if (created && stat_path(t, dirfd, path, true, true, &st) == 0)
		touched(&st, false);
}

/* Kernel views whose content is made when read: not part of a run's starting state. The
 * JVM reads cgroup v1 files (memory.stat) at every start: their figures change by the
 * moment, so fingerprinting them would make every recording unreplayable. */
bool synthetic_filesystem(int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs))
		return false;
	switch (fs.f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case BPF_FS_MAGIC:
	case PSTOREFS_MAGIC:
	case EFIVARFS_MAGIC:
		return true;
	default:
		return false;
	}
}

/* Files already fingerprinted, as they were then: opening one again unchanged (same size,
 * modification and change times) is not new input, and costs neither a hash nor a record.
 * The decision depends only on what the group did to the file, so replay makes it alike. */
static struct seen_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
} * seen_files;
static size_t n_seen_files, cap_seen_files;

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* True if st was fingerprinted before, unchanged; otherwise remembers it as it is now. */
static bool seen_unchanged(const struct stat *st)
{
	struct seen_file now = { st->st_dev, st->st_ino, st->st_size, st->st_mtim, st->st_ctim };
	for (size_t i = 0; i < n_seen_files; i++) {
		struct seen_file *f = &seen_files[i];
		if (f->dev != now.dev || f->ino != now.ino)
			continue;
		bool same = f->size == now.size && same_time(f->mtime, now.mtime) &&
			    same_time(f->ctime, now.ctime);
		*f = now;
		return same;
	}
	if (n_seen_files == cap_seen_files) {
		cap_seen_files = cap_seen_files ? 2 * cap_seen_files : 64;
		seen_files = realloc(seen_files, cap_seen_files * sizeof(*seen_files));
		if (!seen_files)
			abort();
	}
	seen_files[n_seen_files++] = now;
	return false;
}

/* A file the run reads is part of its starting state: the shim fingerprints it. */
/* Supervisor descriptor fd is a file t reads: the shim gets its fingerprint. */
static void fingerprint(struct task *t, int fd)
{
	struct stat st;
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	uint64_t hash, size;
	if (n > 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !synthetic_filesystem(fd) &&
	    !proc_view_snapshot(fd) && !seen_unchanged(&st) &&
	    fingerprint_fd(fd, &hash, &size) == 0) {
		path[n] = 0;
		shim_get()->file_opened(t, sched_now(), path, size, hash);
	}
}

static void fingerprint_opened(struct task *t, int tfd)
{
	if (tfd < 0 || !shim_get()->file_opened)
		return;
	int fd = remote_dup_fd(t, tfd);
	if (fd >= 0) {
		fingerprint(t, fd);
		close(fd);
	}
}

void files_executed(struct task *t)
{
	if (!shim_get()->file_opened)
		return;
	char exe[64];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", t->tid);
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		fingerprint(t, fd);
		close(fd);
	}
}

static void read_open_done(struct task *t)
{
	int64_t fd = syscall_result(t);
	if (fd < 0 || views_refuse_open(t, (int)fd))
		return;
	if (shim_get()->file_opened && (t->exit.open.flags & O_ACCMODE) != O_WRONLY)
		fingerprint_opened(t, (int)fd);
}

void open_target_lookup(struct task *t, struct open_target *o)
{
	*o = (struct open_target){ .resolved = false };
	uint64_t flags = open_flags(t);
	char path[PATH_MAX];
	int dirfd;
	if (t->syscall_nr == __NR_openat2 ||
	    tracee_path(t, open_path(t, &dirfd), path, sizeof(path)))
		return;
	int base = tracee_path_base(t, dirfd, path);
	if (base < 0)
		return;
	const char *rel = path + strspn(path, "/");
	int fd = openat(base, *rel ? rel : ".",
			O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW) | (*rel ? 0 : O_DIRECTORY));
	close(base);
	if (fd < 0)
		return;
	o->resolved = fstat(fd, &o->st) == 0;
	o->on_kernel_view = synthetic_filesystem(fd);
	close(fd);
}

void sys_open(struct task *t)
{
	struct open_target o;
	open_target_lookup(t, &o);
	sys_open_target(t, &o);
}

/* Every open stops, and only creating or truncating ones are stamped. Every open that may
 * land on /proc, /sys or another kernel view is judged at its exit by sys_kernfs.c, where
 * the kernel has resolved it: one whose path did not resolve here may (/proc/self names
 * detrun's own process, which the group's /proc does not show; openat2 resolves its own
 * way). An exit stop costs more than this look at every other open. */
void sys_open_target(struct task *t, const struct open_target *o)
{
	uint64_t flags = open_flags(t);
	t->exit.open.flags = flags;
	int dirfd;
	uint64_t path = open_path(t, &dirfd);
	files_open_changing(t, flags, dirfd, path);
	if (!(flags & (O_CREAT | O_TRUNC))) {
		if ((shim_get()->file_opened && (flags & O_ACCMODE) != O_WRONLY) || !o->resolved ||
		    o->on_kernel_view)
			tracer_want_exit(t, read_open_done);
		return;
	}
	struct stat st;
	t->exit.open.created = (flags & O_CREAT) &&
			       stat_path(t, dirfd, path, false, true, &st) == -ENOENT;
	tracer_want_exit(t, open_done);
}

/* stat(2) of path argument `path` (of its directory, links followed, with `parent`),
 * relative to the directory descriptor the row pairs with it. */
static int entry_stat(struct task *t, const struct syscall_entry *e, int path, bool parent,
		      struct stat *st)
{
	int dirfd = syscall_dirfd_arg(e, path);
	return stat_path(t, dirfd < 0 ? AT_FDCWD : (int)syscall_arg(t, dirfd), syscall_arg(t, path),
			 parent, parent, st);
}

/* Before an unlink, rmdir or rename: the inode the call may free (the entry removed, or
 * the one a rename replaces) if this is its last name. */
static void note_removed_inode(struct task *t, const struct syscall_entry *e,
			       const struct syscall_entries *c)
{
	t->exit.removal.frees = false;
	bool renames = c->moves_inode;
	if (c->creates ||
	    (renames && t->syscall_nr == __NR_renameat2 && (syscall_arg(t, 4) & RENAME_EXCHANGE)))
		return;
	struct stat st, from;
	if (entry_stat(t, e, c->path[c->n - 1], false, &st))
		return;
	if (renames && entry_stat(t, e, c->path[0], false, &from) == 0 &&
	    from.st_dev == st.st_dev && from.st_ino == st.st_ino)
		return; /* renamed onto another name of itself: nothing is freed */
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
		return;
	t->exit.removal.dev = st.st_dev;
	t->exit.removal.ino = st.st_ino;
	t->exit.removal.frees = true;
}

static void entry_changed(struct task *t)
{
	const struct syscall_entry *e = syscall_lookup(t->syscall_nr);
	struct syscall_entries c = syscall_entries(e);
	if (syscall_result(t) != 0 || !c.n)
		return;
	if (t->exit.removal.frees)
		unlinked(t->exit.removal.dev, t->exit.removal.ino);
	struct stat st;
	for (int i = 0; i < c.n; i++)
		if (entry_stat(t, e, c.path[i], true, &st) == 0)
			touched(&st, false);
	if ((c.creates || c.moves_inode) && entry_stat(t, e, c.path[c.n - 1], false, &st) == 0)
		touched(&st, c.new_inode);
}

/* Implements mkdir, mknod, rmdir, unlink, symlink, link, rename and their *at forms:
 * the directories changed (and a new entry) are stamped, and an inode freed gets a new
 * virtual number if its number comes back. The entries changed are the row's (kinds c,
 * r, l). */
void sys_dir_change(struct task *t)
{
	const struct syscall_entry *e = syscall_lookup(t->syscall_nr);
	struct syscall_entries c = syscall_entries(e);
	files_entries_changing(t, e, &c);
	if (c.n)
		note_removed_inode(t, e, &c);
	tracer_want_exit(t, entry_changed);
}

/* utimensat, utimes, utime, futimesat: explicit times are kept, "now" is virtual. */
static void utime_done(struct task *t)
{
	if (syscall_result(t) != 0)
		return;
	long nr = t->syscall_nr;
	bool at = nr == __NR_utimensat || nr == __NR_futimesat;
	int dirfd = at ? (int)syscall_arg(t, 0) : AT_FDCWD;
	uint64_t path = syscall_arg(t, at ? 1 : 0), times = syscall_arg(t, at ? 2 : 1);
	struct stat st;
	int err = path ? stat_path(t, dirfd, path, false,
				   !(nr == __NR_utimensat &&
				     (syscall_arg(t, 3) & AT_SYMLINK_NOFOLLOW)),
				   &st)
		       : stat_fd(t, dirfd, &st);
	if (err)
		return;
	struct vfile *v = vfile_of(st.st_dev, st.st_ino, (long)st.st_nlink);
	int64_t now = vclock_now() + vclock_epoch_ns();
	int64_t set[2] = { now, now };
	if (times) {
		if (nr == __NR_utimensat) {
			struct timespec ts[2];
			if (remote_read(t, REMOTE(times), ts, sizeof(ts)))
				return;
			for (int i = 0; i < 2; i++)
				set[i] = ts[i].tv_nsec == UTIME_NOW ? now
					 : ts[i].tv_nsec == UTIME_OMIT
						 ? (i ? timespec_to_ns(st.st_mtim)
						      : timespec_to_ns(st.st_atim))
						 : timespec_to_ns(ts[i]);
		} else if (nr == __NR_utime) {
			struct utimbuf ub;
			if (remote_read(t, REMOTE(times), &ub, sizeof(ub)))
				return;
			set[0] = ub.actime * 1000000000LL, set[1] = ub.modtime * 1000000000LL;
		} else {
			struct timeval tv[2];
			if (remote_read(t, REMOTE(times), tv, sizeof(tv)))
				return;
			for (int i = 0; i < 2; i++)
				set[i] = tv[i].tv_sec * 1000000000LL + tv[i].tv_usec * 1000LL;
		}
	}
	if (!v->stamped)
		stamp(v, false);
	v->atime = set[0], v->mtime = set[1], v->ctime = now;
}

/* Implements utimensat(2), utimes(2), utime(2), futimesat(2) stamping. */
void sys_utime(struct task *t)
{
	tracer_want_exit(t, utime_done);
}
