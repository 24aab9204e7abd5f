/*
 * Arguments several handlers read the same way (sys_common.c), and the random bytes
 * several write (sys_misc.c).
 */
#ifndef DETRUN_SUPERVISOR_SYS_ARGS_H
#define DETRUN_SUPERVISOR_SYS_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "vkernel/task.h"

/* A relative or absolute timespec argument turned into a virtual monotonic deadline;
 * returns -EFAULT/-EINVAL for bad arguments. */
int deadline_from_timespec(struct task *t, uint64_t addr, bool absolute, clockid_t clk,
			   int64_t *deadline);
/* Reads a sigset argument (NULL pointer: *mask untouched, returns 0). */
int read_sigmask(struct task *t, uint64_t addr, uint64_t size, uint64_t *mask, bool *present);
/* Where the signal mask t's call installs or waits for is, as its row's kinds say: its
 * address (0 for none or a call without one) and size; -EFAULT when pselect6's
 * { sigset, size } pair cannot be read. */
int call_sigmask_at(struct task *t, uint64_t *addr, uint64_t *size);
/* Reads that mask, as read_sigmask. */
int call_sigmask(struct task *t, uint64_t *mask, bool *present);

/* Fills tracee memory with bytes of the seeded random stream (vkernel/random.h): the count
 * written, or -EFAULT. */
int64_t random_to_tracee(struct task *t, uint64_t addr, uint64_t len);

#endif
