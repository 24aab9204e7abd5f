/* The shim between the replay and record shims on a replica. A follower's hooks are the
 * replay shim's, each first making sure the next record is there — or finding that this
 * replica just took over, and then answering as the leader does. Going live happens at a
 * point every replica reaches with the same records consumed (the first look for a record
 * past the last one): the new leader appends a go-live mark there and records from then
 * on; the other followers skip the mark and replay what it records. Listening sockets,
 * which replay never binds, are bound and listened to for real on the new leader, from
 * the addresses the program gave; connections from before are stand-ins that were never
 * connected, so the program finds them failed on the new leader, and the same results
 * are replayed on every follower. */
#include "replicate/replicate.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "shim/shim.h"
#include "syscalls/syscall_table.h"
#include "supervisor/remote.h"

#define MAX_LISTENERS 32
#define WAIT_SLICE_MS 500 /* a leader waiting for clients notices a lost lease this soon */

static struct rep_link *link_;
static struct input_source *source;
static struct input_sink *sink;
static const struct shim_ops *replay_ops, *record_ops;
static struct shim_ops follower, leader;

struct listener {
	pid_t tgid;
	int fd;
	uint8_t addr[128];
	socklen_t addr_len;
	int backlog;
	bool listening;
};
static struct listener listeners[MAX_LISTENERS];
static int n_listeners;

static struct listener *listener_of(pid_t tgid, int fd, bool add)
{
	for (int i = 0; i < n_listeners; i++)
		if (listeners[i].tgid == tgid && listeners[i].fd == fd)
			return &listeners[i];
	if (!add || n_listeners == MAX_LISTENERS)
		return NULL;
	listeners[n_listeners] = (struct listener){ .tgid = tgid, .fd = fd };
	return &listeners[n_listeners++];
}

/* A replayed bind or listen that succeeded: remembered for going live. */
static void note_listener(const struct shim_call *c)
{
	if (c->ret != 0 || (c->nr != SYS_bind && c->nr != SYS_listen))
		return;
	struct listener *l = listener_of(c->task->proc->tgid, c->fd, c->nr == SYS_bind);
	if (!l)
		return;
	if (c->nr == SYS_listen) {
		l->listening = true;
		l->backlog = (int)c->args[1];
		return;
	}
	l->addr_len = c->args[2] < sizeof(l->addr) ? (socklen_t)c->args[2] : sizeof(l->addr);
	if (remote_read(c->task, REMOTE(c->args[1]), l->addr, l->addr_len))
		l->addr_len = 0;
}

static struct task *task_of(pid_t tgid)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if (t->proc && t->proc->tgid == tgid)
			return t;
	return NULL;
}

/* The program's listening sockets listen for real here now (on detrun's duplicate of
 * each: the same socket). */
static void listen_for_real(void)
{
	for (int i = 0; i < n_listeners; i++) {
		struct listener *l = &listeners[i];
		struct task *t = l->listening && l->addr_len ? task_of(l->tgid) : NULL;
		int fd = t ? remote_dup_fd(t, l->fd) : -1;
		if (fd < 0)
			continue;
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)l->addr, l->addr_len) < 0 ||
		    listen(fd, l->backlog) < 0)
			fprintf(stderr,
				"detrun: replicate: warning: the program's listening socket "
				"%d cannot listen here: %m; clients cannot reach this leader\n",
				l->fd);
		close(fd);
	}
}

static void go_live(void)
{
	uint64_t epoch, last_seq;
	rep_source_took_over(source, &epoch, &last_seq);
	if (rep_lease_keep(link_))
		shim_abort(NULL, "replicate: cannot start renewing the lease");
	sink = rep_sink_create(link_, epoch, last_seq);
	if (!sink || rep_sink_golive(sink, sched_now()))
		shim_abort(NULL, "replicate: cannot go live: %s", link_->why);
	listen_for_real();
	fprintf(stderr,
		"detrun: replicate: node %s leads from t=%llu (epoch %llu, after stream "
		"sequence %llu)\n",
		link_->node, (unsigned long long)sched_now(), (unsigned long long)epoch,
		(unsigned long long)last_seq);
	record_shim_continue(sink);
	rep_replica_lead(link_, sink);
}

/* The next record is there (true), or this replica leads now (false). */
static bool following(void)
{
	if (shim_get() != &follower)
		return false;
	if (rep_source_wait(source))
		return true;
	go_live();
	return false;
}

static void after_replay(void)
{
	uint64_t epoch, seq;
	if (shim_get() == &follower && rep_source_took_over(source, &epoch, &seq))
		go_live();
}

static bool follower_control(struct shim_call *c)
{
	if (!following())
		return leader.control(c);
	bool done = replay_ops->control(c);
	note_listener(c);
	return done;
}

static bool follower_ready(struct task *t, uint64_t time, bool native)
{
	if (!following())
		return false; /* asked again as the leader, with the kernel's answer */
	return replay_ops->ready(t, time, native);
}

static int follower_wait(uint64_t time, struct pollfd *fds, int nfds, int timeout_ms,
			 int (*real_wait)(struct pollfd *, int, int))
{
	if (timeout_ms != 0 && !following())
		return leader.wait_outside(time, fds, nfds, timeout_ms, real_wait);
	return replay_ops->wait_outside(time, fds, nfds, timeout_ms, real_wait);
}

static void follower_signals(uint64_t time, const int *pending, int n, void (*deliver)(int))
{
	replay_ops->signals(time, pending, n, deliver);
	after_replay();
}

static void follower_file(struct task *t, uint64_t time, const char *path, uint64_t size,
			  uint64_t hash)
{
	if (!following()) {
		leader.file_opened(t, time, path, size, hash);
		return;
	}
	replay_ops->file_opened(t, time, path, size, hash);
}

static void follower_event(struct task *t, uint64_t time, long nr)
{
	replay_ops->event(t, time, nr);
	rep_progress_set(false, time, rep_source_seq(source));
	after_replay();
}

static int follower_finish(uint64_t time, int code)
{
	int r = replay_ops->finish(time, code);
	if (r == code)
		fprintf(stderr,
			"detrun: replicate: the program ended with status %d at t=%llu "
			"on the leader and here alike: a replicated end, not a leader failure\n",
			code, (unsigned long long)time);
	return r;
}

void rep_replica_follow(struct rep_link *l, struct input_source *src)
{
	link_ = l;
	source = src;
	replay_ops = shim_get();
	follower = (struct shim_ops){
		.name = "replicate-follower",
		.control = follower_control,
		.ready = follower_ready,
		.decides_readiness = true,
		.wait_outside = follower_wait,
		.signals = follower_signals,
		.file_opened = follower_file,
		.event = follower_event,
		.finish = follower_finish,
	};
	shim_set(&follower);
}

/* ---- leading ---- */

static void check_lease(void)
{
	if (rep_lease_lost())
		shim_abort(NULL,
			   "replicate: node %s lost the lease: another node leads; this "
			   "one stops",
			   link_->node);
}

/* Does the call let something leave the node (bytes sent, a connection made or shut)?
 * Receives and waits do not: appends before them stay in flight. */
static bool lets_out(long nr)
{
	return syscall_sends(syscall_lookup(nr)) || nr == SYS_shutdown || nr == SYS_connect;
}

/* Before anything leaves the node, every input so far is in the stream. */
static bool leader_control(struct shim_call *c)
{
	check_lease();
	if (lets_out(c->nr) && sink->sync && sink->sync(sink))
		shim_abort(c->task, "replicate: %s", link_->why);
	return false;
}

static int (*real_wait_fn)(struct pollfd *, int, int);

/* Waits in slices, so that a leader idle for a long time notices a lost lease. */
static int sliced_wait(struct pollfd *fds, int nfds, int timeout_ms)
{
	for (;;) {
		int slice = timeout_ms < 0 || timeout_ms > WAIT_SLICE_MS ? WAIT_SLICE_MS
									 : timeout_ms;
		int r = real_wait_fn(fds, nfds, slice);
		if (r != 0 || slice == timeout_ms)
			return r;
		check_lease();
		if (timeout_ms > 0)
			timeout_ms -= slice;
	}
}

static int leader_wait(uint64_t time, struct pollfd *fds, int nfds, int timeout_ms,
		       int (*real_wait)(struct pollfd *, int, int))
{
	real_wait_fn = real_wait;
	return record_ops->wait_outside(time, fds, nfds, timeout_ms, sliced_wait);
}

static void leader_event(struct task *t, uint64_t time, long nr)
{
	record_ops->event(t, time, nr);
	rep_progress_set(true, time, rep_sink_seq(sink));
}

void rep_replica_lead(struct rep_link *l, struct input_sink *s)
{
	link_ = l;
	sink = s;
	record_ops = shim_get();
	leader = *record_ops;
	leader.name = "replicate-leader";
	leader.control = leader_control;
	leader.wait_outside = leader_wait;
	leader.event = leader_event;
	shim_set(&leader);
}
