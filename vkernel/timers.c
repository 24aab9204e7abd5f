/* The virtual kernel's timers: alarm/setitimer, POSIX timers and timerfds, kept and fired
 * on the virtual clock (the calls that arm them are handlers/sys_timer.c).
 *
 * No real timer is ever armed. detrun keeps each timer's virtual deadline; the scheduler
 * fires due timers between events (and jumps the virtual clock to the next deadline when
 * nothing else can run), so a timer's signal or expiry lands at the same logical time on
 * every run. A timer signal is sent with kill/tgkill and, when the task takes it, its
 * siginfo is replaced by the one the kernel would have built (SI_TIMER, SI_KERNEL). A
 * timerfd is a real timerfd whose expiry count detrun sets (TFD_IOC_SET_TICKS), so reads,
 * poll and epoll on it behave natively. */
#include "vkernel/timers.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef TFD_IOC_SET_TICKS /* linux/timerfd.h, which clashes with sys/timerfd.h */
#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)
#endif

#include "vkernel/signal_bits.h"
#include "scheduler/scheduler.h"
#include "scheduler/vclock.h"
#include "vkernel/host_status.h"

/* A timer signal sent and not yet taken: its siginfo is installed at delivery. */
struct pending_info {
	pid_t tgid;
	siginfo_t info;
	struct pending_info *next;
};

static struct vtimer *timers;
static struct pending_info *pending;

struct vtimer *timers_find(pid_t tgid, enum timer_kind kind, int id)
{
	for (struct vtimer *v = timers; v; v = v->next)
		if (v->tgid == tgid && v->kind == kind && v->id == id)
			return v;
	return NULL;
}

struct vtimer *timers_add(pid_t tgid, enum timer_kind kind, int id)
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

void timers_remove(struct vtimer *dead)
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
			timers_remove(v);
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

/* Ten thousand events: far enough for the timers a computation waits for (a tick, a short
 * alarm), short of the common long timeouts (a second's lock wait, a minute's login). */
static const int64_t CALL_HORIZON_NS = 10000000;

/* Only a timer signal due this soon makes every call of its process an event (the engine's
 * every_syscall_stops). One further off takes that many events (each moves the clock by
 * VCLOCK_STEP_NS) or a jump of the clock to come within reach, and a server that leaves a
 * long timeout armed while it works (PostgreSQL keeps a backend's alarm armed after a lock
 * wait, for its deadlock check a second ahead) would otherwise stop at every call. The
 * answer depends only on the timers and the virtual time given, which the engine takes at
 * the task's resumes, points of the timeline: the same on every run. A loop whose calls
 * never stop, waiting for a timer further off, is left to the spin detector, as a loop
 * without calls is. */
bool timers_signal_near(pid_t tgid, int64_t now_ns)
{
	int64_t due = timers_next_signal(tgid);
	return due >= 0 && due - now_ns <= CALL_HORIZON_NS;
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

bool timers_take_siginfo(pid_t tgid, int sig, siginfo_t *info)
{
	struct pending_info **pp = pending_of(tgid, sig, false);
	if (!pp)
		return false;
	*info = take_pending(pp);
	timer_signal_taken(info);
	return true;
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
uint64_t timers_take_unread_ticks(int fd)
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
	uint64_t ticks = timers_take_unread_ticks(v->fd) + n;
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
