/*
 * The files a replay's group sees: the recording's starting state, on a private view.
 *
 * A recording keeps the before-image of every path its group changed (recorder/
 * file_image.h). A replay (`detrun replay`, each run of `detrun debug`) must meet those
 * images, not what the recording left behind, and must never change the user's files.
 * So the group runs in a mount namespace of its own where every directory holding an image
 * is covered by an overlay: the real directory below, read-only to the group; above it a
 * private tmpfs where the images are written back (content, mode, owner; an absent path
 * becomes a whiteout). What the replay writes goes to that tmpfs and is gone with the
 * namespace. Files the recording only read come through unchanged from below, so one
 * changed since is still found by its fingerprint and reported.
 *
 * Each overlay covers one directory and everything under it on the same mount; the mounts
 * found below it are put back on top (bind mounts of the real ones). An image whose nearest
 * existing directory is the root itself cannot be covered (an overlay on / would hide
 * every mount): the view then says so and refuses.
 */
#ifndef DETRUN_ENGINE_FILE_VIEW_H
#define DETRUN_ENGINE_FILE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct file_images;

/* The images the next launch presents to its group (NULL: none). The caller keeps them
 * alive until the launch returns. */
void file_view_set(const struct file_images *imgs);
/* Is there anything to present? */
int file_view_wanted(void);

/* What a run sees of the view must be what the recording saw of the real directories:
 * each overlay (mounted with xino=on, so one device for everything in it) stands for the
 * device of the directory below it, and a file mapped from it for a file of that
 * filesystem (tmpfs or not: page ownership takes shmem only). */
struct file_view_device {
	uint64_t view, real;
	bool real_shmem;
};
/* After the launch, in detrun: the launched child's overlays (none without a view). */
int file_view_devices(struct file_view_device *out, int max);

/* In the launched child, in a mount namespace of its own already (private propagation):
 * covers the directories and writes the images, then enters the working directory again
 * (through the overlay). 0, or -errno with a message in err. */
int file_view_enter(char *err, size_t len);

#endif
