/*
 * The virtual kernel's timers (timers.c): setitimer and alarm, POSIX timers, timerfds. No
 * real timer is ever armed: each keeps a virtual deadline; the engine fires the due ones
 * between events and asks for the next deadline, and the timer calls
 * (handlers/sys_timer.c) create, arm and read them.
 */
#ifndef DETRUN_VKERNEL_TIMERS_H
#define DETRUN_VKERNEL_TIMERS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "vkernel/task.h"

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

/* The timer of a kind and id of process tgid, or NULL. */
struct vtimer *timers_find(pid_t tgid, enum timer_kind kind, int id);
/* A new disarmed timer (CLOCK_MONOTONIC, no descriptor). */
struct vtimer *timers_add(pid_t tgid, enum timer_kind kind, int id);
void timers_remove(struct vtimer *dead);
/* Takes (and clears) a timerfd's unread expirations without blocking. */
uint64_t timers_take_unread_ticks(int fd);

int64_t timers_next_deadline(void); /* earliest armed deadline, -1 for none */
/* Earliest deadline of a timer that signals process tgid (any process for tgid 0), -1. */
int64_t timers_next_signal(pid_t tgid);
/* Is a signal of tgid's timers due within 10 ms of virtual time after now_ns? While it is,
 * every call of the process is an event (timers.c). */
bool timers_signal_near(pid_t tgid, int64_t now_ns);
void timers_fire(void); /* fires every timer due at the current virtual time */
bool timers_fix_siginfo(struct task *t, int sig); /* at a signal stop: a timer's siginfo */
/* A timer signal `sig` of process tgid was taken otherwise (sigtimedwait): its siginfo in
 * *info, true if a timer sent it. */
bool timers_take_siginfo(pid_t tgid, int sig, siginfo_t *info);
/* exec ends POSIX timers; death ends all of a process's timers. */
void timers_process_gone(pid_t tgid, bool exec_only);

#endif
