/* Before-images: taking them, gathering a log's, putting them back (file_image.h). */
#include "recorder/file_image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/log.h"

/* ---- taking ------------------------------------------------------------------------------ */

static int capture_regular(int dirfd, const char *name, Detrun__Log__FileImage *rec,
			   file_image_emit *emit, void *arg)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	uint8_t *buf = malloc(FILE_IMAGE_PART);
	int err = buf ? 0 : -ENOMEM;
	uint64_t at = 0;
	/* Parts follow what read gives up to the size stat gave: the image is of one moment. */
	while (!err) {
		size_t want = rec->size - at < FILE_IMAGE_PART ? (size_t)(rec->size - at)
							       : FILE_IMAGE_PART;
		ssize_t n = want ? pread(fd, buf, want, (off_t)at) : 0;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0 && at < rec->size)
			rec->size = at; /* shrunk meanwhile */
		rec->offset = at;
		rec->data = (ProtobufCBinaryData){ (size_t)n, buf };
		err = emit(arg, rec);
		at += (uint64_t)n;
		if (n == 0 || at >= rec->size)
			break;
	}
	free(buf);
	close(fd);
	return err;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Everything under directory `dirfd`/`name` (path `path`), in name order. */
static int capture_children(int parent, const char *name, const char *path, file_image_emit *emit,
			    void *arg)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	for (struct dirent *e; !err && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **more = realloc(names, cap * sizeof(*names));
			if (!more) {
				err = -ENOMEM;
				break;
			}
			names = more;
		}
		if (!(names[n] = strdup(e->d_name)))
			err = -ENOMEM;
		else
			n++;
	}
	qsort(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; i < n; i++) {
		char *child = NULL;
		if (!err && asprintf(&child, "%s/%s", strcmp(path, "/") ? path : "", names[i]) < 0)
			err = -ENOMEM;
		if (!err)
			err = file_image_capture(fd, names[i], child, emit, arg);
		free(child);
		free(names[i]);
	}
	free(names);
	closedir(d);
	return err;
}

int file_image_capture(int dirfd, const char *name, const char *path, file_image_emit *emit,
		       void *arg)
{
	Detrun__Log__FileImage rec = DETRUN__LOG__FILE_IMAGE__INIT;
	rec.path = (char *)path;
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		rec.kind = FILE_IMAGE_ABSENT;
		return emit(arg, &rec);
	}
	rec.mode = st.st_mode & 07777;
	rec.uid = st.st_uid;
	rec.gid = st.st_gid;
	rec.atime_ns = st.st_atim.tv_sec * 1000000000LL + st.st_atim.tv_nsec;
	rec.mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	char target[4096];
	ssize_t len;
	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		rec.kind = FILE_IMAGE_REGULAR;
		rec.size = (uint64_t)st.st_size;
		return capture_regular(dirfd, name, &rec, emit, arg);
	case S_IFLNK:
		len = readlinkat(dirfd, name, target, sizeof(target));
		if (len < 0)
			return -errno;
		rec.kind = FILE_IMAGE_SYMLINK;
		rec.data = (ProtobufCBinaryData){ (size_t)len, (uint8_t *)target };
		return emit(arg, &rec);
	case S_IFDIR: {
		rec.kind = FILE_IMAGE_DIRECTORY;
		int err = emit(arg, &rec);
		return err ? err : capture_children(dirfd, name, path, emit, arg);
	}
	default:
		rec.kind = FILE_IMAGE_OTHER;
		return emit(arg, &rec);
	}
}

/* ---- gathering --------------------------------------------------------------------------- */

bool file_image_continues(const struct file_image *img, const Detrun__Log__FileImage *rec)
{
	return img->path && rec->offset > 0 && img->kind == FILE_IMAGE_REGULAR &&
	       !strcmp(img->path, rec->path);
}

int file_image_add(struct file_image *img, const Detrun__Log__FileImage *rec)
{
	bool first = !img->path;
	if (first) {
		if (rec->offset)
			return -EINVAL;
		*img = (struct file_image){ .path = rec->path,
					    .kind = (enum file_image_kind)rec->kind,
					    .mode = rec->mode,
					    .uid = rec->uid,
					    .gid = rec->gid,
					    .atime_ns = rec->atime_ns,
					    .mtime_ns = rec->mtime_ns,
					    .size = rec->size };
	} else if (!file_image_continues(img, rec)) {
		return -EINVAL;
	}
	if (img->kind != FILE_IMAGE_REGULAR && img->kind != FILE_IMAGE_SYMLINK)
		return 0;
	const ProtobufCBinaryData **more = realloc(img->parts,
						   (img->n_parts + 1) * sizeof(*img->parts));
	if (!more)
		return -ENOMEM;
	img->parts = more;
	img->parts[img->n_parts++] = &rec->data;
	return 0;
}

void file_image_free(struct file_image *img)
{
	free(img->owned);
	free(img->parts);
	*img = (struct file_image){ 0 };
}

/* Path order with '/' below every other byte: what lies under a directory comes right
 * after it ("/a", "/a/b", "/a-b"), before any sibling whose name extends its own. */
static int compare_paths(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned ka = *a == '/' ? 1u : (unsigned char)*a + 1u * (*a != 0);
		unsigned kb = *b == '/' ? 1u : (unsigned char)*b + 1u * (*b != 0);
		if (ka != kb || !*a)
			return ka < kb ? -1 : ka > kb;
	}
}

static int compare_images(const void *a, const void *b)
{
	return compare_paths(((const struct file_image *)a)->path,
			     ((const struct file_image *)b)->path);
}

int file_images_of_log(const struct log *log, const char *cwd, struct file_images *out)
{
	return file_images_gather((const LogRecord *const *)log->records + 1,
				  log->n ? log->n - 1 : 0, cwd, out);
}

/* Its path made absolute in cwd. */
static int absolute(struct file_image *img, const char *cwd)
{
	if (img->path[0] == '/')
		return 0;
	if (asprintf(&img->owned, "%s/%s", strcmp(cwd, "/") ? cwd : "", img->path) < 0)
		return -ENOMEM;
	img->path = img->owned;
	return 0;
}

int file_images_gather(const LogRecord *const *records, size_t n, const char *cwd,
		       struct file_images *out)
{
	*out = (struct file_images){ 0 };
	size_t cap = 0;
	for (size_t i = 0; i < n; i++) {
		const LogRecord *r = records[i];
		if (r->kind_case != DETRUN__LOG__RECORD__KIND_IMAGE)
			continue;
		struct file_image *last = out->n ? &out->v[out->n - 1] : NULL;
		if (last && file_image_continues(last, r->image)) {
			if (file_image_add(last, r->image))
				return -ENOMEM;
			continue;
		}
		if (out->n == cap) {
			cap = cap ? 2 * cap : 16;
			struct file_image *more = realloc(out->v, cap * sizeof(*more));
			if (!more)
				return -ENOMEM;
			out->v = more;
		}
		out->v[out->n] = (struct file_image){ 0 };
		if (file_image_add(&out->v[out->n], r->image) == 0)
			out->n++;
	}
	for (size_t i = 0; i < out->n; i++)
		if (absolute(&out->v[i], cwd))
			return -ENOMEM;
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), compare_images);
	/* Each path is imaged once; should one come twice, the first (the earlier) stands. */
	size_t kept = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (kept && !strcmp(out->v[kept - 1].path, out->v[i].path)) {
			file_image_free(&out->v[i]);
			continue;
		}
		out->v[kept++] = out->v[i];
	}
	out->n = kept;
	return 0;
}

void file_images_free(struct file_images *imgs)
{
	for (size_t i = 0; i < imgs->n; i++)
		file_image_free(&imgs->v[i]);
	free(imgs->v);
	*imgs = (struct file_images){ 0 };
}

const char *file_image_path(const char *path, const char *cwd, char *buf, size_t len)
{
	if (path[0] == '/')
		return path;
	snprintf(buf, len, "%s/%s", strcmp(cwd, "/") ? cwd : "", path);
	return buf;
}

bool file_images_cover(const struct file_images *imgs, const char *path)
{
	size_t len = strlen(path);
	for (size_t i = 0; i < imgs->n; i++) {
		size_t l = strlen(imgs->v[i].path);
		if (l <= len && !memcmp(imgs->v[i].path, path, l) &&
		    (l == len || path[l] == '/' || l == 1))
			return true;
	}
	return false;
}

/* ---- putting back ------------------------------------------------------------------------ */

/* Removes `name` under dirfd, a directory with everything in it. */
static int remove_tree(int parent, const char *name)
{
	if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	int err = 0;
	for (struct dirent *e; !err && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			err = remove_tree(fd, e->d_name);
	closedir(d);
	if (!err && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		err = -errno;
	return err;
}

/* The directories leading to rel, made where missing (a directory the recording removed
 * and imaged comes first, in path order; any other gets 0755). */
static int make_parents(int dirfd, const char *rel)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", rel);
	for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (*path && mkdirat(dirfd, path, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

static int write_content(int fd, const struct file_image *img)
{
	for (size_t i = 0; i < img->n_parts; i++) {
		size_t done = 0;
		while (done < img->parts[i]->len) {
			ssize_t n = write(fd, img->parts[i]->data + done,
					  img->parts[i]->len - done);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			done += (size_t)n;
		}
	}
	return ftruncate(fd, (off_t)img->size) < 0 ? -errno : 0;
}

/* Whatever stands at rel that is not of file type `type` (S_IFREG, S_IFDIR) goes first. */
static int remove_other_kind(int dirfd, const char *rel, mode_t type)
{
	struct stat st;
	if (fstatat(dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) != type)
		return remove_tree(dirfd, rel);
	return 0;
}

static int restore_regular(int dirfd, const char *rel, const struct file_image *img)
{
	int err = remove_other_kind(dirfd, rel, S_IFREG);
	if (err)
		return err;
	int fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			img->mode & 0777);
	if (fd < 0)
		return -errno;
	err = write_content(fd, img);
	if (!err && fchown(fd, img->uid, img->gid) < 0 && errno != EPERM)
		err = -errno;
	if (!err && fchmod(fd, img->mode) < 0)
		err = -errno;
	close(fd);
	return err;
}

static int restore_directory(int dirfd, const char *rel, const struct file_image *img)
{
	int err = remove_other_kind(dirfd, rel, S_IFDIR);
	if (err)
		return err;
	if (mkdirat(dirfd, rel, img->mode & 0777) < 0 && errno != EEXIST)
		return -errno;
	if (fchownat(dirfd, rel, img->uid, img->gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != EPERM)
		return -errno;
	return fchmodat(dirfd, rel, img->mode, 0) < 0 ? -errno : 0;
}

static int restore_symlink(int dirfd, const char *rel, const struct file_image *img)
{
	char target[4096];
	size_t len = img->n_parts ? img->parts[0]->len : 0;
	if (len >= sizeof(target))
		return -ENAMETOOLONG;
	memcpy(target, len ? img->parts[0]->data : (const uint8_t *)"", len);
	target[len] = 0;
	int err = remove_tree(dirfd, rel);
	if (err)
		return err;
	if (symlinkat(target, dirfd, rel) < 0)
		return -errno;
	if (fchownat(dirfd, rel, img->uid, img->gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != EPERM)
		return -errno;
	return 0;
}

/* The recorded times: a stat before the group's first change shows what it showed. */
static int restore_times(int dirfd, const char *rel, const struct file_image *img)
{
	struct timespec times[2] = { { img->atime_ns / 1000000000LL, img->atime_ns % 1000000000LL },
				     { img->mtime_ns / 1000000000LL,
				       img->mtime_ns % 1000000000LL } };
	return utimensat(dirfd, rel, times, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int restore_entry(int dirfd, const char *rel, const struct file_image *img)
{
	if (!*rel)
		return -EINVAL; /* the root itself is never an image */
	if (img->kind == FILE_IMAGE_OTHER)
		return 0;
	if (img->kind == FILE_IMAGE_ABSENT)
		return remove_tree(dirfd, rel);
	int err = make_parents(dirfd, rel);
	if (err)
		return err;
	switch (img->kind) {
	case FILE_IMAGE_REGULAR:
		return restore_regular(dirfd, rel, img);
	case FILE_IMAGE_DIRECTORY:
		return restore_directory(dirfd, rel, img);
	case FILE_IMAGE_SYMLINK:
		return restore_symlink(dirfd, rel, img);
	default:
		return -EINVAL;
	}
}

int file_image_restore(int dirfd, const char *rel, const struct file_image *img)
{
	int err = restore_entry(dirfd, rel, img);
	if (err || img->kind == FILE_IMAGE_ABSENT || img->kind == FILE_IMAGE_OTHER)
		return err;
	return restore_times(dirfd, rel, img);
}

int file_images_restore(int root, const struct file_images *imgs, char *err, size_t len)
{
	const char *leaf = NULL; /* the last image that has nothing under it */
	for (size_t i = 0; i < imgs->n; i++) {
		const struct file_image *img = &imgs->v[i];
		size_t l = leaf ? strlen(leaf) : 0;
		if (leaf && !strncmp(img->path, leaf, l) && img->path[l] == '/')
			continue; /* under an absent path or a file: absent at the start too */
		leaf = img->kind == FILE_IMAGE_DIRECTORY ? NULL : img->path;
		int e = file_image_restore(root, img->path + strspn(img->path, "/"), img);
		if (e) {
			snprintf(err, len, "%s: %s", img->path, strerror(-e));
			return e;
		}
	}
	/* What was put back in a directory moved its times: they are set again. */
	for (size_t i = imgs->n; i-- > 0;)
		if (imgs->v[i].kind == FILE_IMAGE_DIRECTORY)
			restore_times(root, imgs->v[i].path + strspn(imgs->v[i].path, "/"),
				      &imgs->v[i]);
	return 0;
}
