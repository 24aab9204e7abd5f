/* Instructions that read the machine directly. rdtsc and rdtscp fault (PR_SET_TSC) and are
 * answered from the virtual clock; CPUID, RDRAND and RDSEED are patched into traps
 * (cpu_patch.c) and answered with this CPU's normalised CPUID and seeded random numbers. */
#ifndef DETRUN_SUPERVISOR_SYS_CPU_H
#define DETRUN_SUPERVISOR_SYS_CPU_H

#include <stdbool.h>

struct task;

/* At a SIGSEGV or SIGILL stop: if the fault is one of those instructions, emulate it and
 * return true (the signal is not delivered). */
bool cpu_emulate_fault(struct task *t);

#endif
