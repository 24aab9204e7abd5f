/*
 * The timer calls (sys_timer.c): setitimer, alarm, timer_create, timerfd. The timers
 * themselves are the virtual kernel's (vkernel/timers.h).
 */
#ifndef DETRUN_SUPERVISOR_SYS_TIMER_H
#define DETRUN_SUPERVISOR_SYS_TIMER_H

#include <stdint.h>

#include "vkernel/task.h"

/* After sigtimedwait took signal `sig`: a timer's siginfo, written at info_addr (if any). */
void timers_fix_waited_siginfo(struct task *t, int sig, uint64_t info_addr);

#endif
