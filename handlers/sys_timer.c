/* Timers on the virtual clock: alarm/setitimer, POSIX timers, timerfd.
 *
 * No real timer is ever armed. detrun keeps each timer's virtual deadline; the scheduler
 * fires due timers between events (and jumps the virtual clock to the next deadline when
 * nothing else can run), so a timer's signal or expiry lands at the same logical time on
 * every run. A timer signal is sent with kill/tgkill and, when the task takes it, its
 * siginfo is replaced by the one the kernel would have built (SI_TIMER, SI_KERNEL). A
 * timerfd is a real timerfd whose expiry count detrun sets (TFD_IOC_SET_TICKS), so reads,
 * poll and epoll on it behave natively. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <linux/kcmp.h>

#ifndef TFD_IOC_SET_TICKS /* linux/timerfd.h, which clashes with sys/timerfd.h */
#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)
#endif

#include "scheduler/vclock.h"
#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/sys_timer.h"

enum timer_kind {
	ITIMER,
	POSIX_TIMER,
	TIMERFD
};

struct vtimer {
	enum timer_kind kind;
	pid_t tgid; /* owning process (host pid) */
	int id;     /* itimer which, POSIX timer id, or the tracee's timerfd number */
	clockid_t clock;
	int64_t deadline; /* virtual monotonic ns; -1 when disarmed */
	int64_t interval;
	int signo;        /* 0: no signal (SIGEV_NONE, timerfd) */
	pid_t target_tid; /* SIGEV_THREAD_ID target (host tid), 0 for the process */
	uint64_t value;   /* sigev_value */
	int overrun;      /* expirations since the queued signal was sent, less one */
	int overrun_last; /* the overrun the last taken signal carried (timer_getoverrun) */
	bool queued;      /* a POSIX timer's signal is queued and not yet taken */
	int fd;           /* timerfd: supervisor duplicate */
	struct vtimer *next;
};

/* A timer signal sent and not yet taken: its siginfo is installed at delivery. */
struct pending_info {
	pid_t tgid;
	siginfo_t info;
	struct pending_info *next;
};

static struct vtimer *timers;
static struct pending_info *pending;

static struct vtimer *find_timer(pid_t tgid, enum timer_kind kind, int id)
{
	for (struct vtimer *v = timers; v; v = v->next)
		if (v->tgid == tgid && v->kind == kind && v->id == id)
			return v;
	return NULL;
}

static struct vtimer *add_timer(pid_t tgid, enum timer_kind kind, int id)
{
	struct vtimer *v = calloc(1, sizeof(*v));
	if (!v)
		abort();
	*v = (struct vtimer){ .kind = kind,
			      .tgid = tgid,
			      .id = id,
			      .clock = CLOCK_MONOTONIC,
			      .deadline = -1,
			      .fd = -1,
			      .next = timers };
	timers = v;
	return v;
}

static void remove_timer(struct vtimer *dead)
{
	for (struct vtimer **pp = &timers; *pp; pp = &(*pp)->next)
		if (*pp == dead) {
			*pp = dead->next;
			if (dead->fd >= 0)
				close(dead->fd);
			free(dead);
			return;
		}
}

/* exec ends POSIX timers and timerfds lose nothing (descriptors are handled by the kernel);
 * death ends all of a process's timers. */
void timers_process_gone(pid_t tgid, bool exec_only)
{
	for (struct vtimer *v = timers, *next; v; v = next) {
		next = v->next;
		if (v->tgid == tgid && (!exec_only || v->kind == POSIX_TIMER))
			remove_timer(v);
	}
}

int64_t timers_next_deadline(void)
{
	int64_t next = -1;
	for (struct vtimer *v = timers; v; v = v->next)
		if (v->deadline >= 0 && (next < 0 || v->deadline < next))
			next = v->deadline;
	return next;
}

int64_t timers_next_signal(pid_t tgid)
{
	int64_t next = -1;
	for (struct vtimer *v = timers; v; v = v->next)
		if ((tgid <= 0 || v->tgid == tgid) && v->signo && v->deadline >= 0 &&
		    (next < 0 || v->deadline < next))
			next = v->deadline;
	return next;
}

/* ---- firing ------------------------------------------------------------------------------- */

static void queue_info(pid_t tgid, const siginfo_t *info)
{
	struct pending_info *p = calloc(1, sizeof(*p));
	if (!p)
		abort();
	p->tgid = tgid;
	p->info = *info;
	struct pending_info **pp = &pending;
	while (*pp)
		pp = &(*pp)->next;
	*pp = p;
}

/* The pending siginfo of a timer signal `sig` of process tgid, or NULL. */
static struct pending_info **pending_of(pid_t tgid, int sig, bool timer_only)
{
	for (struct pending_info **pp = &pending; *pp; pp = &(*pp)->next)
		if ((*pp)->tgid == tgid && (*pp)->info.si_signo == sig &&
		    (!timer_only || (*pp)->info.si_code == SI_TIMER))
			return pp;
	return NULL;
}

/* A POSIX timer's signal is taken: it carries the expirations counted while it was
 * queued (the kernel queues a timer's signal once and counts further expirations as
 * overruns), and the timer may queue it again. */
static void timer_signal_taken(siginfo_t *info)
{
	if (info->si_code != SI_TIMER)
		return;
	for (struct vtimer *v = timers; v; v = v->next)
		if (v->kind == POSIX_TIMER && v->queued && v->id == info->si_timerid &&
		    v->signo == info->si_signo) {
			info->si_overrun = v->overrun;
			v->overrun_last = v->overrun;
			v->overrun = 0;
			v->queued = false;
			return;
		}
}

static siginfo_t take_pending(struct pending_info **pp)
{
	struct pending_info *p = *pp;
	siginfo_t info = p->info;
	*pp = p->next;
	free(p);
	return info;
}

bool timers_fix_siginfo(struct task *t, int sig)
{
	struct pending_info **pp = pending_of(t->proc->tgid, sig, false);
	if (!pp)
		return false;
	siginfo_t info = take_pending(pp);
	timer_signal_taken(&info);
	ptrace(PTRACE_SETSIGINFO, t->tid, 0, &info);
	return true;
}

void timers_fix_waited_siginfo(struct task *t, int sig, uint64_t info_addr)
{
	struct pending_info **pp = pending_of(t->proc->tgid, sig, false);
	if (!pp)
		return;
	siginfo_t info = take_pending(pp);
	timer_signal_taken(&info);
	if (info_addr && remote_write(t, REMOTE(info_addr), &info, sizeof(info)))
		task_warn(t, "cannot write the siginfo of timer signal %d", sig);
}

/* Is signal `sig` still pending for `pid` (a thread, or a process's shared set)? */
static bool kernel_pending(pid_t pid, int sig)
{
	uint64_t pending, blocked;
	return proc_signal_state(pid, &pending, &blocked) == 0 && (pending & SIGBIT(sig));
}

/* Still queued, or taken without a signal stop detrun sees (a signalfd read)? Then its
 * stale siginfo is dropped. */
static bool still_queued(struct vtimer *v)
{
	if (!v->queued)
		return false;
	if (kernel_pending(v->target_tid ? v->target_tid : v->tgid, v->signo))
		return true;
	struct pending_info **pp = pending_of(v->tgid, v->signo, true);
	if (pp) {
		siginfo_t info = take_pending(pp);
		timer_signal_taken(&info);
	}
	v->queued = false;
	return false;
}

static void send_timer_signal(struct vtimer *v)
{
	siginfo_t info;
	memset(&info, 0, sizeof(info));
	info.si_signo = v->signo;
	if (v->kind == ITIMER) {
		info.si_code = SI_KERNEL;
	} else {
		info.si_code = SI_TIMER;
		info.si_timerid = v->id;
		info.si_value.sival_ptr = (void *)(uintptr_t)v->value;
	}
	/* A standard signal already pending merges with this one: its siginfo is there. */
	if (v->signo < 32 && pending_of(v->tgid, v->signo, false) &&
	    kernel_pending(v->target_tid ? v->target_tid : v->tgid, v->signo))
		return;
	int err = v->target_tid ? (int)syscall(SYS_tgkill, v->tgid, v->target_tid, v->signo)
				: kill(v->tgid, v->signo);
	if (err == 0) {
		queue_info(v->tgid, &info);
		v->queued = v->kind == POSIX_TIMER;
		sched_signals_changed();
	}
}

/* Takes (and clears) a timerfd's unread expirations without blocking. The descriptor
 * shares its flags with the tracee's, so O_NONBLOCK is set only for this read. */
static uint64_t take_unread_ticks(int fd)
{
	uint64_t unread = 0;
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (read(fd, &unread, sizeof(unread)) != sizeof(unread))
		unread = 0;
	fcntl(fd, F_SETFL, fl);
	return unread;
}

/* A timerfd's count of expirations is the unread ones plus the new ones. */
static void add_timerfd_ticks(struct vtimer *v, uint64_t n)
{
	uint64_t ticks = take_unread_ticks(v->fd) + n;
	ioctl(v->fd, TFD_IOC_SET_TICKS, &ticks);
}

void timers_fire(void)
{
	int64_t now = vclock_now();
	for (struct vtimer *v = timers, *next; v; v = next) {
		next = v->next;
		if (v->deadline < 0 || v->deadline > now)
			continue;
		uint64_t expirations = 1;
		if (v->interval > 0) {
			expirations += (uint64_t)((now - v->deadline) / v->interval);
			v->deadline += (int64_t)expirations * v->interval;
		} else {
			v->deadline = -1;
		}
		if (v->kind == TIMERFD) {
			add_timerfd_ticks(v, expirations);
		} else if (v->signo && v->kind == POSIX_TIMER && still_queued(v)) {
			uint64_t total = (uint64_t)v->overrun + expirations;
			v->overrun = total > INT_MAX ? INT_MAX : (int)total; /* DELAYTIMER_MAX */
		} else if (v->signo) {
			v->overrun = expirations - 1 > INT_MAX ? INT_MAX : (int)(expirations - 1);
			send_timer_signal(v);
		}
	}
}

/* ---- itimerspec helpers ------------------------------------------------------------------- */

static int read_spec(struct task *t, uint64_t addr, struct itimerspec *spec)
{
	if (remote_read(t, REMOTE(addr), spec, sizeof(*spec)))
		return -EFAULT;
	const struct timespec *ts[2] = { &spec->it_value, &spec->it_interval };
	for (int i = 0; i < 2; i++)
		if (ts[i]->tv_sec < 0 || ts[i]->tv_nsec < 0 || ts[i]->tv_nsec >= 1000000000L)
			return -EINVAL;
	return 0;
}

/* A disarmed timer shows its interval as the kernel keeps it (see arm). */
static struct itimerspec current_spec(const struct vtimer *v)
{
	struct itimerspec spec = { { 0, 0 }, { 0, 0 } };
	if (v && v->deadline >= 0) {
		int64_t left = v->deadline - vclock_now();
		spec.it_value = ns_to_timespec(left > 0 ? left : 1);
	}
	if (v)
		spec.it_interval = ns_to_timespec(v->interval);
	return spec;
}

static int arm(struct vtimer *v, const struct itimerspec *spec, bool absolute)
{
	int64_t value = timespec_to_ns(spec->it_value);
	v->interval = timespec_to_ns(spec->it_interval);
	if (!value) {
		/* Disarming: a timerfd keeps the interval it was given (timerfd_gettime
		 * shows it); interval timers and POSIX timers forget theirs. */
		if (v->kind != TIMERFD)
			v->interval = 0;
		v->deadline = -1;
		return 0;
	}
	if (!absolute) {
		v->deadline = vclock_now() + value;
		return 0;
	}
	return vclock_to_monotonic(v->clock, value, &v->deadline);
}

/* ---- alarm, setitimer, getitimer ----------------------------------------------------------- */

static const int itimer_signal[3] = { SIGALRM, SIGVTALRM, SIGPROF };

static struct itimerval to_itimerval(struct itimerspec s)
{
	return (struct itimerval){ { s.it_interval.tv_sec, s.it_interval.tv_nsec / 1000 },
				   { s.it_value.tv_sec, (s.it_value.tv_nsec + 999) / 1000 } };
}

static struct vtimer *itimer_of(struct task *t, int which)
{
	struct vtimer *v = find_timer(t->proc->tgid, ITIMER, which);
	if (!v) {
		v = add_timer(t->proc->tgid, ITIMER, which);
		v->signo = itimer_signal[which];
	}
	return v;
}

/* Implements setitimer(2), getitimer(2), alarm(2). CPU-time itimers (VIRTUAL, PROF) run
 * on the virtual clock too: CPU time is not measured. */
void sys_itimer(struct task *t)
{
	int which = t->syscall_nr == __NR_alarm ? ITIMER_REAL : (int)syscall_arg(t, 0);
	if (which < 0 || which > 2) {
		syscall_emulate(t, -EINVAL);
		return;
	}
	struct vtimer *v = itimer_of(t, which);
	struct itimerspec old = current_spec(v);
	if (t->syscall_nr == __NR_getitimer) {
		struct itimerval out = to_itimerval(old);
		bool bad = remote_write(t, REMOTE(syscall_arg(t, 1)), &out, sizeof(out));
		syscall_emulate(t, bad ? -EFAULT : 0);
		return;
	}
	struct itimerspec spec = { { 0, 0 }, { 0, 0 } };
	if (t->syscall_nr == __NR_alarm) {
		spec.it_value.tv_sec = (time_t)(unsigned)syscall_arg(t, 0);
		arm(v, &spec, false);
		/* alarm returns whole seconds left, rounded up, at least 1 if armed */
		int64_t left = old.it_value.tv_sec + (old.it_value.tv_nsec > 0);
		syscall_emulate(t, left);
		return;
	}
	struct itimerval in;
	uint64_t new_addr = syscall_arg(t, 1), old_addr = syscall_arg(t, 2);
	if (new_addr) {
		if (remote_read(t, REMOTE(new_addr), &in, sizeof(in))) {
			syscall_emulate(t, -EFAULT);
			return;
		}
		if (in.it_value.tv_usec < 0 || in.it_value.tv_usec >= 1000000 ||
		    in.it_interval.tv_usec < 0 || in.it_interval.tv_usec >= 1000000) {
			syscall_emulate(t, -EINVAL);
			return;
		}
		spec.it_value = (struct timespec){ in.it_value.tv_sec, in.it_value.tv_usec * 1000 };
		spec.it_interval = (struct timespec){ in.it_interval.tv_sec,
						      in.it_interval.tv_usec * 1000 };
	}
	arm(v, &spec, false);
	struct itimerval out = to_itimerval(old);
	bool bad = old_addr && remote_write(t, REMOTE(old_addr), &out, sizeof(out));
	syscall_emulate(t, bad ? -EFAULT : 0);
}

/* ---- POSIX timers ------------------------------------------------------------------------------ */

static pid_t host_tid_of(pid_t ns_tid)
{
	for (struct task *u = sched_first(); u; u = u->next)
		if (u->ns_tid == ns_tid)
			return u->tid;
	return 0;
}

static int next_posix_id(pid_t tgid)
{
	int id = 0;
	while (find_timer(tgid, POSIX_TIMER, id))
		id++;
	return id;
}

/* Implements timer_create(2). */
void sys_timer_create(struct task *t)
{
	clockid_t clk = (clockid_t)syscall_arg(t, 0);
	int64_t probe;
	if (vclock_read(clk, &probe)) {
		syscall_emulate(t, -EINVAL);
		return;
	}
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGALRM;
	uint64_t ev_addr = syscall_arg(t, 1);
	if (ev_addr && remote_read(t, REMOTE(ev_addr), &ev, sizeof(ev))) {
		syscall_emulate(t, -EFAULT);
		return;
	}
	int id = next_posix_id(t->proc->tgid);
	if (!ev_addr)
		ev.sigev_value.sival_int = id;
	pid_t target = 0;
	int notify = ev.sigev_notify & ~SIGEV_THREAD_ID;
	if (ev.sigev_notify & SIGEV_THREAD_ID) {
		target = host_tid_of(ev._sigev_un._tid);
		if (!target) {
			syscall_emulate(t, -EINVAL);
			return;
		}
	}
	if ((notify != SIGEV_SIGNAL && notify != SIGEV_NONE) ||
	    (notify == SIGEV_SIGNAL && (ev.sigev_signo < 1 || ev.sigev_signo > 64))) {
		syscall_emulate(t, -EINVAL);
		return;
	}
	if (remote_write(t, REMOTE(syscall_arg(t, 2)), &id, sizeof(id))) {
		syscall_emulate(t, -EFAULT);
		return;
	}
	struct vtimer *v = add_timer(t->proc->tgid, POSIX_TIMER, id);
	v->clock = clk;
	v->signo = notify == SIGEV_SIGNAL ? ev.sigev_signo : 0;
	v->target_tid = target;
	v->value = (uint64_t)(uintptr_t)ev.sigev_value.sival_ptr;
	syscall_emulate(t, 0);
}

static struct vtimer *posix_timer(struct task *t)
{
	return find_timer(t->proc->tgid, POSIX_TIMER, (int)syscall_arg(t, 0));
}

/* Implements timer_settime(2), timer_gettime(2), timer_getoverrun(2), timer_delete(2). */
void sys_timer_op(struct task *t)
{
	struct vtimer *v = posix_timer(t);
	if (!v) {
		syscall_emulate(t, -EINVAL);
		return;
	}
	int64_t result = 0;
	struct itimerspec old = current_spec(v), spec;
	switch (t->syscall_nr) {
	case __NR_timer_settime:
		result = read_spec(t, syscall_arg(t, 2), &spec);
		if (!result)
			result = arm(v, &spec, syscall_arg(t, 1) & TIMER_ABSTIME);
		if (!result)
			v->overrun_last = 0;
		if (!result && syscall_arg(t, 3) &&
		    remote_write(t, REMOTE(syscall_arg(t, 3)), &old, sizeof(old)))
			result = -EFAULT;
		break;
	case __NR_timer_gettime:
		if (remote_write(t, REMOTE(syscall_arg(t, 1)), &old, sizeof(old)))
			result = -EFAULT;
		break;
	case __NR_timer_getoverrun:
		result = v->overrun_last;
		break;
	case __NR_timer_delete:
		remove_timer(v);
		break;
	}
	syscall_emulate(t, result);
}

/* ---- timerfd ------------------------------------------------------------------------------------ */

/* Is supervisor descriptor `mine` the same open file as the tracee's `theirs`? */
static bool same_file(struct task *t, int mine, int theirs)
{
	return syscall(SYS_kcmp, getpid(), t->tid, KCMP_FILE, mine, theirs) == 0;
}

static struct vtimer *timerfd_of(struct task *t, int fd, bool create)
{
	struct vtimer *v = find_timer(t->proc->tgid, TIMERFD, fd);
	if (v && !same_file(t, v->fd, fd)) {
		remove_timer(v); /* the number was closed and reused */
		v = NULL;
	}
	if (v || !create)
		return v;
	int dup = remote_dup_fd(t, fd);
	char link[64] = "", path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dup);
	if (dup < 0 || readlink(path, link, sizeof(link) - 1) < 0 ||
	    strcmp(link, "anon_inode:[timerfd]")) {
		if (dup >= 0)
			close(dup);
		return NULL;
	}
	v = add_timer(t->proc->tgid, TIMERFD, fd);
	v->fd = dup;
	return v;
}

static void timerfd_created(struct task *t)
{
	int64_t fd = syscall_result(t);
	if (fd < 0)
		return;
	struct vtimer *v = timerfd_of(t, (int)fd, true);
	if (v)
		v->clock = (clockid_t)syscall_arg(t, 0);
}

/* Implements timerfd_create(2): a real timerfd that detrun never arms. */
void sys_timerfd_create(struct task *t)
{
	tracer_want_exit(t, timerfd_created);
}

/* Implements timerfd_settime(2), timerfd_gettime(2). */
void sys_timerfd_op(struct task *t)
{
	struct vtimer *v = timerfd_of(t, (int)syscall_arg(t, 0), false);
	if (!v) {
		syscall_emulate(t, -EINVAL);
		return;
	}
	int64_t result = 0;
	struct itimerspec old = current_spec(v), spec;
	if (t->syscall_nr == __NR_timerfd_gettime) {
		if (remote_write(t, REMOTE(syscall_arg(t, 1)), &old, sizeof(old)))
			result = -EFAULT;
		syscall_emulate(t, result);
		return;
	}
	result = read_spec(t, syscall_arg(t, 2), &spec);
	if (!result) {
		take_unread_ticks(v->fd); /* setting a timer discards old expirations */
		result = arm(v, &spec, syscall_arg(t, 1) & TFD_TIMER_ABSTIME);
	}
	if (!result && syscall_arg(t, 3) &&
	    remote_write(t, REMOTE(syscall_arg(t, 3)), &old, sizeof(old)))
		result = -EFAULT;
	syscall_emulate(t, result);
}
