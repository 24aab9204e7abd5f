/* Which calls take a before-image (recorder/file_image.h): the group's first change of
 * each path, met at the call's stop before it runs.
 *
 * A path is changed by an open that may write or create (O_WRONLY, O_RDWR, O_CREAT,
 * O_TRUNC: write, ftruncate, fallocate and a shared writable map all need such a
 * descriptor), by truncate, and by the calls that change directory entries (the table's
 * entry kinds: unlink, rename, mkdir, rmdir, link, symlink, mknod and their *at forms).
 * Each path is imaged once per run, named canonically (its directory resolved by the
 * kernel). A path under one already imaged is left alone: under a path that was absent or
 * a file at the start, it was absent too, and a directory is imaged with everything under
 * it. A directory is imaged only by the calls that remove or move it (rmdir, rename): a
 * mkdir or open that finds one changes nothing, and must not copy a whole tree.
 *
 * The decision depends only on the group's calls and the state of the path before its first
 * change, which replay presents as it was: replay meets each image at the same call.
 *
 * Not imaged: paths on kernel views (proc, sysfs ...) or under /dev (devices, and the
 * group's own /dev/shm, empty at every start); descriptors inherited from outside (the
 * group's output, which replay checks); changes of metadata alone (chmod, chown, utimes,
 * xattrs).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "scheduler/scheduler.h"
#include "shim/shim.h"
#include "engine/remote.h"
#include "handlers/sys_files.h"
#include "syscalls/syscall_table.h"

/* ---- the paths imaged so far ------------------------------------------------------------ */

enum {
	IMAGED_BUCKETS = 1024
};

struct imaged {
	char *path;
	struct imaged *next;
};
static struct imaged *imaged[IMAGED_BUCKETS];

static size_t path_hash(const char *s, size_t len)
{
	size_t h = 5381;
	for (size_t i = 0; i < len; i++)
		h = h * 33 + (unsigned char)s[i];
	return h % IMAGED_BUCKETS;
}

static bool imaged_prefix(const char *path, size_t len)
{
	for (struct imaged *e = imaged[path_hash(path, len)]; e; e = e->next)
		if (strlen(e->path) == len && !memcmp(e->path, path, len))
			return true;
	return false;
}

/* Is path, or a directory it lies in, imaged already? */
static bool imaged_covers(const char *path)
{
	size_t len = strlen(path);
	for (size_t l = len; l > 1; l--)
		if ((l == len || path[l] == '/') && imaged_prefix(path, l))
			return true;
	return false;
}

static void remember_imaged(const char *path)
{
	struct imaged *e = malloc(sizeof(*e));
	if (!e || !(e->path = strdup(path)))
		abort();
	size_t h = path_hash(path, strlen(path));
	e->next = imaged[h];
	imaged[h] = e;
}

/* ---- naming the entry -------------------------------------------------------------------- */

/* The absolute path of supervisor descriptor fd, as the kernel resolves it. */
static bool fd_path(int fd, char *out, size_t size)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, size - 1);
	if (n <= 0 || out[0] != '/')
		return false;
	out[n] = 0;
	return true;
}

/* Places whose files are no run's starting state. */
static bool outside_images(int dirfd, const char *dir)
{
	static const char *const trees[] = { "/dev", "/proc", "/sys" };
	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		size_t l = strlen(trees[i]);
		if (!strncmp(dir, trees[i], l) && (!dir[l] || dir[l] == '/'))
			return true;
	}
	return synthetic_filesystem(dirfd);
}

/* The entry a call names: its directory (an O_PATH descriptor and canonical path) and its
 * last name. With `follow`, a symbolic link there is replaced by what it points to. */
struct entry {
	int dirfd;
	char dir[PATH_MAX];
	char name[NAME_MAX + 1];
};

static bool split_entry(int base, char *rel, struct entry *e)
{
	size_t len = strlen(rel);
	while (len > 1 && rel[len - 1] == '/')
		rel[--len] = 0;
	char *slash = strrchr(rel, '/');
	const char *name = slash ? slash + 1 : rel;
	if (slash)
		*slash = 0;
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strlen(name) > NAME_MAX)
		return false;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->dirfd = openat(base, slash ? (*rel ? rel : "/") : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (e->dirfd < 0)
		return false;
	if (fd_path(e->dirfd, e->dir, sizeof(e->dir)))
		return true;
	close(e->dirfd);
	return false;
}

static bool name_entry(struct task *t, int dirfd, uint64_t addr, bool follow, struct entry *e)
{
	char path[PATH_MAX], real[PATH_MAX];
	if (tracee_path(t, addr, path, sizeof(path)) || !path[0])
		return false;
	int base = tracee_path_base(t, dirfd, path);
	if (base < 0)
		return false;
	char *rel = path + strspn(path, "/");
	struct stat st;
	bool ok;
	if (follow && *rel && fstatat(base, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode)) {
		/* What the link points to, named from the group's root. */
		int fd = openat(base, rel, O_PATH | O_CLOEXEC);
		ok = fd >= 0 && fd_path(fd, real, sizeof(real));
		if (fd >= 0)
			close(fd);
		int root = -1;
		if (ok) {
			char proc[64];
			snprintf(proc, sizeof(proc), "/proc/%d/root", t->tid);
			root = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
		}
		ok = ok && root >= 0 && split_entry(root, real + 1, e);
		if (root >= 0)
			close(root);
	} else {
		ok = split_entry(base, rel, e);
	}
	close(base);
	return ok;
}

/* ---- the decision ------------------------------------------------------------------------ */

/* Calls that may remove or move a directory: the only ones whose directory is imaged. */
static bool removes_or_moves(struct task *t)
{
	long nr = t->syscall_nr;
	return nr == __NR_rmdir || nr == __NR_rename || nr == __NR_renameat ||
	       nr == __NR_renameat2 || (nr == __NR_unlinkat && (syscall_arg(t, 2) & AT_REMOVEDIR));
}

void files_changing(struct task *t, int dirfd, uint64_t addr, bool follow)
{
	const struct shim_ops *shim = shim_get();
	if (!shim->file_changing)
		return;
	struct entry e;
	if (!name_entry(t, dirfd, addr, follow, &e))
		return;
	char path[PATH_MAX + NAME_MAX + 2];
	snprintf(path, sizeof(path), "%s/%s", strcmp(e.dir, "/") ? e.dir : "", e.name);
	struct stat st;
	bool directory = fstatat(e.dirfd, e.name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			 S_ISDIR(st.st_mode);
	if (!outside_images(e.dirfd, e.dir) && !imaged_covers(path) &&
	    (!directory || removes_or_moves(t))) {
		remember_imaged(path);
		shim->file_changing(t, sched_now(), path, e.dirfd, e.name);
	}
	close(e.dirfd);
}

/* An open that may change the file it names: a descriptor that writes (or maps shared
 * writable), a file made or truncated. O_PATH and O_TMPFILE change no name. */
void files_open_changing(struct task *t, uint64_t flags, int dirfd, uint64_t addr)
{
	if ((flags & O_PATH) || (flags & O_TMPFILE) == O_TMPFILE)
		return;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
		files_changing(t, dirfd, addr, !(flags & O_NOFOLLOW));
}

void files_entries_changing(struct task *t, const struct syscall_entry *e,
			    const struct syscall_entries *c)
{
	for (int i = 0; i < c->n; i++) {
		int dirfd = syscall_dirfd_arg(e, c->path[i]);
		files_changing(t, dirfd < 0 ? AT_FDCWD : (int)syscall_arg(t, dirfd),
			       syscall_arg(t, c->path[i]), false);
	}
}
