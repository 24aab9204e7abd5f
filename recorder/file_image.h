/*
 * Before-images: what was at a path when the run started, for every file or directory
 * entry the group changes (proto/log.proto, FileImage).
 *
 * A replay must meet the files the recording met. The files a run only reads are checked
 * (fingerprints: a changed one stops the replay and is reported), but the files it writes
 * are its own output, and after a recording they are no longer what the recording started
 * with: an O_CREAT|O_EXCL then fails, an appended file doubles. So the recording keeps,
 * at the group's first change of each path, what was there: a regular file's bytes, a
 * symlink's target, a directory's mode (and, for a directory moved away, everything under
 * it), or the path's absence. A replay presents them to the group from the start, on a
 * private view that leaves the real files alone (engine/file_view.h), or puts them back in
 * place (a replica's own files: replicate/, `replay --in-place`).
 *
 * Handlers decide when an image is taken (handlers/sys_images.c); this module takes one,
 * gathers a log's, and puts them back.
 */
#ifndef DETRUN_RECORDER_FILE_IMAGE_H
#define DETRUN_RECORDER_FILE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recorder/log.h"

enum file_image_kind {
	FILE_IMAGE_ABSENT = 0,
	FILE_IMAGE_REGULAR = 1,
	FILE_IMAGE_DIRECTORY = 2,
	FILE_IMAGE_SYMLINK = 3,
	FILE_IMAGE_OTHER = 4 /* a device, fifo or socket: noted, not restored */
};

/* A regular file's content goes into records of at most this many bytes. */
#define FILE_IMAGE_PART (512u << 10)

struct log;

/* One image, gathered from its records (which it points into). */
struct file_image {
	const char *path; /* absolute */
	char *owned;      /* path, when made absolute here */
	enum file_image_kind kind;
	uint32_t mode, uid, gid;
	int64_t atime_ns, mtime_ns;
	uint64_t size;
	const ProtobufCBinaryData **parts; /* regular: the content in order; symlink: target */
	size_t n_parts;
};

struct file_images {
	struct file_image *v;
	size_t n;
};

/* Takes the image of entry `name` of directory `dirfd` (an O_PATH descriptor will do),
 * known to the group as `path`, and gives it to `emit` as FileImage records (several for
 * a large file; a directory's are followed by those of everything under it). Returns 0,
 * or emit's error, or -errno. */
typedef int file_image_emit(void *arg, Detrun__Log__FileImage *rec);
int file_image_capture(int dirfd, const char *name, const char *path, file_image_emit *emit,
		       void *arg);

/* Adds record `rec` to `img`: a first part (offset 0 and a new path) starts it. Returns 0,
 * or -EINVAL when rec continues another image. */
int file_image_add(struct file_image *img, const Detrun__Log__FileImage *rec);
/* Does rec continue img (a later part of the same file)? */
bool file_image_continues(const struct file_image *img, const Detrun__Log__FileImage *rec);
void file_image_free(struct file_image *img);

/* The images of a loaded log, each path once, sorted by path (a directory before what it
 * holds), relative paths taken in directory `cwd`. 0 or -ENOMEM. */
int file_images_of_log(const struct log *log, const char *cwd, struct file_images *out);
void file_images_free(struct file_images *imgs);
/* The same from `n` records of any kinds (a replica's stream so far). */
int file_images_gather(const LogRecord *const *records, size_t n, const char *cwd,
		       struct file_images *out);
/* An image's path as recorded (proto/log.proto), in directory `cwd` when relative: the
 * absolute path, in buf or path itself. */
const char *file_image_path(const char *path, const char *cwd, char *buf, size_t len);

/* Puts `img` back at `rel` (its path relative to directory `dirfd`): removes what is there
 * now, writes the recorded bytes, mode and (when allowed) owner. 0 or -errno. */
int file_image_restore(int dirfd, const char *rel, const struct file_image *img);
/* Every image of `imgs` under directory `root` (each path taken relative to it), in path
 * order, skipping what lies under an image of an absent path or non-directory. 0, or
 * -errno with the path that failed in `err`. */
int file_images_restore(int root, const struct file_images *imgs, char *err, size_t len);

/* Is `path` or one of its directories in `imgs`? */
bool file_images_cover(const struct file_images *imgs, const char *path);

#endif
