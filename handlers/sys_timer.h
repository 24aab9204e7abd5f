/*
 * Virtual timers (sys_timer.c): setitimer, alarm, timer_create, timerfd.
 */
#ifndef DETRUN_SUPERVISOR_SYS_TIMER_H
#define DETRUN_SUPERVISOR_SYS_TIMER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vkernel/task.h"

int64_t timers_next_deadline(void); /* earliest armed deadline, -1 for none */
/* Earliest deadline of a timer that signals process tgid (any process for tgid 0), -1. */
int64_t timers_next_signal(pid_t tgid);
void timers_fire(void); /* fires every timer due at the current virtual time */
bool timers_fix_siginfo(struct task *t, int sig); /* at a signal stop: a timer's siginfo */
/* After sigtimedwait took signal `sig`: a timer's siginfo, written at info_addr (if any). */
void timers_fix_waited_siginfo(struct task *t, int sig, uint64_t info_addr);
void timers_process_gone(pid_t tgid, bool exec_only);

#endif
