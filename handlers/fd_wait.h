/* What the descriptor handlers (sys_fd.c, sys_poll.c, sys_splice.c) share: a descriptor's
 * kind as a blocking call sees it, readiness that depends on the reader (sys_fd_ready.c),
 * and whether a call on a descriptor would sleep. */
#ifndef DETRUN_SUPERVISOR_FD_WAIT_H
#define DETRUN_SUPERVISOR_FD_WAIT_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct task;

struct fd_info {
	mode_t type;
	bool nonblock;
	dev_t rdev;
};

/* Can a call on tracee descriptor `tfd` sleep? If so, returns a supervisor duplicate to
 * park on; -1 when the call never sleeps (non-blocking, a regular file, or an invalid
 * descriptor the kernel will reject). A call that can sleep always parks, even when its
 * descriptor is ready as it arrives: other tasks' turns come before its own, and what
 * they read or write decides whether it is still ready when it runs. (sys_fd.c) */
int must_wait(struct task *t, int tfd, struct fd_info *info);
bool is_random_device(const struct fd_info *info);
/* Bytes a write to this pipe or stream socket takes now without sleeping. (sys_fd.c) */
uint64_t room_for_write(int fd, mode_t type);

/* ---- sys_fd_ready.c ---- */
enum fd_kind {
	FD_OTHER,
	FD_SIGNALFD,
	FD_EPOLL,
	FD_INOTIFY
};
enum fd_kind fd_kind(int fd);
/* Is descriptor fd of process pid one of detrun's own files? */
bool fd_link_internal(pid_t pid, int fd);
/* Before the program starts: can it inherit a signalfd (one in detrun's own table)? */
void signalfds_at_start(void);
/* At a recvmsg or recvmmsg: may it bring a signalfd in (SCM_RIGHTS)? */
void signalfds_receive(struct task *t);
/* Does fd's readiness depend on who reads it (a signalfd, an epoll set holding one)? */
bool reader_dependent(struct task *t, int fd);
/* fd's ready events for task t, judged item by item through nested epoll sets. */
short revents_at(struct task *t, int fd, short events, int depth);
/* The descriptors an epoll set watches, through nested sets, as supervisor duplicates. */
struct pollfd *epoll_leaves(struct task *t, int epfd, int *n);
/* Is parked t's epoll set (its descriptor tfd, holding a signalfd) ready, as
 * revents_at judges it? Answered from what the wait remembers of the set while the set
 * is unchanged, so a look costs a few calls instead of a new listing; the wait's fds are
 * then the set's items. -1 when the set does not suit (nested sets): list it in full. */
int epoll_look(struct task *t, int tfd);

#endif
