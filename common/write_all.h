/*
 * Writing a whole buffer to a descriptor, which the log, gdb's connection and a replay's
 * output relay each need. A header of its own (no other detrun includes), so every folder
 * may use it.
 */
#ifndef DETRUN_COMMON_WRITE_ALL_H
#define DETRUN_COMMON_WRITE_ALL_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* Writes all `len` bytes at buf to fd, going on after a short write or a signal (EINTR):
 * 0, or -errno (-EIO when fd takes nothing). */
static inline int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif
