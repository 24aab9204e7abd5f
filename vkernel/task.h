/*
 * A task as the supervisor keeps it: its scheduling part (scheduler/task.h) first, then
 * what the ptrace engine and the syscall handlers keep about it — registers, the process
 * it belongs to, and each handler family's typed state between stops.
 */
#ifndef DETRUN_SUPERVISOR_TASK_H
#define DETRUN_SUPERVISOR_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>
#include <time.h>

#include "scheduler/task.h"

/* How the next resume of a stopped task continues it. */
enum resume_mode {
	RESUME_CONT,    /* PTRACE_CONT: run until the next event */
	RESUME_SYSCALL, /* PTRACE_SYSCALL: the handler wants the syscall-exit stop */
};

/* A signal action as rt_sigaction(2) passes it (struct kernel_sigaction on x86_64). */
struct vdso_space;

struct signal_action {
	uint64_t handler, flags, restorer, mask;
};

/* State shared by the threads of one process (one address space, one signal table). */
struct process {
	int refs;                  /* tasks that point here (the supervisor frees it at 0) */
	pid_t tgid;                /* host pid: what ptrace and detrun's /proc use */
	pid_t ns_tgid;             /* the pid the group itself sees (its PID namespace) */
	int aspace;                /* address-space id; vfork children share their parent's */
	int pidfd;                 /* for pidfd_getfd; -1 until first needed */
	int stat_fd;               /* /proc/TGID/stat, kept open; -1 until first needed */
	uint64_t sa_restart;       /* bit (sig-1) set when that signal's handler has SA_RESTART */
	uint64_t caught;           /* bit (sig-1) set when that signal has a handler */
	uint64_t ignored;          /* bit (sig-1) set when that signal is SIG_IGN */
	uint64_t terminal_due;     /* terminal signals whose pending copy stands for a delivery */
	uint64_t syscall_insn;     /* address of a syscall instruction, for injected calls */
	struct task *vfork_parent; /* parked parent while this vfork child shares its memory */
	bool dying;       /* exit_group, a fatal signal or SIGKILL: every thread will die */
	int64_t start_ns; /* virtual monotonic time of its creation */
	unsigned persona; /* personality(2) as the program set it; the kernel's also has
				 * ADDR_NO_RANDOMIZE, always */
	/* A task of the process has had READ_IMPLIES_EXEC since its exec: its PROT_READ
	 * mappings are code too, and every call of the process stops (sys_misc.c). */
	bool read_implies_exec;
	/* SIGILL and SIGSEGV, which detrun's traps use (engine/trap_signals.h): the
	 * program's actions, and the handlers the kernel has in their place. */
	struct signal_action trap_program[2], trap_kernel[2];
	bool trap_armed;            /* the kernel's are handlers: forcing shows a blocked signal */
	int64_t children_maxrss_kb; /* getrusage(RUSAGE_CHILDREN)'s ru_maxrss */
	int stopped_by;             /* the signal of a group stop in force, 0 for none (jobctl.c) */
	/* The latest stop of a tracee of this process's (ptrace inside the group): the SIGCHLD
	 * detrun sent for it gets CLD_TRAPPED's siginfo at its delivery. 0 for none. */
	pid_t trapped_ns_tid;
	int trapped_sig;
	struct vdso_space *vdso; /* detrun's vDSO clock page (engine/vdso.h), NULL if none */
	int64_t event_ns;  /* virtual monotonic time its vDSO page last took (engine/vdso.h) */
	uint64_t tick_brk; /* parallel mode: the break its latest brk asked for, 0 for none */
	/* First-touch ticks (engine/touch_ticks.h): the break its latest brk returned (0 for
	 * none yet), and whether its address space could have no userfaultfd. */
	uint64_t touch_brk;
	bool touch_failed;
};

/* Which member of wait_state the handler that parked a task last filled. Waits that keep
 * nothing there (pause, a read's descriptors) leave it as it is: only their own predicate
 * reads it. */
enum parked_kind {
	PARKED_NONE,      /* never filled */
	PARKED_EPOCH,     /* epoch */
	PARKED_LOOKED_AT, /* looked_at */
	PARKED_FIFO,      /* fifo */
	PARKED_WRITE,     /* write_type */
	PARKED_ENDS,      /* ends */
	PARKED_CONNECT,   /* connect */
	PARKED_OUTSIDE,   /* zero_timeout */
	PARKED_SIGSET,    /* sigset */
	PARKED_SLEEP,     /* rem_addr */
};

/* What the handler that parked a task keeps for its wait's predicate, by family: `kind`
 * names the member, and a predicate reads it through parked_state (sys_common.h), which
 * checks the kind. */
struct connect_target;
struct program_filter;
struct wait_state {
	enum parked_kind kind;
	union {
		/* Retried calls (sys_common.c), wait4 (sys_process.c), SysV IPC (sys_ipc.c),
		 * job control (jobctl.c), file locks (sys_fd.c: the logical time): the state
		 * epoch at the last look. */
		uint64_t epoch;
		/* epoll_wait retried (sys_fd.c): the logical time of the last look. */
		uint64_t looked_at;
		struct { /* open(2) of a FIFO (sys_fifo.c) */
			dev_t dev;
			ino_t ino;
			int reader_fd; /* the reader's descriptor in the task; -1 for a writer */
		} fifo;
		mode_t write_type;   /* a write waiting for room (sys_fd.c): the file type */
		struct {             /* splice-like calls waiting on both ends (sys_fd.c) */
			int len_arg; /* the length's argument, -1 for none */
			int out;     /* the output end's index in the wait's fds, -1 for none */
		} ends;
		struct connect_target *connect; /* connect to a full backlog (sys_connect.c): owned */
		/* An outside wait set (sys_external.c): rewrites the call's timeout to zero. */
		void (*zero_timeout)(struct task *t);
		uint64_t sigset;   /* sigtimedwait's set (sys_signal.c) */
		uint64_t rem_addr; /* nanosleep's remaining-time argument (sys_time.c) */
	};
};

/* The most messages one recvmmsg or sendmmsg takes: the kernel's UIO_MAXIOV (it cuts a
 * longer vlen to this). */
#define VIEW_ROOMS 1024

/* A call that goes on over several stops (rewound and run again, or cut into pieces), as
 * rr's TaskSyscallState: the handler that starts it says which family's it is, and only
 * that family's member of pending_exit.call holds its state. A later entry continues the
 * call only when it is of that kind and at the same syscall instruction (rip); another
 * call in flight (a signal handler's) replaces it. */
enum call_kind {
	CALL_NONE,
	CALL_CHUNKED_WRITE,  /* a write cut to a pipe's or socket's room (sys_fd.c): pieces */
	CALL_WAITALL,        /* a MSG_WAITALL recvfrom in pieces (sys_fd.c): pieces */
	CALL_VECTOR_WRITE,   /* writev, pwritev2, sendmsg as plain writes (sys_fd.c): pieces */
	CALL_VECTOR_RECEIVE, /* a MSG_WAITALL recvmsg as recvfroms (sys_fd.c): pieces */
	CALL_IPC_RETRY,      /* semop, msgsnd, msgrcv retried non-blocking (sys_ipc.c): ipc */
	CALL_EPOLL_RETRY,    /* an epoll_wait run with a zero timeout and retried (sys_poll.c) */
};

struct vector_write;
struct retry;
struct outputs;

/* Handler state carried from a syscall's entry stop to its exit stop (and, for calls done
 * in pieces, on to the next piece's entry). One member per handler family. */
struct pending_exit {
	void (*on_exit)(struct task *t);
	/* Rewrites what the call, once complete, shows the program (sys_netview.c,
	 * sys_notify.c): runs after on_exit, once no piece follows; dropped at the next
	 * entry (a call done in pieces asks again at each piece's). */
	void (*view)(struct task *t);
	/* The rooms for the addresses the call returns (sys_netview.c), each cut to the
	 * largest address (sizeof(struct sockaddr_storage)): one, or every message's of a
	 * recvmmsg. */
	uint8_t view_room[VIEW_ROOMS];
	struct { /* an argument the view restores (sys_netview.c) */
		int arg;
		uint64_t value;
	} view_arg;
	/* A recvmmsg's timeout (sys_netview.c): what the program gave, and the virtual time
	 * the call began (-1 for no timeout). */
	struct {
		struct timespec given;
		int64_t since;
	} view_timeout;
	/* A sendmmsg given a copy of its messages (sys_netview.c): the program's arguments,
	 * and the messages the copy holds. */
	struct {
		uint64_t msgvec, vlen;
		uint32_t copied;
	} view_mmsg;
	/* An outside call the shim monitors (sys_external.c): its output regions, described
	 * at its entry; NULL otherwise. Owned. */
	struct outputs *monitored;
	/* A write to the group's output: the bytes the shim found right at its entry
	 * (shim_ops.output_entry), which its exit need not read again. */
	uint64_t output_checked;

	enum call_kind kind;         /* the call in flight over several stops, if any */
	uint64_t rip;                /* where it lives, to recognise its next piece or retry */
	union {                      /* the member `kind` names */
		struct call_pieces { /* CALL_CHUNKED_WRITE, CALL_WAITALL, CALL_VECTOR_* */
			uint64_t progress; /* bytes moved by the earlier pieces */
			uint64_t want;     /* total bytes the program asked for */
			uint64_t buf;      /* the program's buffer (not for CALL_VECTOR_*) */
			uint64_t flags;    /* CALL_WAITALL: the program's flags */
			/* CALL_VECTOR_*: the program's iovecs (owned), and its call and
			 * arguments, put back at the end. */
			struct vector_write *iov;
			long nr;
			uint64_t args[6];
		} pieces;
		struct { /* CALL_IPC_RETRY */
			long nr;
			int arg; /* the argument changed, and its value */
			uint64_t value;
			int would_block;  /* the errno that says it would have blocked */
			int64_t deadline; /* virtual deadline, -1 for none */
			bool waited;      /* parked at least once: a removal is EIDRM */
		} ipc;
		struct { /* CALL_EPOLL_RETRY */
			long nr;
			uint64_t timeout; /* the program's timeout argument */
			int64_t deadline; /* virtual deadline, -1 for none */
		} epoll;
	} call;

	/* State of one entry kept for its exit stop only: one member per handler family. */
	union {
		/* One argument register the handler changed and restores (FIFO opens,
		 * lengths cut to a socket's room, flags dropped). */
		struct {
			int arg;
			uint64_t value;
		} changed_arg;
		/* A blocking call run in its non-blocking form (sys_common.c): how it is
		 * retried, the argument's own value, and the epoch at its entry. */
		struct {
			const struct retry *how;
			uint64_t value;
			uint64_t epoch;
		} retry;
		/* Every argument register (an outside wait run as ppoll, sys_external.c). */
		uint64_t args[6];
		struct {              /* opens (sys_files.c) */
			bool created; /* O_CREAT of a file that did not exist */
			uint64_t flags;
		} open;
		struct {            /* unlink, rmdir, rename (sys_files.c) */
			bool frees; /* the call removes the inode's last name */
			uint64_t dev, ino;
		} removal;
		struct {              /* mremap of code or of shared memory (sys_misc.c) */
			uint64_t len; /* the new length */
			bool code;    /* code: the new range is scanned */
		} remap;
		struct { /* seccomp filter installs (seccomp_filter.c) */
			struct program_filter *filter;
			uint64_t prog_arg; /* the program's sock_fprog pointer */
			bool tsync;
		} seccomp;
		struct { /* personality (sys_misc.c) */
			unsigned previous, requested;
		} persona;
		/* clone, fork, vfork, clone3 (sys_process.c), read at the clone event by
		 * tracer_tasks.c. */
		struct {
			uint64_t flags;
			uint64_t child_tid;   /* CLONE_CHILD_CLEARTID's address */
			uint64_t clone3_args; /* clone3's own argument when it read a copy; 0 */
		} clone;
	};
};

/* ptrace inside the group (handlers/sys_ptrace.c): detrun stays the only real tracer, and a
 * member tracing another member is emulated on detrun's own stops. The tracee's side. */
struct emulated_trace {
	struct task *tracer;  /* the task that attached (or the parent, for TRACEME); NULL */
	uint64_t options;     /* PTRACE_SETOPTIONS */
	uint64_t seq;         /* attach order: a wait for any tracee takes the latest first */
	uint64_t event_msg;   /* PTRACE_GETEVENTMSG */
	int report;           /* the wait status of a stop its tracer has yet to wait for; 0 */
	int stop_sig;         /* the signal of the stop it is in (GETSIGINFO); 0 */
	int stop_event;       /* the PTRACE_EVENT_* of that stop, 0 for a signal stop */
	bool seized;          /* PTRACE_SEIZE: no SIGSTOP at attach, INTERRUPT stops it */
	bool delivery;        /* the stop is a real signal's delivery: CONT's signal goes in */
	bool exec_trap;       /* the SIGTRAP that comes is the one of its exec */
	bool stepping;        /* PTRACE_SINGLESTEP set its trap flag: cleared at its next stop */
	bool syscall_mode;    /* resumed by PTRACE_SYSCALL: stops at each call's entry and exit */
	bool not_child;       /* its process is no child of the tracer's: its death is reported */
	bool in_syscall;      /* between a call's entry stop and its exit stop */
	bool rewound;         /* a handler rewound the call (remote.c): it runs again, the same */
	bool exit_due;        /* an exec's event stop: the execve's exit stop comes at let-go */
	int syscall_stop;     /* PTRACE_SYSCALL_INFO_ENTRY or _EXIT at a syscall stop; 0 */
	bool left_group_stop; /* its tracer resumed it from a group stop still in force */
	bool listening;       /* PTRACE_LISTEN: in its group stop, its tracer told of its end */
	pid_t vfork_child;    /* the virtual tid of its latest vfork child (VFORK_DONE's) */
	bool sysemu;          /* PTRACE_SYSEMU(_SINGLESTEP): the call of an entry stop is skipped */
	bool skipped;         /* resumed from an entry stop with orig_rax -1: nothing runs */
	long sysemu_nr;       /* the call SYSEMU skipped, shown at its exit stop; -1 for none */
	bool interrupt_due;   /* INTERRUPTed while stopped: it stops again when resumed */
};

struct task {
	union { /* the scheduler's part, first (scheduler/task.h) */
		struct sched_task sched;
		struct {
			SCHED_TASK_FIELDS
		};
	};
	pid_t ns_tid; /* the tid the group sees */
	struct process *proc;
	bool is_leader;
	bool regs_valid, regs_dirty;
	struct user_regs_struct regs;

	enum resume_mode resume;
	bool exit_stop_wanted;   /* resumed for a handler's syscall-exit stop, not seen yet */
	bool in_allowed_call;    /* every-call mode: past an entry stop with no seccomp stop */
	bool seccomp_strict;     /* the program put this task in seccomp strict mode */
	bool timer_hazard_shown; /* the hazard for a syscall-free loop was printed */
	bool spin_hazard_due;    /* descheduled in a read-only loop where timing chose */
	bool long_compute_shown; /* the hazard for a long computation holding others back */
	int inject_signal;       /* signal to deliver with the next resume (signal-delivery stop) */
	uint64_t resumed_after;  /* sched_now() at its latest resume: its run since comes after
				  * that event (the debugger counts its instructions from there) */
	/* Parallel mode (engine/tracer_parallel.c): */
	bool held;         /* stopped, its stop not yet handled: its domain's turn is to come */
	int held_status;   /* that stop's wait status */
	bool debugger_saw; /* the debugger looked at that stop as it came (one_at_a_time) */
	bool at_entry;     /* stopped at the seccomp stop of a call that has yet to run */
	bool in_call;      /* resumed into that call; its domain keeps the timeline until the
			    * call's exit stop, so its effects land where its event stands */
	/* A TICK call resumed to its exit stop, where what it mapped is registered for
	 * first-touch ticks (engine/touch_ticks.h): its number (0 for none) and length. */
	long touch_nr;
	uint64_t touch_len;
	bool touch_pass; /* that exit stop was wanted anyway: handled as any other after */
	/* Held for a page of shared memory (engine/page_share.h): blocked in the kernel in a
	 * fault on fault_addr, not at a ptrace stop, unless fault_stopped (interrupted so
	 * that a call could be injected into its process). */
	bool fault_held;
	bool fault_write;
	bool fault_stopped;
	uint64_t fault_addr;
	struct pending_exit exit;
	struct wait_state parked_on; /* the parking handler's data, while parked */

	uint64_t clear_child_tid; /* kernel zeroes and futex-wakes this at thread exit */
	long syscall_nr;          /* syscall of the current stop, -1 if not at a syscall */
	bool in_exec_stop;        /* at PTRACE_EVENT_EXEC: the execve has yet to return, and
				 * an injected call only runs after it (remote.c) */
	long external_restart_nr; /* the external call a signal from outside interrupted and
				   * the kernel restarts; -1 for none */
	int spin_probes;          /* probes since the last event that found a read-only loop */
	int cycle_misses;         /* cycle searches since the last event that found none */
	int cycle_skips;          /* probes left before the next cycle search */
	int64_t run_budget_ms;    /* CPU-time budget before the spin detector looks */
	int64_t run_cpu_ns;       /* the task's CPU time when that budget started */
	int64_t resumed_ms;       /* parallel mode: CLOCK_MONOTONIC ms of its latest resume */
	/* A probe cut short the native call `probe_restart_nr` at `probe_restart_rip`: its
	 * restart by the kernel is the same call going on, resumed with this request. */
	long probe_restart_nr; /* -1 for none */
	uint64_t probe_restart_rip;
	uint64_t probe_restart_args; /* digest of its six argument registers */
	int probe_restart_request;
	/* A probe's interrupt lost the race to another stop of the task: the kernel may keep it
	 * for the task's next run. Stops to go: 2 while the stop it lost to has yet to be
	 * handled, 1 for the next stop after it (spin_stale_interrupt_cut), 0 for none. */
	int interrupt_pending;
	int exit_status;  /* wait status once dead */
	int vcpu;         /* the virtual CPU it runs on: 0, or the first one of the
				 * affinity it set (getcpu, RDPID, RDTSCP's TSC_AUX) */
	bool tsc_sigsegv; /* the program asked for PR_TSC_SIGSEGV (the real TSC always traps) */
	struct program_filter *filters; /* the program's own seccomp filters (seccomp_filter.h) */
	struct emulated_trace traced;   /* a tracer inside the group, if any */
	pid_t creator_tid;              /* the thread whose clone made it: its parent thread, which
			    * PTRACE_TRACEME makes its tracer; 0 for the first task */
};

/* sched_of() relies on it. */
_Static_assert(offsetof(struct task, sched) == 0, "struct task begins with its sched_task");

/* A new task of process proc (its refs taken), not yet known to the scheduler. */
struct task *task_new(pid_t tid, struct process *proc);
/* Frees a task sched_remove has unlinked, and its process with its last task. */
void task_free(struct task *t);

/* t->parked_on as the wait's predicate reads it: of the kind its handler stored. Another
 * kind is detrun's own bug: the run ends, naming the task. */
struct wait_state *parked_state(struct task *t, enum parked_kind kind);
/* t->parked_on made of `kind`, for the handler that parks t to fill. */
struct wait_state *parked_state_new(struct task *t, enum parked_kind kind);

#endif
