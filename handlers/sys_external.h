/*
 * The group boundary (sys_external.c): calls on objects outside go to the shim.
 */
#ifndef DETRUN_SUPERVISOR_SYS_EXTERNAL_H
#define DETRUN_SUPERVISOR_SYS_EXTERNAL_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "vkernel/task.h"

/* The group boundary (sys_external.c). Objects outside are known by identity; this
 * registers an inherited one (its writes are output and run, in replay too). */
void external_register(int supervisor_fd);
bool external_object(int supervisor_fd);
/* Registers an object the group's output goes to (standard output and error, channels
 * inherited from outside). At the entry of a call that writes from memory to tracee
 * descriptor tfd, external_output_call hands what it wrote there to the shim at its exit
 * (record logs a digest, replay checks it); nothing when tfd is not output or no shim
 * wants output. */
void external_register_output(int supervisor_fd);
void external_output_call(struct task *t, int tfd);
/* At the start of a handler: when a shim intercepts and tracee descriptor tfd is outside,
 * the call is handled there (parked until the shim says `wait_events` are ready, or
 * performed) and true is returned. wait_events 0: the call never waits. */
bool external_fd_call(struct task *t, int tfd, short wait_events);
/* Calls on a set of descriptors (poll, select, epoll), duplicated into `fds`: is one of
 * them outside (and a shim intercepts)? Then external_wait_set parks the call until the
 * shim says it is ready or the deadline passes (zero_timeout then rewrites the call's
 * timeout), or performs it at once for a zero timeout. It owns fds. */
bool external_any(const struct pollfd *fds, int nfds);
void external_wait_set(struct task *t, struct pollfd *fds, int nfds, int64_t deadline,
		       void (*zero_timeout)(struct task *));
/* An outside wait that installs its own signal mask (ppoll, pselect6, epoll_pwait) and
 * that a signal ends: it runs as a ppoll on no descriptor with that mask, so the kernel
 * delivers the signal exactly as it would, and no outside descriptor is asked. */
void external_wait_interrupted(struct task *t);
/* A call whose result comes from outside whatever its arguments (a real-clock read): the
 * shim answers it, or it runs and the shim sees the result. */
void external_perform(struct task *t);

#endif
