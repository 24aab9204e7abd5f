/*
 * What the engine asks of the syscall handlers (handlers/): the engine runs the stops and
 * names no handler; the handlers' room fills this table (handlers/binding.c) and the
 * composition root (cli/) installs it before the run, as the scheduler takes sched_ops.
 * So the engine links without the handlers, and the handlers call down into it.
 */
#ifndef DETRUN_ENGINE_HANDLER_OPS_H
#define DETRUN_ENGINE_HANDLER_OPS_H

#include <stdbool.h>

struct task;

struct handler_ops {
	/* A stopped call's seccomp stop, t->syscall_nr set, its event counted: runs the
	 * table's handler for it (or refuses it). */
	void (*dispatch)(struct task *t);

	/* Lifecycle, each at one point of the engine's work: */
	void (*run_starting)(void);              /* before the program is launched */
	void (*launched)(bool pid_namespace);    /* the program runs, in a PID namespace or not */
	void (*exec_done)(struct task *t);       /* t's process runs a new, set-up image */
	void (*process_exiting)(struct task *t); /* the last thread of t's process exits */
	void (*joiner_woken)(struct task *t);    /* a futex waiter woken by a CLEARTID exit */
	void (*task_gone)(struct task *t);       /* t is dead, about to be freed */
	/* A signal stops t (an event): true if a tracer inside the group takes the stop. */
	bool (*signal_stop)(struct task *t, int sig);
	/* A syscall-entry (or exit: the call complete as the program sees it) stop of t,
	 * traced with PTRACE_SYSCALL: true if its tracer inside the group takes it. */
	bool (*syscall_stop)(struct task *t, bool entry);
	/* t enters a group stop of its process's (`sig`, jobctl.h): a tracer inside the group
	 * sees it. */
	void (*group_stop)(struct task *t, int sig);
	/* t's process is continued while t is in its group stop: true if a tracer inside the
	 * group listening to it (PTRACE_LISTEN) takes the stop that comes instead. */
	bool (*continued)(struct task *t);
	/* parent made child (a PTRACE_EVENT_CLONE, _FORK or _VFORK of detrun's): a tracer
	 * inside the group that follows it takes both. */
	void (*cloned)(struct task *parent, struct task *child, int event);
	/* A SIGCHLD stops t before its delivery: one detrun sent for a handler (a tracee's stop)
	 * gets the siginfo the kernel's would have; the kernel's own, no CPU times. */
	void (*sigchld_siginfo)(struct task *t);
	/* t's vfork child has exec'd or exited (PTRACE_EVENT_VFORK_DONE): true if a tracer
	 * inside the group takes the stop. */
	bool (*vfork_done)(struct task *t);

	/* Calls on objects outside the group (handlers/sys_external.c): */
	void (*outside_restarted)(struct task *t);        /* the kernel restarts one */
	void (*outside_wait_interrupted)(struct task *t); /* a signal interrupted its wait */
};

/* Installs `ops` (static storage) before tracer_run. */
void tracer_set_handler_ops(const struct handler_ops *ops);

#endif
