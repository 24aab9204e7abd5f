/*
 * What calls on notification descriptors and sockets show the program of the host: values
 * a machine-wide counter, the kernel's random choice or the real clock picked, which
 * differ from run to run although the group did the same. Each is rewritten at the
 * call's exit (tracer_want_view) into a value drawn from a per-group sequence in the order
 * the group first sees it, so that every run shows the same.
 *
 *   - inotify rename cookies (sys_notify.c): IN_MOVED_FROM and IN_MOVED_TO of one rename
 *     share a cookie from a kernel-wide counter; the group sees 1, 2, 3 ... in the order
 *     its reads meet them, a pair still sharing one.
 *   - sockets (sys_netview.c): ports the kernel picks (bind to port 0, connect without
 *     bind), abstract names unix autobind picks, receive timestamps, the CPU a packet came
 *     in on, TCP_INFO's timings.
 */
#ifndef DETRUN_SUPERVISOR_SYS_VIEWS_H
#define DETRUN_SUPERVISOR_SYS_VIEWS_H

#include "vkernel/task.h"

/* At the stop of a read, readv, recvfrom, recvmsg or recvmmsg on the task's descriptor
 * tfd, inside the group (not the shim's), whose file type (S_IFMT bits, 0 for an anonymous
 * inode) the caller has looked up: asks for the view its kind needs (sys_netview.c: a
 * socket's addresses and timestamps; an inotify instance's cookies). */
void views_want_read(struct task *t, int tfd, mode_t type);

/* ---- sys_notify.c ---- */
/* The view of a completed read or readv on an inotify descriptor: cookies renumbered. */
void notify_view_read(struct task *t);

/* ---- sys_netview.c (plain runs: while a shim intercepts, sockets are the shim's) ---- */
/* Where connect, or a datagram sendto, is about to run: the address it takes, real. */
void netview_connect(struct task *t);
void netview_send(struct task *t);
/* At accept's stop: the peer's address it returns, shown virtual. */
void netview_accept(struct task *t);
/* getsockopt and ioctl requests that report time or a CPU: true when handled. */
bool netview_call(struct task *t);

#endif
