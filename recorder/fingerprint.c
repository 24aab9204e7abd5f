/* Fingerprints of whole files, for the log header (the program) and replay's checks of the
 * files the recording read: kept apart from the log writer, which only stores them. */
#include "recorder/fingerprint.h"

#include <errno.h>
#include <unistd.h>

int fingerprint_fd(int fd, uint64_t *hash, uint64_t *size)
{
	static uint8_t buf[1 << 16];
	uint64_t h = FNV64_INIT, total = 0;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		h = fnv64(h, buf, (size_t)n);
		total += (uint64_t)n;
	}
	*hash = h;
	*size = total;
	return 0;
}
