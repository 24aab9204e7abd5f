/* Directories in name order: getdents lists a directory's entries sorted by name, across
 * the whole directory (the filesystem's own order follows hashes and history), with
 * virtual inode numbers. */
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

struct dent {
	uint64_t ino;
	unsigned char type;
	char *name;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct dent *)a)->name, ((const struct dent *)b)->name);
}

/* Every entry of the directory open at supervisor descriptor `dir`, sorted by name. A new
 * open file description is used, so the tracee's position is untouched. */
static struct dent *list_directory(int dir, int *count)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct dent *list = NULL;
	int n = 0, cap = 0;
	char buf[32768];
	for (;;) {
		long got = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (got <= 0)
			break;
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				list = realloc(list, (size_t)cap * sizeof(*list));
				if (!list)
					abort();
			}
			list[n++] = (struct dent){ d->d_ino, d->d_type, strdup(d->d_name) };
			off += d->d_reclen;
		}
	}
	close(fd);
	qsort(list, (size_t)n, sizeof(*list), by_name);
	*count = n;
	return list;
}

static void free_list(struct dent *list, int n)
{
	for (int i = 0; i < n; i++)
		free(list[i].name);
	free(list);
}

/* A listing in a procfs leaves out the names an open of which would find absent
 * (sys_kernfs.c), as a restricted container shows them. */
static void hide_absent(struct task *t, int dir, dev_t dev, struct dent *list, int *n)
{
	char rel[PATH_MAX];
	if (!views_listing_judged(t, dir, rel, sizeof(rel)))
		return;
	int kept = 0;
	for (int i = 0; i < *n; i++) {
		if (views_entry_absent(t, dir, dev, rel, list[i].name, list[i].type))
			free(list[i].name);
		else
			list[kept++] = list[i];
	}
	*n = kept;
}

/* The directory's position, shared with the tracee, counts entries of the sorted list:
 * rewinddir (offset 0) starts over, telldir/seekdir get these d_off values back. proc_dir:
 * the path of a procfs directory listed (its entries' numbers are keyed by their paths, as
 * a stat's are: views_proc_identity), or NULL. */
static size_t pack_entries(const struct dent *list, int n, int64_t *pos, uint64_t dev,
			   const char *proc_dir, char *out, size_t size, bool legacy)
{
	size_t used = 0;
	for (; *pos < n; (*pos)++) {
		const struct dent *e = &list[*pos];
		size_t namelen = strlen(e->name);
		/* linux_dirent: ino, off, reclen, name, NUL, ..., type in the last byte;
		 * linux_dirent64: ino, off, reclen, type, name, NUL. */
		size_t header = legacy ? 18 : 19;
		size_t reclen = (header + namelen + 1 + (legacy ? 1 : 0) + 7) & ~(size_t)7;
		if (used + reclen > size)
			break;
		char *rec = out + used;
		memset(rec, 0, reclen);
		uint64_t key = proc_dir ? views_proc_entry_key(proc_dir, e->name) : e->ino;
		uint64_t ino = files_virtual_ino(dev, key, 1), off = (uint64_t)*pos + 1;
		unsigned short rl = (unsigned short)reclen;
		memcpy(rec, &ino, 8);
		memcpy(rec + 8, &off, 8);
		memcpy(rec + 16, &rl, 2);
		if (legacy) {
			memcpy(rec + 18, e->name, namelen);
			rec[reclen - 1] = (char)e->type; /* linux_dirent keeps d_type last */
		} else {
			rec[18] = (char)e->type;
			memcpy(rec + 19, e->name, namelen);
		}
		used += reclen;
	}
	return used;
}

/* A directory's names are starting state too (Python's imports list their directories):
 * the shim fingerprints each listing from its start, as "DIR/" with the entry count. */
static void listing_read(struct task *t, int dir, const struct dent *list, int n)
{
	if (!shim_get()->file_opened)
		return;
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dir);
	ssize_t len = readlink(link, path, sizeof(path) - 2);
	if (len <= 0 || synthetic_filesystem(dir))
		return;
	path[len] = '/';
	path[len + 1] = 0;
	uint64_t hash = FNV64_INIT;
	for (int i = 0; i < n; i++)
		hash = fnv64(hash, list[i].name, strlen(list[i].name) + 1);
	shim_get()->file_opened(t, sched_now(), path, (uint64_t)n, hash);
}

/* Implements getdents64(2), getdents(2): entries in name order. */
void sys_getdents(struct task *t)
{
	int dir = remote_dup_fd(t, (int)syscall_arg(t, 0));
	struct stat st;
	if (dir < 0 || fstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		if (dir >= 0)
			close(dir);
		return; /* the kernel gives EBADF or ENOTDIR */
	}
	int64_t pos = lseek(dir, 0, SEEK_CUR);
	int n = 0;
	struct dent *list = pos >= 0 ? list_directory(dir, &n) : NULL;
	if (list)
		hide_absent(t, dir, st.st_dev, list, &n);
	if (!list) {
		close(dir);
		return; /* unreadable here: the kernel's own answer, unsorted */
	}
	if (pos == 0)
		listing_read(t, dir, list, n);
	size_t size = syscall_arg(t, 2) > 1 << 20 ? 1 << 20 : syscall_arg(t, 2);
	char *out = malloc(size ? size : 1);
	if (!out)
		abort();
	char link[64], proc_dir[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dir);
	ssize_t len = views_on_procfs(dir, st.st_dev) ? readlink(link, proc_dir, sizeof(proc_dir))
						      : -1;
	if (len > 0 && len < (ssize_t)sizeof(proc_dir))
		proc_dir[len] = 0;
	size_t used = pack_entries(list, n, &pos, st.st_dev,
				   len > 0 && len < (ssize_t)sizeof(proc_dir) ? proc_dir : NULL,
				   out, size, t->syscall_nr == __NR_getdents);
	int64_t result = (int64_t)used;
	if (!used && pos < n)
		result = -EINVAL; /* the next entry does not fit the buffer */
	else if (remote_write(t, REMOTE(syscall_arg(t, 1)), out, used))
		result = -EFAULT;
	else
		lseek(dir, pos, SEEK_SET);
	free(out);
	free_list(list, n);
	close(dir);
	syscall_emulate(t, result);
}
