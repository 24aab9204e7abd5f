/* How the program gets a rewritten /proc view (sys_proc.c says what it holds): snapshots.
 *
 * A rewritten view must be the only text the program can read from its descriptor,
 * whatever the call: pread64 and preadv run without stopping (they are hot on regular
 * files), and a descriptor moves by dup, fork, SCM_RIGHTS and pidfd_getfd. So the
 * descriptor an open of a view gives is not the kernel's file but a memfd holding the
 * rewritten text (made at the open's exit, with the open's access mode and flags, at the
 * same number), and every read form, pread included, sees only those bytes. Its content is
 * refreshed where the kernel makes a seq_file's text anew, at a read that starts at offset
 * 0, when that read stops (read, readv, preadv2); a pread at 0 between such stops sees the
 * text of the last one, fixed at a point of the logical timeline like every other answer.
 * The memfd's name is the view's path, "detrun-view:/proc/12/stat": readlink of
 * /proc/PID/fd/N shows the path and fstat the procfs file, as natively. Nothing else is
 * kept: a name the program forges itself leads only to a view it may open anyway. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <unistd.h>

#include "engine/remote.h"
#include "handlers/sys_common.h"
#include "handlers/sys_kernfs.h"
#include "handlers/sys_proc.h"
#include "handlers/sys_proc_view.h"
#include "vkernel/report.h"

#define VIEW_MEMFD_PREFIX "detrun-view:"
#define MEMFD_NAME_MAX 249 /* NAME_MAX - strlen("memfd:"), mm/memfd.c */

/* Whether supervisor descriptor fd is a view's snapshot; the view's path in link. */
static bool snapshot_of(int fd, char *link, size_t size)
{
	static const char head[] = "/memfd:" VIEW_MEMFD_PREFIX, tail[] = " (deleted)";
	const size_t hl = sizeof(head) - 1, tl = sizeof(tail) - 1;
	struct statfs fs;
	if (fstatfs(fd, &fs) < 0 || fs.f_type != TMPFS_MAGIC)
		return false;
	char path[64], target[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n < (ssize_t)(hl + tl))
		return false;
	target[n] = 0;
	if (strncmp(target, head, hl) || strcmp(target + n - tl, tail))
		return false;
	snprintf(link, size, "%.*s", (int)((size_t)n - hl - tl), target + hl);
	return true;
}

/* The kernel's file of a snapshot's view, opened in t's root as an open of t would be and
 * judged the same way: a descriptor, or -1. */
static int view_reopen(struct task *t, const char *link, enum proc_view *view)
{
	char root[64], real[PATH_MAX];
	snprintf(root, sizeof(root), "/proc/%d/root", t->tid);
	int dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, dir, link, &how, sizeof(how));
	close(dir);
	if (fd < 0)
		return -1;
	*view = proc_view_of(fd, real, sizeof(real));
	if (*view == VIEW_NONE || views_open_verdict(t, fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Replaces the content of the memfd at `path` (a /proc/.../fd/N link) by text: 0 or -errno. */
static int snapshot_fill(const char *path, const struct view_text *text)
{
	int w = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (w < 0)
		return -errno;
	size_t done = 0;
	while (done < text->len) {
		ssize_t n = write(w, text->buf + done, text->len - done);
		if (n <= 0) {
			close(w);
			return n < 0 ? -errno : -EIO;
		}
		done += (size_t)n;
	}
	close(w);
	return 0;
}

/* The snapshots made lately and not read yet: the text made at the open serves their
 * first read, instead of being made again one event later (the usual open, read, close
 * of a view pays for one text, not two). A snapshot pushed out only costs that second
 * text. */
static struct {
	dev_t dev;
	ino_t ino;
} unread[16];
static unsigned n_unread;

static void made_unread(dev_t dev, ino_t ino)
{
	unread[n_unread++ % 16] = (typeof(unread[0])){ dev, ino };
}

/* Whether this is the first read of a snapshot made lately (it is then read). */
static bool first_read(dev_t dev, ino_t ino)
{
	for (unsigned i = 0; i < 16 && i < n_unread; i++)
		if (unread[i].dev == dev && unread[i].ino == ino) {
			unread[i].ino = 0;
			return true;
		}
	return false;
}

/* Puts at t's descriptor tfd a read-only open of its memfd `memfd` (of /proc/self/fd/M, as
 * the program could make one), with the status flags `flags` of the open it stands for:
 * tfd is closed first, so that the open takes that number as the lowest free one. Where
 * t's root has no /proc, the memfd itself (read-write) goes there. 0, or -errno. */
static long snapshot_install(struct task *t, long memfd, int tfd, int flags, int cloexec)
{
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%ld", memfd);
	uint64_t at = remote_scratch(t, self, strlen(self) + 1);
	long closed = at ? remote_syscall(t, __NR_close, (uint64_t)tfd, 0, 0, 0, 0, 0) : -ENOMEM;
	long ro = closed == 0 ? remote_syscall(t, __NR_openat, (uint64_t)AT_FDCWD, at,
					       (uint64_t)((flags & ~O_DIRECT) | cloexec), 0, 0, 0)
			      : closed;
	if (ro == tfd)
		return 0;
	long err = remote_syscall(t, __NR_dup3, (uint64_t)(ro >= 0 ? ro : memfd), (uint64_t)tfd,
				  (uint64_t)cloexec, 0, 0, 0);
	if (ro >= 0)
		remote_syscall(t, __NR_close, (uint64_t)ro, 0, 0, 0, 0, 0);
	return err < 0 ? err : 0;
}

int proc_view_substitute(struct task *t, int tfd, int fd)
{
	char link[PATH_MAX], name[PATH_MAX + sizeof(VIEW_MEMFD_PREFIX)];
	enum proc_view view = proc_view_of(fd, link, sizeof(link));
	if (view == VIEW_NONE)
		return 0;
	if (snprintf(name, sizeof(name), VIEW_MEMFD_PREFIX "%s", link) > MEMFD_NAME_MAX)
		return -ENAMETOOLONG; /* a procfs mounted that deep: never the kernel's text */
	struct view_text text;
	int flags = fcntl(fd, F_GETFL), fd_flags = 0;
	if (flags >= 0 && ((flags & O_PATH) || (flags & O_ACCMODE) == O_WRONLY))
		return 0; /* nothing can be read through it */
	if (flags < 0 || proc_view_text(t, fd, view, link, &text))
		return -EIO;
	fdinfo_scan(t->tid, tfd, "flags: %o", &fd_flags);
	uint64_t at = remote_scratch(t, name, strlen(name) + 1);
	long memfd = at ? remote_syscall(t, __NR_memfd_create, at, MFD_CLOEXEC, 0, 0, 0, 0)
			: -ENOMEM;
	long err = memfd;
	if (memfd >= 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/fd/%ld", t->tid, memfd);
		err = snapshot_fill(path, &text);
		struct stat st;
		if (err == 0 && stat(path, &st) == 0)
			made_unread(st.st_dev, st.st_ino);
	}
	if (err >= 0)
		err = snapshot_install(t, memfd, tfd, flags, fd_flags & O_CLOEXEC);
	if (memfd >= 0)
		remote_syscall(t, __NR_close, (uint64_t)memfd, 0, 0, 0, 0, 0);
	free(text.buf);
	if (err < 0)
		task_warn(t, "cannot make the snapshot of %s (%s): the open fails", link,
			  strerror((int)-err));
	return err < 0 ? (int)err : 0;
}

void proc_view_refresh(struct task *t, int fd)
{
	char link[PATH_MAX];
	if (!snapshot_of(fd, link, sizeof(link)))
		return;
	bool at_offset = t->syscall_nr == __NR_preadv2 && (int64_t)syscall_arg(t, 3) != -1;
	off_t pos = at_offset ? (off_t)syscall_arg(t, 3) : lseek(fd, 0, SEEK_CUR);
	struct stat st;
	if (pos != 0 || fstat(fd, &st) || first_read(st.st_dev, st.st_ino))
		return; /* the rest of the text the read at 0 made, as a seq_file goes on */
	enum proc_view view;
	int real = view_reopen(t, link, &view);
	struct view_text text;
	if (real < 0)
		return; /* the process is gone: its last text stays */
	if (proc_view_text(t, real, view, link, &text) == 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (snapshot_fill(path, &text))
			task_warn(t, "cannot refresh the snapshot of %s", link);
		free(text.buf);
	}
	close(real);
}

bool proc_view_snapshot(int fd)
{
	char link[PATH_MAX];
	return snapshot_of(fd, link, sizeof(link));
}

int proc_view_kernel_file(struct task *t, int tfd, mode_t mode, uint64_t nlink)
{
	if (tfd < 0 || !S_ISREG(mode) || nlink != 0)
		return -1; /* a snapshot is an unlinked memfd */
	int fd = remote_dup_fd(t, tfd);
	char link[PATH_MAX];
	enum proc_view view;
	int real = fd >= 0 && snapshot_of(fd, link, sizeof(link)) ? view_reopen(t, link, &view)
								  : -1;
	if (fd >= 0)
		close(fd);
	return real;
}

/* A splice, sendfile or copy_file_range from a view moves its text without the refresh a
 * read at 0 makes: as kernels before 5.10 did for /proc files, the call fails with EINVAL,
 * and programs fall back to read(2). */
bool proc_view_unspliceable(struct task *t, int arg)
{
	int fd = remote_dup_fd(t, (int)syscall_arg(t, arg));
	bool view = fd >= 0 && proc_view_fd_unspliceable(t, fd);
	if (fd >= 0)
		close(fd);
	return view;
}

bool proc_view_fd_unspliceable(struct task *t, int fd)
{
	char link[PATH_MAX];
	bool view = snapshot_of(fd, link, sizeof(link));
	if (view)
		syscall_emulate(t, -EINVAL);
	return view;
}

/* A link to a view's snapshot, "/memfd:detrun-view:/proc/12/stat (deleted)" (as much of
 * it as the buffer took), names the view: "/proc/12/stat". */
bool proc_view_link_read(struct task *t, const char *link, uint64_t buf, uint64_t size)
{
	static const char head[] = "/memfd:" VIEW_MEMFD_PREFIX, tail[] = " (deleted)";
	size_t len = strlen(link), hl = sizeof(head) - 1, tl = sizeof(tail) - 1;
	if (len < hl + tl || strncmp(link, head, hl) || strcmp(link + len - tl, tail))
		return false;
	size_t n = len - hl - tl < size ? len - hl - tl : size;
	if (remote_write(t, REMOTE(buf), link + hl, n) == 0)
		syscall_set_result(t, (int64_t)n);
	return true;
}
