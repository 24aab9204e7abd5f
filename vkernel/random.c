#include "vkernel/random.h"

/* splitmix64: small, seedable, and the same on every machine. */
static uint64_t rng_state;

void random_seed(uint64_t seed)
{
	rng_state = seed;
}

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void random_fill(void *buf, size_t len)
{
	unsigned char *out = buf;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t r = rng_next();
		for (size_t b = 0; b < 8 && i + b < len; b++)
			out[i + b] = (unsigned char)(r >> (8 * b));
	}
}
