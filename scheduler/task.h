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
	/* For --trace and deadlock reports: "futex", "read fd 3" ... sched_park copies the
	 * text into what_text and points `what` there, so a handler may describe the wait in
	 * a buffer of its own that the next wait reuses. */
	const char *what;
	char what_text[48];
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

/* A signal action as rt_sigaction(2) passes it (struct kernel_sigaction on x86_64). */
struct signal_action {
	uint64_t handler, flags, restorer, mask;
};

/* State shared by the threads of one process (one address space, one signal table). */
struct process {
	int refs;
	pid_t tgid;             /* host pid: what ptrace and detrun's /proc use */
	pid_t ns_tgid;          /* the pid the group itself sees (its PID namespace) */
	int aspace;             /* address-space id; vfork children share their parent's */
	int pidfd;              /* for pidfd_getfd; -1 until first needed */
	int stat_fd;            /* /proc/TGID/stat, kept open; -1 until first needed */
	uint64_t sa_restart;    /* bit (sig-1) set when that signal's handler has SA_RESTART */
	uint64_t caught;        /* bit (sig-1) set when that signal has a handler */
	uint64_t ignored;       /* bit (sig-1) set when that signal is SIG_IGN */
	uint64_t terminal_due;  /* terminal signals whose pending copy stands for a delivery */
	uint64_t syscall_insn;  /* address of a syscall instruction, for injected calls */
	struct task *vfork_parent; /* parked parent while this vfork child shares its memory */
	bool dying;             /* exit_group, a fatal signal or SIGKILL: every thread will die */
	int64_t start_ns;       /* virtual monotonic time of its creation */
	unsigned persona;       /* personality(2) as the program set it; the kernel's also has
				 * ADDR_NO_RANDOMIZE, always */
	/* SIGILL and SIGSEGV, which detrun's traps use (supervisor/trap_signals.h): the
	 * program's actions, and the handlers the kernel has in their place. */
	struct signal_action trap_program[2], trap_kernel[2];
	bool trap_armed;        /* the kernel's are handlers: forcing shows a blocked signal */
	int64_t children_maxrss_kb; /* getrusage(RUSAGE_CHILDREN)'s ru_maxrss */
	int stopped_by;         /* the signal of a group stop in force, 0 for none (jobctl.c) */
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
	bool exit_stop_wanted;  /* resumed for a handler's syscall-exit stop, not seen yet */
	bool in_allowed_call;   /* every-call mode: past an entry stop with no seccomp stop */
	bool seccomp_strict;    /* the program put this task in seccomp strict mode */
	bool timer_hazard_shown; /* the hazard for a syscall-free loop was printed */
	bool long_compute_shown; /* the hazard for a long computation holding others back */
	int inject_signal;      /* signal to deliver with the next resume (signal-delivery stop) */
	struct pending_exit exit;

	uint64_t clear_child_tid; /* kernel zeroes and futex-wakes this at thread exit */
	long syscall_nr;        /* syscall of the current stop, -1 if not at a syscall */
	bool spin_descheduled;  /* yielded by the spin detector, not at a syscall */
	bool in_exec_stop;      /* at PTRACE_EVENT_EXEC: the execve has yet to return, and
				 * an injected call only runs after it (remote.c) */
	long external_restart;  /* 1 + the syscall whose external call was interrupted and
				 * is restarted by the kernel; 0 for none (read is 0) */
	int spin_probes;        /* probes since the last event that found a read-only loop */
	int64_t run_budget_ms;  /* CPU-time budget before the spin detector looks */
	int64_t run_cpu_ns;     /* the task's CPU time when that budget started */
	/* A probe cut short the native call `probe_restart_nr` at `probe_restart_rip`: its
	 * restart by the kernel is the same call going on, resumed with this request. */
	long probe_restart_nr;  /* -1 for none */
	uint64_t probe_restart_rip;
	uint64_t probe_restart_args; /* digest of its six argument registers */
	int probe_restart_request;
	int exit_status;        /* wait status once dead */
	int vcpu;               /* the virtual CPU it runs on: 0, or the first one of the
				 * affinity it set (getcpu, RDPID, RDTSCP's TSC_AUX) */
	bool tsc_sigsegv;       /* the program asked for PR_TSC_SIGSEGV (the real TSC always traps) */
	struct task *next;      /* all tasks, in vtid order */
};

#endif
