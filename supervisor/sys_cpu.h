/* Instructions that read the machine directly. rdtsc and rdtscp fault (PR_SET_TSC) and are
 * answered from the virtual clock. */
#ifndef DETRUN_SUPERVISOR_SYS_CPU_H
#define DETRUN_SUPERVISOR_SYS_CPU_H

#include <stdbool.h>

struct task;

/* At a SIGSEGV stop: if the fault is a time-stamp-counter read, emulate it and return true
 * (the signal is not delivered). */
bool cpu_emulate_fault(struct task *t);

#endif
