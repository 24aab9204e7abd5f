/* External calls: the group boundary, and how calls that cross it reach the active shim.
 *
 * What is outside: every socket made with socket(2) or accept(2) — a peer could be
 * anywhere, and a group talking to itself over TCP is simply recorded as both sides'
 * outside traffic — and the descriptors the program inherited from outside (a terminal, a
 * pipe or socket from the shell). They are known by the identity (device, inode) of the
 * object behind the descriptor, so dup, fork and fd passing change nothing. Pipes and
 * socketpairs made inside, regular files and devices stay internal: they are the group's
 * own state or its starting state.
 *
 * While a shim intercepts (record, replay, --shim), a call on an outside descriptor never
 * asks the kernel whether it would block — that answer is outside input too. A call that
 * may block (a read or accept on a blocking descriptor, a poll with a timeout) parks; the
 * shim says when it is ready (record: the kernel, logged; replay: the log). Then, or at
 * once for calls that do not block, it is performed: the shim supplies the result (replay,
 * control) or the call runs and the shim sees the result (record, monitor). Either way the
 * same events happen at the same logical times, which is what lets replay line up.
 *
 * A call's output — the bytes it leaves in the program's memory — is described once per
 * syscall, in its row of syscalls.def (outputs column), and turned into a list of regions
 * by call_outputs.c; recording reads them after the call, replay writes them back, in that
 * order. What a call sends is described by the row's data column.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "recorder/fingerprint.h"
#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "handlers/call_outputs.h"
#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_park.h"
#include "handlers/sys_reach.h"
#include "handlers/sys_external.h"
#include "handlers/sys_proc.h"
#include "handlers/sys_views.h"
#include "handlers/sys_args.h"
#include "syscalls/syscall_table.h"

/* ---- which objects are outside --------------------------------------------------------- */

/* Inherited channels (a terminal, the shell's pipe or socket) carry the program's output
 * too, which must reach them in replay as well; sockets the group made carry only traffic
 * with its peers, which replay answers. */
static struct object_id {
	dev_t dev;
	ino_t ino;
	bool inherited;
} * outside;
static size_t n_outside, cap_outside;

static const struct object_id *outside_object(const struct stat *st)
{
	for (size_t i = 0; i < n_outside; i++)
		if (outside[i].dev == st->st_dev && outside[i].ino == st->st_ino)
			return &outside[i];
	return NULL;
}

static void add_outside(int supervisor_fd, bool inherited)
{
	struct stat st;
	if (fstat(supervisor_fd, &st) < 0 || outside_object(&st))
		return;
	if (n_outside == cap_outside) {
		cap_outside = cap_outside ? 2 * cap_outside : 32;
		outside = realloc(outside, cap_outside * sizeof(*outside));
		if (!outside)
			abort();
	}
	outside[n_outside++] = (struct object_id){ st.st_dev, st.st_ino, inherited };
}

void external_register(int supervisor_fd)
{
	add_outside(supervisor_fd, true);
}

bool external_object(int supervisor_fd)
{
	struct stat st;
	return n_outside && fstat(supervisor_fd, &st) == 0 && outside_object(&st);
}

static void register_tracee_fd(struct task *t, int tfd)
{
	int fd = remote_dup_fd(t, tfd);
	if (fd >= 0) {
		add_outside(fd, false);
		close(fd);
	}
}

/* Is tracee descriptor tfd outside? *made tells whether it is a socket the group made. */
static bool outside_fd(struct task *t, int tfd, bool *made)
{
	if (!shim_intercepts() || tfd < 0)
		return false;
	int fd = remote_dup_fd(t, tfd);
	if (fd < 0)
		return false;
	struct stat st;
	const struct object_id *o = fstat(fd, &st) == 0 ? outside_object(&st) : NULL;
	*made = o && !o->inherited;
	close(fd);
	return o;
}

/* ---- what a call sends --------------------------------------------------------------------- */

static bool msg_dontwait(struct task *t)
{
	int arg = syscall_msg_flags_arg(syscall_lookup(t->syscall_nr));
	return arg >= 0 && (syscall_arg(t, arg) & MSG_DONTWAIT);
}

#define MAX_SENT_SPANS 64

/* The buffers a send hands over, in order: at most MAX_SENT_SPANS of them (MAX_IOVECS per
 * message, the first messages of a sendmmsg). */
struct spans {
	struct iovec v[MAX_SENT_SPANS];
	int n;
};

static int add_msg_spans(struct task *t, struct spans *s, uint64_t iov_addr, uint64_t count)
{
	struct iovec iov[MAX_IOVECS];
	if (count > MAX_IOVECS)
		count = MAX_IOVECS;
	if (remote_read(t, REMOTE(iov_addr), iov, count * sizeof(iov[0])))
		return -1;
	for (uint64_t i = 0; i < count && s->n < MAX_SENT_SPANS; i++)
		s->v[s->n++] = iov[i];
	return 0;
}

/* The bytes of the first `sent` messages of a sendmmsg: msg_len of each, which the kernel
 * (or, in replay, the log) filled in. */
static uint8_t *sent_messages(struct task *t, uint64_t sent, size_t *len)
{
	uint64_t addr = syscall_arg(t, 1);
	size_t total = 0, cap = 4096;
	uint8_t *buf = malloc(cap);
	for (uint64_t i = 0; buf && i < sent && i < MAX_SENT_SPANS; i++) {
		struct mmsghdr m;
		struct spans s = { .n = 0 };
		if (remote_read(t, REMOTE(addr + i * sizeof(m)), &m, sizeof(m)) ||
		    add_msg_spans(t, &s, (uint64_t)m.msg_hdr.msg_iov, m.msg_hdr.msg_iovlen))
			break;
		uint64_t left = m.msg_len;
		for (int k = 0; k < s.n && left; k++) {
			size_t take = s.v[k].iov_len < left ? s.v[k].iov_len : left;
			if (total + take > cap) {
				cap = 2 * (total + take);
				uint8_t *bigger = realloc(buf, cap);
				if (!bigger)
					break;
				buf = bigger;
			}
			if (remote_read(t, REMOTE(s.v[k].iov_base), buf + total, take))
				break;
			total += take;
			left -= take;
		}
	}
	*len = total;
	return buf;
}

/* The buffers a call that writes from memory hands over, as its layout lays them out. */
static int send_spans(struct task *t, enum data_dir layout, struct spans *s)
{
	uint64_t addr = syscall_arg(t, 1), count = syscall_arg(t, 2);
	if (layout == DATA_SEND_BUF) {
		s->v[s->n++] = (struct iovec){ (void *)addr, count };
		return 0;
	}
	if (layout == DATA_SEND_MSG) {
		struct msghdr m;
		if (remote_read(t, REMOTE(addr), &m, sizeof(m)))
			return -1;
		addr = (uint64_t)m.msg_iov, count = m.msg_iovlen;
	}
	return add_msg_spans(t, s, addr, count);
}

static uint64_t spans_len(const struct spans *s)
{
	uint64_t len = 0;
	for (int i = 0; i < s->n; i++)
		len += s->v[i].iov_len;
	return len;
}

/* The bytes the call handed to the kernel: its buffer or iovecs up to the `result` it
 * returned (UINT64_MAX: all it asked to write), or every message a sendmmsg sent. */
static uint8_t *sent_bytes(struct task *t, enum data_dir layout, uint64_t result, size_t *len)
{
	*len = 0;
	if (layout == DATA_SEND_MMSG)
		return sent_messages(t, result, len);
	struct spans s = { .n = 0 };
	if (send_spans(t, layout, &s))
		return NULL;
	if (result == UINT64_MAX)
		result = spans_len(&s);
	uint8_t *buf = malloc(result ? result : 1);
	for (int i = 0; buf && i < s.n && *len < result; i++) {
		size_t take = s.v[i].iov_len < result - *len ? s.v[i].iov_len : result - *len;
		if (remote_read(t, REMOTE(s.v[i].iov_base), buf + *len, take))
			break;
		*len += take;
	}
	return buf;
}

/* ---- output ------------------------------------------------------------------------------------
 *
 * What the group writes where its user sees it — standard output and error, whatever they
 * are, and every channel inherited from outside — is its output: record logs the length and
 * digest of each write there (not the bytes), and replay, whose writes there really happen,
 * checks each against the recorded one at the call's entry, before it runs, and stops at
 * the first that is not it: the user never sees bytes the recording did not write. The
 * objects are known by identity, as the outside ones are. Sockets the group made are
 * checked by their calls' results (Result.sent_digest) instead. */

static struct output_id {
	dev_t dev;
	ino_t ino;
} * outputs;
static size_t n_outputs;

void external_register_output(int supervisor_fd)
{
	struct stat st;
	if (fstat(supervisor_fd, &st) < 0)
		return;
	struct output_id *more = realloc(outputs, (n_outputs + 1) * sizeof(*outputs));
	if (!more)
		abort();
	outputs = more;
	outputs[n_outputs++] = (struct output_id){ st.st_dev, st.st_ino };
}

static bool output_fd(struct task *t, int tfd)
{
	int fd = remote_dup_fd(t, tfd);
	struct stat st;
	bool found = false;
	if (fd >= 0 && fstat(fd, &st) == 0)
		for (size_t i = 0; i < n_outputs && !found; i++)
			found = outputs[i].dev == st.st_dev && outputs[i].ino == st.st_ino;
	if (fd >= 0)
		close(fd);
	return found;
}

/* Does anyone see what is written to tracee descriptor tfd: not a device other than a
 * terminal (/dev/null, /dev/full)? (shim_write.seen) */
static bool output_seen(struct task *t, int tfd)
{
	int fd = remote_dup_fd(t, tfd);
	struct stat st;
	bool seen = fd < 0 || fstat(fd, &st) || !S_ISCHR(st.st_mode) || isatty(fd);
	if (fd >= 0)
		close(fd);
	return seen;
}

/* How the bytes a call writes lie in memory: the row's data column, and for positional
 * writes (a file given as standard output) the layout of their plain counterparts. */
static enum data_dir written_layout(long nr)
{
	switch (nr) {
	case __NR_pwrite64:
		return DATA_SEND_BUF;
	case __NR_pwritev:
	case __NR_pwritev2:
		return DATA_SEND_IOV;
	default:
		return syscall_lookup(nr) ? syscall_lookup(nr)->data : DATA_NONE;
	}
}

/* Bytes the shim found right at the entry are not read again: the kernel took them then,
 * and memory read now could only tell what the buffer holds after the call. */
static void output_written(struct task *t)
{
	int64_t ret = syscall_result(t);
	if (ret <= 0)
		return;
	size_t len = (size_t)ret;
	uint8_t *bytes = NULL;
	if ((uint64_t)ret != t->exit.output_checked)
		bytes = sent_bytes(t, written_layout(t->syscall_nr), (uint64_t)ret, &len);
	shim_get()->output(t, sched_now(), (int)syscall_arg(t, 0), bytes, len);
	free(bytes);
}

/* A write of a run parked ahead of time (shim_output_held): checked as written in full and
 * skipped, so nothing such a run does shows. A sendmmsg's count is the kernel's: it runs. */
static bool held_output(struct task *t, enum data_dir layout)
{
	if (!shim_output_held() || layout == DATA_SEND_MMSG)
		return false;
	size_t len;
	uint8_t *bytes = sent_bytes(t, layout, UINT64_MAX, &len);
	shim_get()->output(t, sched_now(), (int)syscall_arg(t, 0), bytes, len);
	free(bytes);
	syscall_emulate(t, (int64_t)len);
	return true;
}

/* The first n bytes a write to the output asks to write (shim_ops.output_entry). */
static uint8_t *asked_bytes(struct task *t, uint64_t n, size_t *got)
{
	return sent_bytes(t, written_layout(t->syscall_nr), n, got);
}

/* Before the kernel runs the write, the shim sees what it asks to write: a replay stops
 * there when that is not what the recording wrote, so no other byte ever reaches the
 * user. A sendmmsg is left to its exit: which of its messages go is the kernel's, and
 * their lengths are filled in only then. */
static void output_entry(struct task *t, enum data_dir layout)
{
	struct spans s = { .n = 0 };
	t->exit.output_checked = 0;
	if (!shim_get()->output_entry || layout == DATA_SEND_MMSG || send_spans(t, layout, &s))
		return; /* unreadable iovecs: the kernel refuses the call too, writing nothing */
	struct shim_write w = { (int)syscall_arg(t, 0), spans_len(&s), asked_bytes, output_seen };
	t->exit.output_checked = shim_get()->output_entry(t, sched_now(), &w);
}

void external_output_call(struct task *t, int tfd)
{
	enum data_dir layout = written_layout(t->syscall_nr);
	if (!n_outputs || !shim_get()->output || t->exit.on_exit || layout < DATA_SEND_BUF ||
	    layout > DATA_SEND_MMSG || !output_fd(t, tfd))
		return;
	if (held_output(t, layout))
		return;
	output_entry(t, layout);
	tracer_want_exit(t, output_written);
}

/* ---- performing a call ---------------------------------------------------------------------- */

static void describe_call(struct task *t, struct shim_call *c)
{
	*c = (struct shim_call){ .task = t,
				 .time = sched_now(),
				 .vtid = t->vtid,
				 .nr = t->syscall_nr,
				 .fd = -1 };
	for (int i = 0; i < 6; i++)
		c->args[i] = syscall_arg(t, i);
	int fd_arg = syscall_fd_arg(syscall_lookup(t->syscall_nr));
	if (fd_arg >= 0)
		c->fd = (int)c->args[fd_arg];
}

static void call_sent(struct task *t, struct shim_call *c, int64_t ret)
{
	if (!syscall_sends_memory(syscall_lookup(c->nr)) || ret <= 0)
		return;
	size_t len;
	uint8_t *bytes = sent_bytes(t, syscall_lookup(c->nr)->data, (uint64_t)ret, &len);
	c->sent = bytes;
	c->sent_len = len;
	c->sent_digest = fnv32(FNV32_INIT, bytes, len);
}

/* A descriptor an outside call returns (a socket, an accepted connection) is outside. */
static void register_result_fd(struct task *t, long nr, int64_t ret)
{
	if (ret >= 0 && syscall_returns_fd(syscall_lookup(nr)))
		register_tracee_fd(t, (int)ret);
}

/* A recvmmsg of more messages than a call's record holds is given MAX_MMSGS, in record and
 * in replay alike, so that every message it takes is recorded: recvmmsg may return fewer
 * than vlen (the program goes on from the count it returns). The program's vlen is kept
 * in o and comes back at the call's end. */
static void mmsg_cut(struct task *t, struct outputs *o)
{
	o->own_vlen = 0;
	if (t->syscall_nr != __NR_recvmmsg || (uint32_t)syscall_arg(t, 2) <= MAX_MMSGS)
		return;
	o->own_vlen = syscall_arg(t, 2);
	syscall_set_arg(t, 2, MAX_MMSGS);
}

static void mmsg_restored(struct task *t, const struct outputs *o)
{
	if (o->own_vlen)
		syscall_set_arg(t, 2, o->own_vlen);
}

/* The monitor's half: the call ran; its result and output go to the shim. The regions
 * were described at the call's entry, when the rooms they give (an address buffer's
 * length, say, which the call overwrites) were still the program's own. */
static void monitored_exit(struct task *t)
{
	struct outputs *o = t->exit.monitored;
	t->exit.monitored = NULL;
	int64_t ret = syscall_result(t);
	/* The kernel's ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND (not in user headers):
	 * interrupted by a signal from outside that detrun dropped, so the kernel restarts
	 * the call. Not a result: the restart is performed again, without an event. */
	if ((ret <= -512 && ret >= -514) || ret == -516) {
		/* ERESTART_RESTARTBLOCK (a poll with a timeout, cut short by the spin
		 * detector's interrupt) would go on as restart_syscall, which never stops:
		 * the call restarts as itself instead, and comes back here. */
		if (ret == -516) {
			syscall_set_result(t, (uint64_t)-513); /* ERESTARTNOINTR */
		}
		t->external_restart_nr = t->syscall_nr;
		mmsg_restored(t, o); /* the restart starts from the program's arguments */
		free(o);
		return;
	}
	if (o->incomplete && ret > 0)
		hazard(t,
		       "%s produced more output regions than detrun records (over %d buffers "
		       "or %d messages): a replay of this log stops here",
		       syscall_name(t->syscall_nr), MAX_IOVECS, MAX_MMSGS);
	struct shim_call c;
	describe_call(t, &c); /* as it ran */
	mmsg_restored(t, o);
	c.ret = ret;
	struct shim_region out[MAX_REGIONS];
	read_outputs(t, o, c.ret, out);
	c.out = out;
	c.n_out = (size_t)o->n;
	call_sent(t, &c, c.ret);
	register_result_fd(t, c.nr, c.ret);
	if (shim_get()->monitor)
		shim_get()->monitor(&c);
	free((void *)c.sent);
	free_regions(out, c.n_out);
	free(o);
}

/* An accept the shim answered: the program gets a descriptor of its own at the number the
 * shim gave — a socket of the listener's family that is never connected and stands in for
 * the connection (close, fcntl and epoll_ctl work on it; everything else is external). */
static void make_placeholder(struct task *t, int64_t want)
{
	int domain = AF_INET;
	int listener = remote_dup_fd(t, (int)syscall_arg(t, 0));
	if (listener >= 0) {
		socklen_t len = sizeof(domain);
		getsockopt(listener, SOL_SOCKET, SO_DOMAIN, &domain, &len);
		close(listener);
	}
	uint64_t flags = t->syscall_nr == __NR_accept4 ? syscall_arg(t, 3) : 0;
	long fd = remote_syscall(t, __NR_socket, (uint64_t)domain,
				 SOCK_STREAM | (flags & (SOCK_NONBLOCK | SOCK_CLOEXEC)), 0, 0, 0,
				 0);
	if (fd < 0)
		shim_abort(t, "cannot create the stand-in for accepted descriptor %lld: %s",
			   (long long)want, strerror((int)-fd));
	/* The kernel hands out the lowest free number, as it did for the recorded accept; any
	 * other means the descriptor table differs from the recording's. */
	if (fd != want) {
		remote_syscall(t, __NR_close, (uint64_t)fd, 0, 0, 0, 0, 0);
		shim_abort(t,
			   "replay diverged at t=%llu: %s would get descriptor %ld, the "
			   "recording's got %lld",
			   (unsigned long long)sched_now(), syscall_name(t->syscall_nr), fd,
			   (long long)want);
	}
	register_tracee_fd(t, (int)fd);
}

/* A send that fails with EPIPE also raises SIGPIPE, unless told not to (MSG_NOSIGNAL). */
static bool raises_sigpipe(const struct shim_call *c)
{
	const struct syscall_entry *e = syscall_lookup(c->nr);
	int flags = syscall_msg_flags_arg(e);
	return syscall_sends(e) && (flags < 0 || !(c->args[flags] & MSG_NOSIGNAL));
}

/* A unix socket bound to a path made a file, which the program may chmod, stat or unlink
 * (PostgreSQL does): a replayed bind binds the program's own socket (a real, never
 * connected one) to the same path, so the file is there in replay too. */
static void bind_unix_path(struct task *t, const struct shim_call *c)
{
	struct sockaddr_un a;
	uint64_t len = c->args[2] < sizeof(a) ? c->args[2] : sizeof(a);
	if (len <= offsetof(struct sockaddr_un, sun_path) ||
	    remote_read(t, REMOTE(c->args[1]), &a, len) || a.sun_family != AF_UNIX ||
	    !a.sun_path[0])
		return; /* not a path: abstract, unnamed, or another family */
	long r = remote_syscall(t, __NR_bind, c->args[0], c->args[1], c->args[2], 0, 0, 0);
	if (r < 0)
		shim_abort(t,
			   "replay diverged at t=%llu: bind to %.*s succeeded in the recording, "
			   "now fails: %s (remove the files the recorded run created)",
			   (unsigned long long)c->time,
			   (int)(len - offsetof(struct sockaddr_un, sun_path)), a.sun_path,
			   strerror((int)-r));
}

/* Effects a controlled call must have besides its result and outputs. */
static void controlled_side_effects(struct task *t, const struct shim_call *c)
{
	if (c->ret == -EPIPE && raises_sigpipe(c))
		syscall(SYS_tgkill, t->proc->tgid, t->tid, SIGPIPE);
	if (c->ret < 0)
		return;
	if (c->nr == __NR_accept || c->nr == __NR_accept4)
		make_placeholder(t, c->ret);
	if (c->nr == __NR_bind)
		bind_unix_path(t, c);
	if (c->nr == __NR_sendfile && !c->args[2]) /* the input file's offset moves */
		remote_syscall(t, __NR_lseek, c->args[1], (uint64_t)c->ret, SEEK_CUR, 0, 0, 0);
}

static bool deliverable_signal(struct task *t, int *sig)
{
	uint64_t pending, blocked;
	if (read_signal_state(t, &pending, &blocked))
		return false;
	uint64_t deliverable = pending & ~blocked & ~t->proc->ignored;
	*sig = deliverable ? __builtin_ctzll(deliverable) + 1 : 0;
	return deliverable != 0;
}

static bool signal_waits(struct task *t)
{
	int sig;
	return deliverable_signal(t, &sig);
}

/* The recording's call was interrupted by the signal that waits for the task (a barrier
 * sent it while the call's stop was held, and the call met it at once), as the kernel
 * interrupts a call with ERESTARTSYS: monitored_exit logged no result and noted the
 * restart. The replay does the same: the call restarts after the handler if the handler
 * has SA_RESTART, and fails with EINTR otherwise. */
static void interrupted_as_recorded(struct task *t)
{
	int sig = 0;
	deliverable_signal(t, &sig);
	t->external_restart_nr = t->syscall_nr;
	if (sig && (t->proc->sa_restart & SIGBIT(sig)))
		syscall_skip_and_restart(t);
	else
		syscall_emulate(t, -EINTR);
}

static bool controlled(struct task *t)
{
	const struct shim_ops *shim = shim_get();
	if (!shim->control)
		return false;
	struct outputs o;
	mmsg_cut(t, &o);
	describe_outputs(t, &o);
	struct shim_call c;
	describe_call(t, &c);
	struct shim_region out[MAX_REGIONS];
	for (int i = 0; i < o.n; i++)
		out[i] = (struct shim_region){ o.r[i].addr, o.r[i].max, 0, NULL,
					       o.r[i].kind == R_DATA };
	c.out = out;
	c.n_out = (size_t)o.n;
	c.signal_waits = signal_waits;
	c.to_output = output_fd;
	bool answered = shim->control(&c);
	mmsg_restored(t, &o); /* the call runs as the program made it, or not at all */
	if (!answered)
		return false;
	if (c.interrupted) {
		interrupted_as_recorded(t);
		return true;
	}
	if (o.incomplete && c.ret > 0)
		shim_abort(t,
			   "%s has more output regions than detrun records (over %d buffers or "
			   "%d messages): its output cannot be supplied",
			   syscall_name(c.nr), MAX_IOVECS, MAX_MMSGS);
	for (size_t i = 0; i < c.n_out; i++)
		if (out[i].len && remote_write(t, REMOTE(out[i].addr), out[i].bytes, out[i].len))
			shim_abort(t, "cannot write %llu bytes of %s's output at %#llx",
				   (unsigned long long)out[i].len, syscall_name(c.nr),
				   (unsigned long long)out[i].addr);
	if (c.sent_digest && c.ret > 0) {
		uint32_t expected = c.sent_digest;
		call_sent(t, &c, c.ret);
		free((void *)c.sent);
		if (c.sent_digest != expected)
			shim_abort(t,
				   "replay diverged at t=%llu: %s(fd %d) sends other bytes than "
				   "the recording did",
				   (unsigned long long)c.time, syscall_name(c.nr), c.fd);
	}
	controlled_side_effects(t, &c);
	syscall_emulate(t, c.ret);
	return true;
}

/* At the call's seccomp stop: the shim answers it, or it runs and the shim sees it. */
void external_perform(struct task *t)
{
	remote_load_regs(t);
	if (!controlled(t)) {
		struct outputs *o = malloc(sizeof(*o));
		if (!o)
			abort();
		mmsg_cut(t, o);
		describe_outputs(t, o);
		t->exit.monitored = o;
		tracer_want_exit(t, monitored_exit);
	}
	sched_continue(t);
}

/* ---- waiting for the outside ----------------------------------------------------------------- */

static enum wait_result outside_ready(struct task *t)
{
	const struct shim_ops *shim = shim_get();
	bool native = false;
	if (!shim->decides_readiness)
		native = fds_ready_for(t, t->wait.fds, t->wait.nfds);
	if (shim->ready ? !shim->ready(t, sched_now(), native) : !native)
		return WAIT_NOT_READY;
	external_perform(t);
	return WAIT_READY;
}

static void outside_timed_out(struct task *t)
{
	void (*zero_timeout)(struct task *) = parked_state(t, PARKED_OUTSIDE)->zero_timeout;
	if (zero_timeout)
		zero_timeout(t);
	external_perform(t);
}

static void park_outside(struct task *t, struct pollfd *fds, int nfds, int64_t deadline,
			 void (*zero_timeout)(struct task *), bool restartable)
{
	struct wait w = {
		.what = syscall_name(t->syscall_nr), /* "parked: accept4" says what it waits for */
		.deadline_ns = deadline,
		.ready = outside_ready,
		.on_timeout = outside_timed_out,
		.fds = fds,
		.nfds = nfds,
		.external = true,
		.interruptible = true,
		.restartable = restartable,
	};
	parked_state_new(t, PARKED_OUTSIDE)->zero_timeout = zero_timeout;
	sched_park(t, &w);
}

static bool blocking_fd(struct task *t, int tfd)
{
	int fd = remote_dup_fd(t, tfd);
	if (fd < 0)
		return false;
	int fl = fcntl(fd, F_GETFL);
	close(fd);
	return fl >= 0 && !(fl & O_NONBLOCK);
}

/* Calls on one descriptor. */
bool external_fd_call(struct task *t, int tfd, short wait_events)
{
	bool made = false;
	if (!outside_fd(t, tfd, &made))
		return false;
	if (syscall_sends(syscall_lookup(t->syscall_nr)) && !made) {
		external_output_call(t, tfd); /* to an inherited terminal, pipe or socket: runs */
		return true;
	}
	if (wait_events && !msg_dontwait(t) && blocking_fd(t, tfd)) {
		struct pollfd *p = malloc(sizeof(*p));
		if (!p)
			abort();
		*p = (struct pollfd){ remote_dup_fd(t, tfd), wait_events, 0 };
		park_outside(t, p, 1, -1, NULL, true);
		return true;
	}
	external_perform(t);
	return true;
}

bool external_any(const struct pollfd *fds, int nfds)
{
	if (!shim_intercepts())
		return false;
	for (int i = 0; i < nfds; i++)
		if (external_object(fds[i].fd))
			return true;
	return false;
}

void external_wait_set(struct task *t, struct pollfd *fds, int nfds, int64_t deadline,
		       void (*zero_timeout)(struct task *))
{
	if (deadline >= 0 && deadline <= vclock_now()) {
		for (int i = 0; i < nfds; i++)
			close(fds[i].fd);
		free(fds);
		external_perform(t);
		return;
	}
	park_outside(t, fds, nfds, deadline, zero_timeout, false);
}

static void wait_arguments_restored(struct task *t)
{
	for (int i = 0; i < 6; i++)
		syscall_set_arg(t, i, t->exit.args[i]);
}

void external_wait_interrupted(struct task *t)
{
	if (!shim_intercepts())
		return;
	remote_load_regs(t);
	if (syscall_sigset(syscall_lookup(t->syscall_nr)).arg < 0)
		return; /* no mask of its own: the interrupted call returns as it is */
	uint64_t mask, size;
	if (call_sigmask_at(t, &mask, &size))
		mask = 0, size = 8; /* an unreadable pair: the thread's own mask */
	/* The argument registers are the program's again when the call returns: its
	 * wrapper may count on them. */
	for (int i = 0; i < 6; i++)
		t->exit.args[i] = syscall_arg(t, i);
	syscall_set_number(t, __NR_ppoll);
	uint64_t args[6] = { 0, 0, 0, mask, size, 0 };
	for (int i = 0; i < 6; i++)
		syscall_set_arg(t, i, args[i]);
	tracer_want_exit(t, wait_arguments_restored);
}

/* ---- rows of the table ----------------------------------------------------------------------- */

static void socket_made(struct task *t)
{
	register_result_fd(t, __NR_socket, syscall_result(t));
}

/* Implements socket(2) while a shim intercepts: a new socket is outside. */
void sys_socket(struct task *t)
{
	tracer_want_exit(t, socket_made);
}

/* ioctls that change only the descriptor's own flags: the stand-ins of replay need them
 * too (a non-blocking listener must not make accept wait). */
static bool descriptor_flag_ioctl(struct task *t)
{
	uint64_t req = syscall_arg(t, 1);
	return t->syscall_nr == __NR_ioctl &&
	       (req == FIONBIO || req == FIOASYNC || req == FIOCLEX || req == FIONCLEX);
}

/* Implements connect, bind, listen, shutdown, get/setsockopt, getsockname, getpeername and
 * ioctl while a shim intercepts — and any EXTERNAL row added with this handler: on an
 * outside descriptor they go to the shim, a receive first waiting for data. Requests
 * that return kernel-wide ids stop in plain runs too (STOP_WHEN_EQ) and are renumbered. */
void sys_external(struct task *t)
{
	if (t->syscall_nr == __NR_ioctl && reach_ioctl_owner_refused(t))
		return;
	if (descriptor_flag_ioctl(t) || kernel_id_call(t) || netview_call(t))
		return;
	/* The row says which descriptor the call is on and whether it waits for data. */
	const struct syscall_entry *e = syscall_lookup(t->syscall_nr);
	int fd_arg = syscall_fd_arg(e);
	if (fd_arg >= 0)
		external_fd_call(t, (int)syscall_arg(t, fd_arg),
				 syscall_reads_data(e) ? POLLIN : 0);
}
