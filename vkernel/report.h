/*
 * detrun's own messages. Two channels, never mixed: what the tracee sees is a syscall result
 * in its registers; what detrun says goes to stderr through these functions. Every message
 * about a task names it the same way — vtid, the tid the program itself sees, syscall,
 * logical time — so a user can line it up with --trace output. Never the host tid: stderr
 * must be the same on every run (--trace shows the host tid of each new task).
 */
#ifndef DETRUN_SUPERVISOR_REPORT_H
#define DETRUN_SUPERVISOR_REPORT_H

#include <stdbool.h>
#include <stdio.h>

struct task;

extern bool report_trace; /* --trace: one line per event */
extern FILE *report_trace_out;

__attribute__((format(printf, 1, 2), noreturn)) void die(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void warn(const char *fmt, ...);
/* Warnings said so far by this process, and how many of the first ones to keep quiet: a
 * debugger's re-execution of the same run says only what the session has not said yet. */
unsigned report_warnings_said(void);
void report_skip_warnings(unsigned n);
/* "detrun: task 3 (tid 4) in futex at t=55: ..." */
__attribute__((format(printf, 2, 3))) void task_warn(const struct task *t, const char *fmt, ...);
/* The same without "warning:", for what ends the run; the caller ends it. */
__attribute__((format(printf, 2, 3))) void task_error(const struct task *t, const char *fmt, ...);
__attribute__((format(printf, 2, 3), noreturn)) void task_die(const struct task *t, const char *fmt,
							      ...);
/* A step detrun must not go on without (the vDSO unmap at exec, the scan of new code, ...)
 * failed with -err: "cannot STEP: REASON" ends the run with exit 125, unless err is
 * -ESRCH: the task is gone, runs no more program code, and its death report follows. */
void task_setup_failed(const struct task *t, const char *step, int err);
/* One --trace line: "[t=55 task 3] futex(...)". */
__attribute__((format(printf, 2, 3))) void trace_event(const struct task *t, const char *fmt, ...);

/* The hazard channel: something detrun could not make deterministic. Always printed. */
__attribute__((format(printf, 2, 3))) void hazard(const struct task *t, const char *fmt, ...);

/* Called before dying so the traced group goes with us. */
void report_set_cleanup(void (*cleanup)(void));
/* Runs it now (the debugger ends the group before it executes detrun again). */
void report_run_cleanup(void);

#endif
