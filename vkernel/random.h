/*
 * The seeded randomness behind getrandom, /dev/urandom and AT_RANDOM (sys_misc.c).
 */
#ifndef DETRUN_SUPERVISOR_SYS_RANDOM_H
#define DETRUN_SUPERVISOR_SYS_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#include "vkernel/task.h"

void sys_random_seed(uint64_t seed);
void random_fill(void *buf, size_t len);
/* Fills tracee memory with seeded random bytes: the count written, or -EFAULT. */
int64_t random_to_tracee(struct task *t, uint64_t addr, uint64_t len);

#endif
