/* The replay's private view of the files (file_view.h): overlays in the group's mount
 * namespace, the before-images written into them. */
#include "engine/file_view.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/magic.h>
#include <unistd.h>
#include <linux/mount.h>

#include "engine/launch.h"
#include "recorder/file_image.h"

static const struct file_images *view_images;
static int devices_pipe[2] = { -1, -1 }; /* the child tells detrun its overlays' devices */

void file_view_set(const struct file_images *imgs)
{
	view_images = imgs && imgs->n ? imgs : NULL;
	if (view_images && pipe2(devices_pipe, O_CLOEXEC) < 0)
		devices_pipe[0] = devices_pipe[1] = -1;
}

int file_view_devices(struct file_view_device *out, int max)
{
	if (devices_pipe[0] < 0)
		return 0;
	close(devices_pipe[1]);
	/* One message, written whole (at most PIPE_BUF), or nothing: the child failed. */
	ssize_t n = read(devices_pipe[0], out, (size_t)max * sizeof(*out));
	close(devices_pipe[0]);
	devices_pipe[0] = devices_pipe[1] = -1;
	return n > 0 ? (int)((size_t)n / sizeof(*out)) : 0;
}

int file_view_wanted(void)
{
	return view_images != NULL;
}

enum {
	MAX_COVERS = 64,
	MAX_SUBMOUNTS = 256
};

/* A directory covered by an overlay, and the mounts below it that are put back on top. */
struct cover {
	char path[PATH_MAX];
	int lower; /* O_PATH descriptor of the real directory, opened before any overlay */
	uint64_t mnt_id;
};

struct submount {
	char path[PATH_MAX];
	int fd; /* O_PATH descriptor of its root, opened before any overlay */
};

static bool under(const char *path, const char *dir)
{
	size_t l = strlen(dir);
	if (l == 1)
		return path[1] != 0;
	return !strncmp(path, dir, l) && path[l] == '/';
}

static uint64_t mount_id(const char *path)
{
	struct statx sx;
	if (statx(AT_FDCWD, path, 0, STATX_MNT_ID, &sx) < 0)
		return 0;
	return sx.stx_mnt_id;
}

/* The directory an image needs covered: the nearest one that exists, at or above its
 * parent (the recording may have removed the directories between). */
static void nearest_dir(const char *path, char *out, size_t size)
{
	snprintf(out, size, "%s", path);
	struct stat st;
	do {
		char *slash = strrchr(out, '/');
		if (slash == out) {
			snprintf(out, size, "/");
			return;
		}
		*slash = 0;
	} while (stat(out, &st) < 0 || !S_ISDIR(st.st_mode));
}

static int by_depth(const void *a, const void *b)
{
	return (int)strlen(((const struct cover *)a)->path) -
	       (int)strlen(((const struct cover *)b)->path);
}

/* Is dir shown by one of the n covers already (at or below it, on the same mount)? */
static bool covered(const struct cover *covers, int n, const char *dir, uint64_t id)
{
	for (int c = 0; c < n; c++)
		if ((!strcmp(covers[c].path, dir) || under(dir, covers[c].path)) &&
		    covers[c].mnt_id == id)
			return true;
	return false;
}

/* The covers, outermost first: one per directory holding images, but none under another
 * of the same mount (the outer overlay shows it already). */
static int choose_covers(struct cover *covers, int *n, char *err, size_t len)
{
	size_t n_dirs = 0;
	struct cover *dirs = calloc(view_images->n, sizeof(*dirs));
	if (!dirs) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < view_images->n; i++) {
		struct cover *d = &dirs[n_dirs];
		nearest_dir(view_images->v[i].path, d->path, sizeof(d->path));
		if (!strcmp(d->path, "/")) {
			snprintf(err, len, "%s lies in / itself, which no private view can cover",
				 view_images->v[i].path);
			free(dirs);
			return -EINVAL;
		}
		d->mnt_id = mount_id(d->path);
		if (!covered(dirs, (int)n_dirs, d->path, d->mnt_id))
			n_dirs++;
	}
	qsort(dirs, n_dirs, sizeof(*dirs), by_depth);
	*n = 0;
	for (size_t i = 0; i < n_dirs; i++) {
		if (covered(covers, *n, dirs[i].path, dirs[i].mnt_id))
			continue;
		if (*n == MAX_COVERS) {
			snprintf(err, len, "the images lie in more than %d directories",
				 MAX_COVERS);
			free(dirs);
			return -E2BIG;
		}
		covers[(*n)++] = dirs[i];
	}
	free(dirs);
	return 0;
}

/* Mount points below any cover, outermost first (a recursive bind of one brings those
 * below it). */
static int find_submounts(const struct cover *covers, int n, struct submount *subs)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int count = 0;
	char line[4 * PATH_MAX], point[PATH_MAX];
	while (f && fgets(line, sizeof(line), f) && count < MAX_SUBMOUNTS) {
		if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1)
			continue;
		unescape_mount_point(point);
		bool below = false;
		for (int c = 0; c < n && !below; c++)
			below = under(point, covers[c].path);
		bool nested = false;
		for (int s = 0; s < count && !nested; s++)
			nested = under(point, subs[s].path) || !strcmp(point, subs[s].path);
		if (below && !nested) {
			snprintf(subs[count].path, sizeof(subs[count].path), "%s", point);
			subs[count].fd = open(point, O_PATH | O_CLOEXEC);
			if (subs[count].fd >= 0)
				count++;
		}
	}
	if (f)
		fclose(f);
	return count;
}

/* A tmpfs of no path (the new mount API): the overlays' upper and work directories live
 * there, reached as /proc/self/fd/N/... while they are mounted, and nowhere afterwards. */
static int private_tmpfs(void)
{
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	int m = -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0755", 0) == 0 &&
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
	int err = errno;
	close(fs);
	return m >= 0 ? m : -err;
}

/* Covers c with an overlay whose upper layer starts as the real directory's twin (mode
 * and owner), then puts back the mounts below it. */
static int cover(const struct cover *c, int index, int tmpfs, const struct submount *subs,
		 int n_subs)
{
	char upper[32], work[32];
	snprintf(upper, sizeof(upper), "u%d", index);
	snprintf(work, sizeof(work), "w%d", index);
	struct stat st;
	if (fstat(c->lower, &st) < 0 || mkdirat(tmpfs, upper, st.st_mode & 07777) < 0 ||
	    mkdirat(tmpfs, work, 0700) < 0 || fchownat(tmpfs, upper, st.st_uid, st.st_gid, 0) < 0 ||
	    fchmodat(tmpfs, upper, st.st_mode & 07777, 0) < 0)
		return -errno;
	char opts[256];
	snprintf(opts, sizeof(opts),
		 "lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d/%s,"
		 "workdir=/proc/self/fd/%d/%s,xino=on",
		 c->lower, tmpfs, upper, tmpfs, work);
	if (mount("detrun-files", c->path, "overlay", 0, opts) < 0)
		return -errno;
	for (int s = 0; s < n_subs; s++) {
		if (!under(subs[s].path, c->path))
			continue;
		char from[64];
		snprintf(from, sizeof(from), "/proc/self/fd/%d", subs[s].fd);
		mount(from, subs[s].path, NULL, MS_BIND | MS_REC, NULL);
	}
	return 0;
}

/* Tells detrun the overlays' devices and those below them. */
static void send_devices(const struct cover *covers, int n)
{
	struct file_view_device d[MAX_COVERS];
	int count = 0;
	for (int c = 0; c < n; c++) {
		struct stat view, real;
		struct statfs fs;
		if (stat(covers[c].path, &view) < 0 || fstat(covers[c].lower, &real) < 0)
			continue;
		bool shmem = fstatfs(covers[c].lower, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
		d[count++] = (struct file_view_device){ view.st_dev, real.st_dev, shmem };
	}
	if (devices_pipe[1] >= 0 && write(devices_pipe[1], d, (size_t)count * sizeof(d[0])) < 0)
		return; /* detrun then shows the overlays' own devices */
}

int file_view_enter(char *err, size_t len)
{
	if (!view_images)
		return 0;
	static struct cover covers[MAX_COVERS];
	static struct submount subs[MAX_SUBMOUNTS];
	int n;
	int e = choose_covers(covers, &n, err, len);
	if (e)
		return e;
	for (int c = 0; c < n; c++)
		if ((covers[c].lower = open(covers[c].path, O_PATH | O_DIRECTORY | O_CLOEXEC)) <
		    0) {
			snprintf(err, len, "%s: %s", covers[c].path, strerror(errno));
			return -errno;
		}
	int n_subs = find_submounts(covers, n, subs);
	int tmpfs = private_tmpfs();
	if (tmpfs < 0) {
		snprintf(err, len, "a tmpfs for it: %s", strerror(-tmpfs));
		return tmpfs;
	}
	for (int c = 0; c < n; c++) {
		e = cover(&covers[c], c, tmpfs, subs, n_subs);
		if (e) {
			snprintf(err, len, "an overlay on %s: %s", covers[c].path, strerror(-e));
			return e;
		}
	}
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	e = root < 0 ? -errno : file_images_restore(root, view_images, err, len);
	if (root >= 0)
		close(root);
	/* The covers' own times, as below (writing the images moved them). */
	for (int c = 0; c < n && !e; c++) {
		struct stat st;
		if (fstat(covers[c].lower, &st) == 0)
			utimensat(AT_FDCWD, covers[c].path,
				  (struct timespec[2]){ st.st_atim, st.st_mtim }, 0);
	}
	if (!e)
		send_devices(covers, n);
	for (int c = 0; c < n; c++)
		close(covers[c].lower);
	for (int s = 0; s < n_subs; s++)
		close(subs[s].fd);
	close(tmpfs);
	/* The working directory was entered below the overlays: enter it again through them. */
	char cwd[PATH_MAX];
	if (!e && getcwd(cwd, sizeof(cwd)) && chdir(cwd) < 0)
		e = -errno;
	return e;
}
