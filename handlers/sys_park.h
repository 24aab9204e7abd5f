/*
 * How a handler makes a call wait without blocking the group: parked on descriptors
 * (sys_fd.c), retried in its non-blocking form (sys_common.c), or on a futex (sys_futex.c).
 */
#ifndef DETRUN_SUPERVISOR_SYS_PARK_H
#define DETRUN_SUPERVISOR_SYS_PARK_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "scheduler/scheduler.h"
#include "vkernel/task.h"

/* A futex (or thread-exit) wake: the parked waiter's call returns 0. */
void futex_woken(struct task *t);

/* Descriptors made inside the group (pipes, socketpairs, eventfds): waiting on them can
 * never need input from outside. */
void internal_files_add(struct task *t, int tracee_fd);
bool internal_file(int supervisor_fd);

/* Parks t on supervisor descriptors `fds` (ownership passes to the wait) until one is
 * ready, the virtual deadline passes (on_timeout) or a signal interrupts. */
void park_on_fds(struct task *t, const char *what, struct pollfd *fds, int nfds, int64_t deadline,
		 void (*on_timeout)(struct task *), bool restartable);
bool fds_ready_now(struct pollfd *fds, int nfds);
/* The same as task t would find them: a signalfd by t's pending signals, an epoll set
 * holding one item by item (sys_fd.c). */
bool fds_ready_for(struct task *t, struct pollfd *fds, int nfds);

/* For calls that have a non-blocking form: run it non-blocking (arg `arg` replaced by
 * `nonblocking`); if it would have blocked, restore the argument, rewind and park until
 * `changed` says retrying may succeed. */
struct retry {
	const char *what;
	int arg;
	bool (*would_block)(struct task *t); /* at the exit stop */
	enum wait_result (*changed)(struct task *t);
	uint64_t (*epoch)(void);
};
void retry_nonblocking(struct task *t, const struct retry *r, uint64_t nonblocking);

#endif
