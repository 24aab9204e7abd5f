/* FNV-1a digests: file fingerprints, the event-stream digest and sent-bytes digests. Not
 * cryptographic: they tell a replay that something changed, not that nothing could have. */
#ifndef DETRUN_RECORDER_FINGERPRINT_H
#define DETRUN_RECORDER_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

#define FNV64_INIT 0xcbf29ce484222325ULL
#define FNV32_INIT 0x811c9dc5u

static inline uint64_t fnv64(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static inline uint32_t fnv32(uint32_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x01000193u;
	return h;
}

/* FNV-1a 64 of a whole file's bytes through descriptor fd (read with pread from 0).
 * Returns 0 with *hash and *size set, or -errno. */
int fingerprint_fd(int fd, uint64_t *hash, uint64_t *size);

#endif
