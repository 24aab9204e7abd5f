/*
 * The init (pid 1) of a PID namespace the program created itself.
 *
 * The kernel protects a namespace's init from signals it has no handler for — except a
 * fault's signal, which it forces through, and the init dies of it (and every process of
 * its namespace with it). The protection is lifted only for an untraced task: traced, the
 * init would take the signal at its signal-delivery stop, drop it, fault again, and so on
 * for ever. So detrun lets the one faulting instruction run again untraced (every other
 * task is stopped, so it faults the same way), and the kernel ends the init as it would
 * natively: its parent sees it killed by the fault's signal.
 */
#ifndef DETRUN_SUPERVISOR_NESTED_INIT_H
#define DETRUN_SUPERVISOR_NESTED_INIT_H

#include <stdbool.h>
#include <sys/types.h>

struct task;

/* t is at a signal-delivery stop for `sig`. If t is a namespace's init and the signal is a
 * fault that kills it natively, it is ended as the kernel would (true): `handle_status`
 * takes the other tasks' stops meanwhile, `died` records t's death. */
bool nested_init_fault(struct task *t, int sig, void (*handle_status)(pid_t tid, int status),
		       void (*died)(struct task *t, int status));

#endif
