/* The timer calls: alarm/setitimer, POSIX timers, timerfd, on the virtual kernel's timers
 * (vkernel/timers.c: no real timer is ever armed; a due timer's signal or expiry lands at
 * the same logical time on every run). A timerfd is a real timerfd whose expiry count
 * detrun sets (TFD_IOC_SET_TICKS), so reads, poll and epoll on it behave natively. */
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

#include "scheduler/vclock.h"
#include "vkernel/report.h"
#include "handlers/sys_reach.h"
#include "handlers/sys_common.h"
#include "handlers/sys_timer.h"
#include "vkernel/timers.h"

void timers_fix_waited_siginfo(struct task *t, int sig, uint64_t info_addr)
{
	siginfo_t info;
	if (timers_take_siginfo(t->proc->tgid, sig, &info) && info_addr &&
	    remote_write(t, REMOTE(info_addr), &info, sizeof(info)))
		task_warn(t, "cannot write the siginfo of timer signal %d", sig);
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
	struct vtimer *v = timers_find(t->proc->tgid, ITIMER, which);
	if (!v) {
		v = timers_add(t->proc->tgid, ITIMER, which);
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
	struct task *u = reach_task(ns_tid);
	return u ? u->tid : 0;
}

static int next_posix_id(pid_t tgid)
{
	int id = 0;
	while (timers_find(tgid, POSIX_TIMER, id))
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
	struct vtimer *v = timers_add(t->proc->tgid, POSIX_TIMER, id);
	v->clock = clk;
	v->signo = notify == SIGEV_SIGNAL ? ev.sigev_signo : 0;
	v->target_tid = target;
	v->value = (uint64_t)(uintptr_t)ev.sigev_value.sival_ptr;
	syscall_emulate(t, 0);
}

static struct vtimer *posix_timer(struct task *t)
{
	return timers_find(t->proc->tgid, POSIX_TIMER, (int)syscall_arg(t, 0));
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
		timers_remove(v);
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
	struct vtimer *v = timers_find(t->proc->tgid, TIMERFD, fd);
	if (v && !same_file(t, v->fd, fd)) {
		timers_remove(v); /* the number was closed and reused */
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
	v = timers_add(t->proc->tgid, TIMERFD, fd);
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
		timers_take_unread_ticks(v->fd); /* setting a timer discards old expirations */
		result = arm(v, &spec, syscall_arg(t, 1) & TFD_TIMER_ABSTIME);
	}
	if (!result && syscall_arg(t, 3) &&
	    remote_write(t, REMOTE(syscall_arg(t, 3)), &old, sizeof(old)))
		result = -EFAULT;
	syscall_emulate(t, result);
}
