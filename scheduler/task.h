/*
 * Tasks and processes of the deterministic process group.
 *
 * A task is one kernel thread of a traced process. Every task gets a virtual id (vtid) in
 * creation order; creation order is itself decided by the serial schedule, so vtids are the
 * same in every run and are what the round-robin rule, --trace and every message use. Real
 * tids only address the kernel.
 *
 * Between events every task except the one running sits in a ptrace stop. A stopped task
 * either can continue (no wait) or is parked on a wait: a predicate the scheduler evaluates
 * immediately before it would resume the task, so nothing can change between "ready" and
 * "running" — that atomicity is what keeps natively executed blocking calls from blocking.
 *
 * struct task belongs to the supervisor (vkernel/task.h). The scheduler sees only its
 * scheduling part, struct sched_task, which the supervisor's struct task begins with:
 * everything here takes struct task pointers, and sched_of() gives the part it owns.
 */
#ifndef DETRUN_SCHEDULER_TASK_H
#define DETRUN_SCHEDULER_TASK_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct task;

/* What a parked task's predicate says. */
enum wait_result {
	WAIT_NOT_READY,
	WAIT_READY, /* the predicate prepared the task's resume (native run or emulated result) */
};

struct wait {
	/* For --trace and deadlock reports: "futex", "read fd 3" ... sched_park copies the
	 * text into what_text and points `what` there, so a handler may describe the wait in
	 * a buffer of its own that the next wait reuses. (What the handler's predicate needs
	 * is the supervisor's: struct task's parked_on.) */
	const char *what;
	char what_text[48];
	int64_t deadline_ns; /* virtual time at which on_timeout fires; -1 for none */
	/* Called by the scheduler just before it would resume the task. */
	enum wait_result (*ready)(struct task *t);
	/* Called when the virtual clock reaches deadline_ns and ready() was not satisfied. */
	void (*on_timeout)(struct task *t);
	/* Called when a signal ends the wait, before the scheduler sets EINTR or a restart. */
	void (*on_interrupt)(struct task *t);
	/* Supervisor-side duplicates of the descriptors waited on, owned by the wait and
	 * closed when the task is unparked. */
	struct pollfd *fds;
	int nfds;
	/* What ready() keeps from one look to the next (descriptors of its own included),
	 * dropped by drop_memo when the task is unparked; NULL for none. */
	void *memo;
	void (*drop_memo)(void *memo);
	/* May something outside the group (a terminal, a peer socket) make fds ready? Then
	 * the scheduler waits for them in real time instead of declaring a deadlock. */
	bool external;
	bool interruptible; /* a deliverable signal ends the wait */
	bool sigmask_arg;   /* the call installs its own signal mask (sigsuspend, ppoll ...) */
	uint64_t sigmask;   /* that mask, when sigmask_arg */
	bool restartable;   /* restarted after a SA_RESTART handler (read, wait4 ...) */
};

enum task_state {
	TASK_NEW,     /* created; its first ptrace stop has not been seen yet */
	TASK_STOPPED, /* in a ptrace stop, at an event */
	TASK_RUNNING, /* resumed; the scheduler waits for its next stop */
	TASK_EXITING, /* past PTRACE_EVENT_EXIT; waiting for the kernel to report its death */
	TASK_DEAD,
};

/* The scheduling part of a task: what the scheduler reads and writes. The supervisor's
 * struct task lays these fields out first (SCHED_TASK_FIELDS, in an anonymous union with a
 * struct sched_task) so its code names them directly: t->state, t->wait. */
#define SCHED_TASK_FIELDS \
	int vtid;  /* creation order: the round-robin order */ \
	pid_t tid; /* host tid (sched_find) */ \
	enum task_state state; \
	bool parked; \
	bool parked_at_exit; /* parked at a syscall-exit stop, already rewound */ \
	struct wait wait; \
	uint64_t signals_seen; /* signal epoch at which the wait was last checked */ \
	bool spin_descheduled; /* yielded by the spin detector, not at a syscall */ \
	/* In a stop of a tracer inside the group (ptrace emulated, handlers/sys_ptrace.c): \
	 * not resumed, its wait not looked at, until that tracer lets it go. */ \
	bool traced_stop; \
	int futex_index;   /* which word of a futex_waitv woke it (futex_wake sets it) */ \
	struct task *next; /* all tasks, in vtid order */

struct sched_task {
	SCHED_TASK_FIELDS
};

static inline struct sched_task *sched_of(struct task *t)
{
	return (struct sched_task *)(void *)t;
}

static inline const struct sched_task *sched_of_const(const struct task *t)
{
	return (const struct sched_task *)(const void *)t;
}

#endif
