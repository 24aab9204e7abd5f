/* What the group sees of a replay's private view of the files (engine/file_view.h): the
 * directories below the overlays, as the recording saw them. Each overlay (xino=on: one
 * device for everything in it) shows as the device of the real directory it covers; a
 * directory in it shows the real directory's size and blocks (the overlay's own are those
 * of its tmpfs); a file mapped from it is shared memory only if the real one was. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "handlers/sys_files.h"

enum {
	MAX_VIEW_DEVS = 64
};
static struct file_view_device view_devs[MAX_VIEW_DEVS];
static int n_view_devs;

void files_view_devices(const struct file_view_device *d, int n)
{
	n_view_devs = n < MAX_VIEW_DEVS ? n : MAX_VIEW_DEVS;
	memcpy(view_devs, d, (size_t)n_view_devs * sizeof(*d));
}

bool files_view_device(uint64_t dev, bool *real_shmem)
{
	for (int i = 0; i < n_view_devs; i++)
		if (view_devs[i].view == dev) {
			*real_shmem = view_devs[i].real_shmem;
			return true;
		}
	return false;
}

uint64_t files_view_real_dev(uint64_t dev)
{
	for (int i = 0; i < n_view_devs; i++)
		if (view_devs[i].view == dev)
			return view_devs[i].real;
	return dev;
}

void files_view_directory(int fd, uint64_t dev, int64_t *size, int64_t *blocks)
{
	char link[64], path[4096];
	struct stat real;
	bool shmem;
	if (!files_view_device(dev, &shmem))
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return;
	path[n] = 0;
	/* detrun's own mount namespace has no overlays: the path names the real directory. */
	if (stat(path, &real) == 0 && S_ISDIR(real.st_mode)) {
		*size = real.st_size;
		*blocks = real.st_blocks;
		return;
	}
	/* One the group made has none: a new directory of the filesystem below, one block
	 * (ext4's; a tmpfs below is the overlay's own kind). */
	for (char *slash; !shmem && (slash = strrchr(path, '/')) && slash != path;) {
		*slash = 0;
		if (stat(path, &real) == 0 && S_ISDIR(real.st_mode)) {
			*size = real.st_blksize;
			*blocks = real.st_blksize / 512;
			return;
		}
	}
}
