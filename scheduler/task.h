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
 */
#ifndef DETRUN_SCHEDULER_TASK_H
#define DETRUN_SCHEDULER_TASK_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct task;

/* What a parked task's predicate says. */
enum wait_result {
	WAIT_NOT_READY,
	WAIT_READY, /* the predicate prepared the task's resume (native run or emulated result) */
};

struct wait {
	const char *what;    /* for --trace and deadlock reports: "futex", "read fd 3" ... */
	int64_t deadline_ns; /* virtual time at which on_timeout fires; -1 for none */
	/* Called by the scheduler just before it would resume the task. */
	enum wait_result (*ready)(struct task *t);
	/* Called when the virtual clock reaches deadline_ns and ready() was not satisfied. */
	void (*on_timeout)(struct task *t);
	/* Called when a signal ends the wait, before the scheduler sets EINTR or a restart. */
	void (*on_interrupt)(struct task *t);
	uint64_t arg[4];     /* the handler's own data (addresses, counts) */
	/* Supervisor-side duplicates of the descriptors waited on, owned by the wait and
	 * closed when the task is unparked. */
	struct pollfd *fds;
	int nfds;
	/* May something outside the group (a terminal, a peer socket) make fds ready? Then
	 * the scheduler waits for them in real time instead of declaring a deadlock. */
	bool external;
	bool interruptible;  /* a deliverable signal ends the wait */
	bool sigmask_arg;    /* the call installs its own signal mask (sigsuspend, ppoll ...) */
	uint64_t sigmask;    /* that mask, when sigmask_arg */
	bool restartable;    /* restarted after a SA_RESTART handler (read, wait4 ...) */
	uint64_t retry_epoch; /* for retried calls: state epoch of the last attempt */
};

/* How the next resume of a stopped task continues it. */
enum resume_mode {
	RESUME_CONT,     /* PTRACE_CONT: run until the next event */
	RESUME_SYSCALL,  /* PTRACE_SYSCALL: the handler wants the syscall-exit stop */
};

enum task_state {
	TASK_NEW,      /* created; its first ptrace stop has not been seen yet */
	TASK_STOPPED,  /* in a ptrace stop, at an event */
	TASK_RUNNING,  /* resumed; the scheduler waits for its next stop */
	TASK_EXITING,  /* past PTRACE_EVENT_EXIT; waiting for the kernel to report its death */
	TASK_DEAD,
};

/* State shared by the threads of one process (one address space, one signal table). */
struct process {
	int refs;
	pid_t tgid;             /* host pid: what ptrace and detrun's /proc use */
	pid_t ns_tgid;          /* the pid the group itself sees (its PID namespace) */
	int aspace;             /* address-space id; vfork children share their parent's */
	int pidfd;              /* for pidfd_getfd; -1 until first needed */
	uint64_t sa_restart;    /* bit (sig-1) set when that signal's handler has SA_RESTART */
	uint64_t caught;        /* bit (sig-1) set when that signal has a handler */
	uint64_t ignored;       /* bit (sig-1) set when that signal is SIG_IGN */
	uint64_t terminal_due;  /* terminal signals whose pending copy stands for a delivery */
	uint64_t syscall_insn;  /* address of a syscall instruction, for injected calls */
	struct task *vfork_parent; /* parked parent while this vfork child shares its memory */
	bool dying;             /* exit_group, a fatal signal or SIGKILL: every thread will die */
	int64_t start_ns;       /* virtual monotonic time of its creation */
};

/* Handler state carried from a syscall's entry stop to its exit stop. */
struct pending_exit {
	void (*on_exit)(struct task *t);
	uint64_t saved[6];     /* argument registers the handler changed and must restore */
	uint64_t progress;     /* bytes already moved by earlier chunks of a chunked write */
	uint64_t want;         /* total bytes the program asked for */
	uint64_t buf;          /* the program's buffer, for chunked writes */
	uint64_t rip;          /* where the chunked call lives, to recognise its next chunk */
	const void *ctx;       /* the handler's description of the call */
};

struct task {
	int vtid;
	pid_t tid;              /* host tid */
	pid_t ns_tid;           /* the tid the group sees */
	struct process *proc;
	enum task_state state;
	bool is_leader;
	bool regs_valid, regs_dirty;
	struct user_regs_struct regs;

	bool parked;
	bool parked_at_exit;    /* parked at a syscall-exit stop, already rewound for retry */
	struct wait wait;
	uint64_t signals_seen;  /* signal epoch at which the wait was last checked */
	enum resume_mode resume;
	int inject_signal;      /* signal to deliver with the next resume (signal-delivery stop) */
	struct pending_exit exit;

	uint64_t clear_child_tid; /* kernel zeroes and futex-wakes this at thread exit */
	long syscall_nr;        /* syscall of the current stop, -1 if not at a syscall */
	bool spin_descheduled;  /* yielded by the spin detector, not at a syscall */
	long external_restart;  /* 1 + the syscall whose external call was interrupted and
				 * is restarted by the kernel; 0 for none (read is 0) */
	long probe_restart;     /* 1 + the syscall the spin detector's interrupt cut short
				 * (a clone3 in progress): its restart is the same event */
	uint64_t probe_restart_rip;
	int spin_probes;        /* consecutive probes that found writes (backs off the budget) */
	int64_t run_budget_ms;  /* wall-clock budget before the spin detector looks */
	int exit_status;        /* wait status once dead */
	struct task *next;      /* all tasks, in vtid order */
};

#endif
