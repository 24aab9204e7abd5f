/* The shim between the replay and record shims on a replica. A follower's hooks are the
 * replay shim's, each first making sure the next record is there — or finding that this
 * replica just took over, and then answering as the leader does. Going live happens at a
 * point every replica reaches with the same records consumed (the first look for a record
 * past the last one): the new leader appends a go-live mark there and records from then
 * on; the other followers check that they stand at the mark's logical time, skip it and
 * replay what it records. Listening sockets are bound for real on every replica at the
 * replayed bind (in a network namespace of its own a replica has the port the leader has;
 * in the leader's it is taken, and bound when going live instead), and listen for real
 * only on a new leader: a follower that listened would complete handshakes it never
 * accepts, where a client should be refused and try the next node. Connections from
 * before are stand-ins that were never connected, so the program finds them failed on the
 * new leader, and the same results are replayed on every follower. */
#include "replicate/replicate.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "shim/shim.h"
#include "syscalls/syscall_table.h"
#include "engine/remote.h"
#include "engine/tracer.h"
#include "vkernel/report.h"

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
	bool bound; /* bound for real here at the replayed bind */
	bool listening;
};
static struct listener listeners[MAX_LISTENERS];
static int n_listeners;
static bool said_in_use;

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

static struct task *task_of(pid_t tgid)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if (t->proc && t->proc->tgid == tgid)
			return t;
	return NULL;
}

/* "127.0.0.1:11211", "[::1]:80", "/run/x.sock" or "@abstract" */
static const char *addr_text(const struct listener *l, char *buf, size_t len)
{
	const struct sockaddr *sa = (const struct sockaddr *)l->addr;
	char host[INET6_ADDRSTRLEN] = "?";
	snprintf(buf, len, "an address of family %d", sa->sa_family);
	if (sa->sa_family == AF_INET && l->addr_len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)l->addr;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6 && l->addr_len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)l->addr;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else if (sa->sa_family == AF_UNIX && l->addr_len > sizeof(sa_family_t)) {
		const struct sockaddr_un *un = (const void *)l->addr;
		int n = (int)(l->addr_len - sizeof(sa_family_t));
		snprintf(buf, len, "%s%.*s", un->sun_path[0] ? "" : "@", n - !un->sun_path[0],
			 un->sun_path + !un->sun_path[0]);
	}
	return buf;
}

/* Binds (if `bind_it`) and listens (if `listen_it`) the program's socket for real, on
 * detrun's duplicate of it (the same socket), at the address and backlog the program
 * gave: 0 or -errno. Going live, with SO_REUSEADDR: in a namespace shared with the old
 * leader, its connections may have left the port in TIME_WAIT. */
static int for_real(const struct listener *l, bool bind_it, bool listen_it)
{
	struct task *t = task_of(l->tgid);
	int fd = t ? remote_dup_fd(t, l->fd) : -ESRCH;
	if (fd < 0)
		return fd;
	int one = 1, err = 0;
	if (listen_it)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind_it && bind(fd, (const struct sockaddr *)l->addr, l->addr_len) < 0)
		err = -errno;
	if (!err && listen_it && listen(fd, l->backlog) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* A replayed SO_REUSEADDR or SO_REUSEPORT that succeeded is set for real: the socket
 * binds early as the leader's did (after a restart its node may still hold connections
 * of its earlier run in TIME_WAIT). */
static void mirror_reuse(const struct shim_call *c)
{
	int v;
	if (c->ret != 0 || c->args[1] != SOL_SOCKET ||
	    (c->args[2] != SO_REUSEADDR && c->args[2] != SO_REUSEPORT) || c->args[4] != sizeof(v) ||
	    remote_read(c->task, REMOTE(c->args[3]), &v, sizeof(v)))
		return;
	int fd = remote_dup_fd(c->task, c->fd);
	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, (int)c->args[2], &v, sizeof(v));
	close(fd);
}

/* A follower binds at the replayed bind: the port is reserved from then on, and a node
 * where the leader's bind cannot succeed says so now, not when it takes over. */
static void bind_early(struct listener *l, struct task *t)
{
	char where[160];
	int err = for_real(l, true, false);
	l->bound = err == 0;
	if (err == -EADDRINUSE) {
		if (!said_in_use)
			task_warn(t,
				  "replicate: %s is in use on this node (by a replica in the "
				  "same network namespace?); this replica binds it when it goes "
				  "live",
				  addr_text(l, where, sizeof(where)));
		said_in_use = true;
	} else if (err) {
		task_warn(t,
			  "replicate: node %s cannot bind %s, which the leader bound: %s; as "
			  "leader it could not serve there",
			  link_->node, addr_text(l, where, sizeof(where)), strerror(-err));
	}
}

static bool unix_path(const struct listener *l)
{
	const struct sockaddr_un *un = (const void *)l->addr;
	return un->sun_family == AF_UNIX && l->addr_len > sizeof(sa_family_t) && un->sun_path[0];
}

/* A replayed bind or listen that succeeded: bound here and remembered for going live. */
static void note_listener(const struct shim_call *c)
{
	if (c->nr == SYS_setsockopt)
		mirror_reuse(c);
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
	l->bound = false;
	l->addr_len = c->args[2] < sizeof(l->addr) ? (socklen_t)c->args[2] : sizeof(l->addr);
	if (remote_read(c->task, REMOTE(c->args[1]), l->addr, l->addr_len))
		l->addr_len = 0;
	else if (unix_path(l))
		l->bound = true; /* the replayed bind made its file already (sys_external.c) */
	else
		bind_early(l, c->task);
}

/* The program's listening sockets listen for real here now (those a replica sharing the
 * old leader's network namespace could not bind early are bound first). */
static void listen_for_real(void)
{
	char where[160];
	for (int i = 0; i < n_listeners; i++) {
		struct listener *l = &listeners[i];
		if (!l->listening || !l->addr_len)
			continue;
		int err = for_real(l, !l->bound, true);
		if (err && err != -ESRCH && err != -EBADF)
			fprintf(stderr,
				"detrun: replicate: warning: the program's listening socket "
				"%d (%s) cannot listen here: %s; clients cannot reach this "
				"leader there\n",
				l->fd, addr_text(l, where, sizeof(where)), strerror(-err));
	}
}

/* Goes live where the source took the lease: true, or false when the stream refused the
 * go-live mark. On nats-server 2.9 two followers can both win the lease's create after a
 * quorum loss (see rep_lease_let_go); the stream, which takes appends after one expected
 * sequence only, lets one of them through. The other never acted as a leader: it lets the
 * lease go and follows on, and meets the winner's mark where it stands. */
static bool go_live(void)
{
	uint64_t epoch, last_seq;
	rep_source_took_over(source, &epoch, &last_seq);
	if (rep_lease_keep(link_))
		shim_abort(NULL, "replicate: cannot start renewing the lease");
	struct input_sink *s = rep_sink_create(link_, epoch, last_seq);
	int refused = s ? rep_sink_golive(s, sched_now()) : -1;
	if (refused < 0)
		shim_abort(NULL, "replicate: cannot go live: %s", link_->why);
	if (refused) {
		s->close(s);
		rep_lease_let_go();
		rep_source_follow_again(source);
		fprintf(stderr,
			"detrun: replicate: node %s took the lease (epoch %llu), but the stream "
			"refused its go-live mark after sequence %llu: another node went live "
			"first; this one follows on\n",
			link_->node, (unsigned long long)epoch, (unsigned long long)last_seq);
		return false;
	}
	sink = s;
	listen_for_real();
	fprintf(stderr,
		"detrun: replicate: node %s leads from t=%llu (epoch %llu, after stream "
		"sequence %llu)\n",
		link_->node, (unsigned long long)sched_now(), (unsigned long long)epoch,
		(unsigned long long)last_seq);
	record_shim_continue(sink);
	rep_replica_lead(link_, sink);
	return true;
}

/* What --status shows of a follower: every record consumed so far, also those no event
 * followed before it waits for the next (a drained follower is seen drained). */
static void progressed(void)
{
	rep_progress_set(false, sched_now(), rep_source_seq(source));
}

/* The next record is there (true), or this replica leads now (false). */
static bool following(void)
{
	if (shim_get() != &follower)
		return false;
	progressed();
	while (!rep_source_wait(source)) {
		if (go_live())
			return false;
	}
	return true;
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

/* A signal from outside that does not end the run (SIGCONT after a pause, SIGUSR1) is this
 * node's alone: the leader's program never got it, so the replay would stop at it as at a
 * divergence. A follower ignores it, says so once per signal, and shows it in --status. */
static void ignore_on_follower(int sig, uint64_t time)
{
	static uint64_t said;
	if (said & (1ULL << (sig - 1)))
		return;
	said |= 1ULL << (sig - 1);
	rep_progress_ignored(sig);
	fprintf(stderr,
		"detrun: replicate: node %s: %s (signal %d) from outside ignored at t=%llu: a "
		"follower stops only for SIGINT, SIGTERM, SIGHUP or SIGQUIT, and the leader's "
		"program never got it\n",
		link_->node, strsignal(sig), sig, (unsigned long long)time);
}

static void follower_signals(uint64_t time, const int *pending, int n, void (*deliver)(int))
{
	progressed();
	int ending[64], k = 0;
	for (int i = 0; i < n && k < 64; i++) {
		if (pending[i] == SIGKILL || outside_signal_ends_run(pending[i]))
			ending[k++] = pending[i];
		else if (pending[i] > 0 && pending[i] <= 64)
			ignore_on_follower(pending[i], time);
	}
	replay_ops->signals(time, ending, k, deliver);
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

/* The group's first change of a path: the replay puts the leader's before-image back on
 * this replica's file (shim/replay.c); once leading, the recording keeps it. */
static void follower_file_changing(struct task *t, uint64_t time, const char *path, int dirfd,
				   const char *name)
{
	if (!following()) {
		leader.file_changing(t, time, path, dirfd, name);
		return;
	}
	replay_ops->file_changing(t, time, path, dirfd, name);
}

static void follower_event(struct task *t, uint64_t time, long nr)
{
	progressed();
	replay_ops->event(t, time, nr);
	progressed();
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

/* A go-live mark at stream sequence `seq` (body: 8 bytes of epoch, the node's name). It
 * was appended where its node stopped replaying, the first look past the last record,
 * and this replica must stand at that same logical time: another is a divergence. */
void rep_replica_saw_golive(uint64_t time, const uint8_t *body, size_t len, uint64_t seq)
{
	uint64_t epoch = 0;
	for (size_t i = 0; i < 8 && i < len; i++)
		epoch |= (uint64_t)body[i] << (8 * i);
	int n = len > 8 ? (int)(len - 8 < 64 ? len - 8 : 64) : 0;
	if (time != sched_now())
		shim_abort(NULL,
			   "replicate: diverged: node %.*s went live at t=%llu (stream "
			   "sequence %llu), where this replica stands at t=%llu",
			   n, (const char *)body + 8, (unsigned long long)time,
			   (unsigned long long)seq, (unsigned long long)sched_now());
	fprintf(stderr,
		"detrun: replicate: node %s: node %.*s leads from t=%llu (epoch %llu, after "
		"stream sequence %llu), here at the same logical time\n",
		link_->node, n, (const char *)body + 8, (unsigned long long)time,
		(unsigned long long)epoch, (unsigned long long)seq - 1);
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
		.file_changing = follower_file_changing,
		.event = follower_event,
		.finish = follower_finish,
	};
	shim_set(&follower);
}

/* ---- leading ---- */

/* Also the stream's side: appends refused, or unacknowledged for a minute, stop the
 * leader between syncs (its replies are held meanwhile: outputs.c). */
static void check_lease(void)
{
	if (rep_lease_lost())
		shim_abort(NULL,
			   "replicate: node %s lost the lease: another node leads; this "
			   "one stops",
			   link_->node);
	if (rep_sink_check(sink))
		shim_abort(NULL, "replicate: %s", link_->why);
}

/* A non-blocking send (the descriptor's O_NONBLOCK, or MSG_DONTWAIT) */
static bool nonblocking_send(const struct shim_call *c)
{
	int flags_arg = syscall_msg_flags_arg(syscall_lookup(c->nr));
	if (flags_arg >= 0 && (c->args[flags_arg] & MSG_DONTWAIT))
		return true;
	int fd = remote_dup_fd(c->task, c->fd);
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : 0;
	if (fd >= 0)
		close(fd);
	return fl > 0 && (fl & O_NONBLOCK);
}

/* Nothing leaves the node before every input before it is in the stream. A send to a
 * client is held until then while the group goes on (output commit: outputs.c); any
 * other call that lets something out runs once every append so far is acknowledged and
 * what is held on its descriptor has left. Receives and waits let nothing out: appends
 * before them stay in flight. */
static bool leader_control(struct shim_call *c)
{
	check_lease();
	if (!syscall_lets_out(syscall_lookup(c->nr)))
		return false;
	enum hold h = rep_outputs_hold(c, rep_sink_seq(sink));
	if (h == HOLD_DONE || (h == HOLD_FULL && nonblocking_send(c))) {
		if (h == HOLD_FULL)
			c->ret = -EAGAIN; /* as from a full buffer: the program polls */
		record_ops->monitor(c);
		c->sent_digest = 0; /* the bytes were digested from the program's memory */
		return true;
	}
	if (sink->sync && sink->sync(sink))
		shim_abort(c->task, "replicate: %s", link_->why);
	rep_outputs_drain(c->task, c->fd);
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
	if (rep_sink_check(sink)) /* a batch open too long is committed */
		shim_abort(t, "replicate: %s", link_->why);
	rep_progress_set(true, time, rep_sink_seq(sink));
}

/* The record shim's end waits for every acknowledgement; then what is held leaves. */
static int leader_finish(uint64_t time, int code)
{
	rep_sink_closing(sink);
	int r = record_ops->finish(time, code);
	if (r == code)
		rep_outputs_finish();
	return r;
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
	leader.finish = leader_finish;
	if (rep_outputs_start())
		shim_abort(NULL, "replicate: cannot start the thread that sends replies");
	shim_set(&leader);
}
