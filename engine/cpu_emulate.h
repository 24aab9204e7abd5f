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

/* READ_IMPLIES_EXEC (personality(2)) makes every PROT_READ mapping executable, so a
 * process that has it has every call stop (tracer.c), and these keep its code scanned
 * like any other. */
/* At the exec stop: the personality the kernel left the new image (a 64-bit exec clears
 * READ_IMPLIES_EXEC). */
void persona_exec(struct task *t);
/* At the exit of a call that stopped only because every call of the process stops: an
 * mmap, mprotect, pkey_mprotect or shmat that made code without asking is scanned. */
void code_mapped_implicitly(struct task *t);
/* At the exit of a call that maps or protects code (PROT_EXEC, SHM_EXEC, or any
 * mapping under READ_IMPLIES_EXEC): scans what it mapped, if it succeeded. */
void code_mapped(struct task *t);

#endif
