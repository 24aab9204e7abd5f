/*
 * Helpers shared by the syscall handlers (sys_*.c). Handlers run at a seccomp stop with the
 * task's registers loaded and return after doing one of four things: nothing (the call runs
 * natively), syscall_emulate() (detrun's result, the call is skipped), sched_park() (the call
 * waits), or tracer_want_exit() (the call runs and the handler sees its result).
 */
#ifndef DETRUN_SUPERVISOR_SYS_COMMON_H
#define DETRUN_SUPERVISOR_SYS_COMMON_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "supervisor/remote.h"
#include "supervisor/tracer.h"

#define SIGBIT(s) (1ULL << ((s)-1))

/* Signals a terminal sends to its whole foreground group: Ctrl-C, Ctrl-\, Ctrl-Z, a
 * resize, a hangup. While a shim intercepts, the copies the terminal gives each task are
 * dropped and detrun passes its own on at a logged point (tracer.c); a pending one counts
 * only where proc->terminal_due says it was really delivered (or sent by a member). */
#define TERMINAL_SIGNALS (SIGBIT(SIGINT) | SIGBIT(SIGQUIT) | SIGBIT(SIGTSTP) | \
			  SIGBIT(SIGWINCH) | SIGBIT(SIGHUP))

/* A futex (or thread-exit) wake: the parked waiter's call returns 0. */
void futex_woken(struct task *t);

/* Descriptors made inside the group (pipes, socketpairs, eventfds): waiting on them can
 * never need input from outside. */
void internal_files_add(struct task *t, int tracee_fd);
bool internal_file(int supervisor_fd);

/* Parks t on supervisor descriptors `fds` (ownership passes to the wait) until one is
 * ready, the virtual deadline passes (on_timeout) or a signal interrupts. */
void park_on_fds(struct task *t, const char *what, struct pollfd *fds, int nfds,
		 int64_t deadline, void (*on_timeout)(struct task *), bool restartable);
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

/* A relative or absolute timespec argument turned into a virtual monotonic deadline;
 * returns -EFAULT/-EINVAL for bad arguments. */
int deadline_from_timespec(struct task *t, uint64_t addr, bool absolute, clockid_t clk,
			   int64_t *deadline);
/* Reads a sigset argument (NULL pointer: *mask untouched, returns 0). */
int read_sigmask(struct task *t, uint64_t addr, uint64_t size, uint64_t *mask, bool *present);

void sys_random_seed(uint64_t seed);

/* Calls that name another process (sys_reach.c): confined to members of the group. At a
 * signal-sending call's seccomp stop: true if the call was refused or done here. */
bool reach_signal_refused(struct task *t);
/* At fcntl's seccomp stop: F_SETOWN(_EX) naming a non-member is refused (true). */
bool reach_owner_refused(struct task *t);
/* At ioctl's stop (the filter stops FIOSETOWN and SIOCSPGRP even without a shim). */
bool reach_ioctl_owner_refused(struct task *t);
void reach_set_namespaced(bool yes);

/* The group boundary (sys_external.c). Objects outside are known by identity; this
 * registers an inherited one (its writes are output and run, in replay too). */
void external_register(int supervisor_fd);
bool external_object(int supervisor_fd);
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

/* stat(2) of a path argument as task t sees it (relative to dirfd, its cwd or root); with
 * `parent`, of the directory holding it. 0 or -errno. */
int stat_path(struct task *t, int dirfd, uint64_t addr, bool parent, bool follow,
	      struct stat *st);
/* sys_files.c's handling of opens (stamping, fingerprints); sys_open_fifo comes first. */
void sys_open(struct task *t);

/* Files: call files_init() before the program starts; files_written() stamps a regular
 * file the group wrote through descriptor `tfd`. */
void files_init(void);
/* t has just executed a new program: the shim fingerprints it like a file read. */
void files_executed(struct task *t);

/* Virtual timers (sys_timer.c). */
int64_t timers_next_deadline(void);   /* earliest armed deadline, -1 for none */
/* Earliest deadline of a timer that signals process tgid (any process for tgid 0), -1. */
int64_t timers_next_signal(pid_t tgid);
void timers_fire(void);               /* fires every timer due at the current virtual time */
bool timers_fix_siginfo(struct task *t, int sig); /* at a signal stop: a timer's siginfo */
/* After sigtimedwait took signal `sig`: a timer's siginfo, written at info_addr (if any). */
void timers_fix_waited_siginfo(struct task *t, int sig, uint64_t info_addr);
void timers_process_gone(pid_t tgid, bool exec_only);
/* The last thread of t's process is exiting: its peak size counts for its parent's
 * getrusage(RUSAGE_CHILDREN). */
void rusage_process_exiting(struct task *t);
void files_written(struct task *t, int tfd);
uint64_t files_virtual_ino(uint64_t dev, uint64_t ino);
uint64_t files_virtual_dev(uint64_t dev);
/* A mount id as mountinfo and fdinfo show it (unique: statx's 64-bit STATX_MNT_ID_UNIQUE). */
uint64_t proc_virtual_mount_id(uint64_t id, bool unique);

/* At a read(2) of supervisor descriptor `fd`: if it is a /proc view detrun rewrites
 * (/proc/PID/{stat,status,maps,mountinfo,fdinfo/N}, the random uuid and boot id), answer
 * the read and return true. */
bool proc_view_read(struct task *t, int fd);
/* At an ioctl or getsockopt that returns a kernel-wide id (FS_IOC_GETVERSION, SO_COOKIE):
 * the call runs and its answer is renumbered; true if it is one. */
bool kernel_id_call(struct task *t);
void random_fill(void *buf, size_t len);
/* Fills tracee memory with seeded random bytes: the count written, or -EFAULT. */
int64_t random_to_tracee(struct task *t, uint64_t addr, uint64_t len);

#endif
