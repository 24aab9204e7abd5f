/*
 * The seeded random stream behind getrandom, /dev/urandom, AT_RANDOM, RDRAND and the
 * virtual /proc's uuids: one stream per run, seeded by --seed, so every run draws the same
 * bytes in the same order.
 */
#ifndef DETRUN_VKERNEL_RANDOM_H
#define DETRUN_VKERNEL_RANDOM_H

#include <stddef.h>
#include <stdint.h>

void random_seed(uint64_t seed);
void random_fill(void *buf, size_t len);

#endif
