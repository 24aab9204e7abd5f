/*
 * Helpers shared by the syscall handlers (sys_*.c). Handlers run at a seccomp stop with the
 * task's registers loaded and return after doing one of four things: nothing (the call runs
 * natively), syscall_emulate() (detrun's result, the call is skipped), sched_park() (the call
 * waits), or tracer_want_exit() (the call runs and the handler sees its result).
 */
#ifndef DETRUN_SUPERVISOR_SYS_COMMON_H
#define DETRUN_SUPERVISOR_SYS_COMMON_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "scheduler/scheduler.h"
#include "vkernel/task.h"
#include "engine/remote.h"
#include "vkernel/host_status.h"
#include "engine/tracer.h"
#include "vkernel/signal_bits.h"

#endif
