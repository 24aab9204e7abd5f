/*
 * Between the two halves of ptrace inside the group: the requests and stops
 * (sys_ptrace.c) and the tracer's wait (ptrace_wait.c).
 */
#ifndef DETRUN_HANDLERS_PTRACE_WAIT_H
#define DETRUN_HANDLERS_PTRACE_WAIT_H

#include <stdint.h>

struct task;

/* The next number of the order attaches, stops and deaths are reported in. */
uint64_t ptrace_next_seq(void);
/* t is dead: its death is kept for its tracer's wait where the kernel's tells nothing. */
void ptrace_wait_task_gone(struct task *t);

#endif
