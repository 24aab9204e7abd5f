/* Stacks of stopped tasks (libunwind-ptrace), for hazards and fatal-signal reports. */
#ifndef DETRUN_SUPERVISOR_STACK_H
#define DETRUN_SUPERVISOR_STACK_H

struct task;

/* Prints "why" and up to 16 frames of t's stack to stderr. */
void stack_report(struct task *t, const char *why);

#endif
