#include "vkernel/report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/scheduler.h"
#include "vkernel/task.h"
#include "syscalls/syscall_table.h"

bool report_trace;
FILE *report_trace_out;
static void (*cleanup_hook)(void);

void report_set_cleanup(void (*cleanup)(void))
{
	cleanup_hook = cleanup;
}

void report_run_cleanup(void)
{
	if (cleanup_hook)
		cleanup_hook();
}

static void vsay(const char *prefix, const struct task *t, const char *fmt, va_list ap)
{
	char where[160] = "";
	if (t) {
		const char *sys = t->syscall_nr >= 0 ? syscall_name(t->syscall_nr) : "user code";
		/* The tid the program itself sees, not the host's: stderr is the same on every
		 * run (--trace shows the host tid of each new task). */
		snprintf(where, sizeof(where), "task %d (tid %d) in %s at t=%llu: ", t->vtid,
			 t->ns_tid, sys, (unsigned long long)sched_now());
	}
	fprintf(stderr, "detrun: %s%s", prefix, where);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("", NULL, fmt, ap);
	va_end(ap);
	if (cleanup_hook)
		cleanup_hook();
	exit(125);
}

static unsigned warnings_said, warnings_to_skip;

unsigned report_warnings_said(void)
{
	return warnings_said;
}

void report_skip_warnings(unsigned n)
{
	warnings_to_skip = n;
}

static bool warning_is_new(void)
{
	return ++warnings_said > warnings_to_skip;
}

void warn(const char *fmt, ...)
{
	if (!warning_is_new())
		return;
	va_list ap;
	va_start(ap, fmt);
	vsay("warning: ", NULL, fmt, ap);
	va_end(ap);
}

void task_warn(const struct task *t, const char *fmt, ...)
{
	if (!warning_is_new())
		return;
	va_list ap;
	va_start(ap, fmt);
	vsay("warning: ", t, fmt, ap);
	va_end(ap);
}

void task_die(const struct task *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("", t, fmt, ap);
	va_end(ap);
	if (cleanup_hook)
		cleanup_hook();
	exit(125);
}

void task_setup_failed(const struct task *t, const char *step, int err)
{
	if (err != -ESRCH)
		task_die(t, "cannot %s: %s; the program must not run on without it", step,
			 strerror(-err));
}

void task_error(const struct task *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("", t, fmt, ap);
	va_end(ap);
}

void hazard(const struct task *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("hazard: ", t, fmt, ap);
	va_end(ap);
}

void trace_event(const struct task *t, const char *fmt, ...)
{
	if (!report_trace)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(report_trace_out, "[t=%llu task %d] ", (unsigned long long)sched_now(), t->vtid);
	vfprintf(report_trace_out, fmt, ap);
	fputc('\n', report_trace_out);
	va_end(ap);
}
