/*
 * The syscall table, derived from syscalls.def. One row per x86_64 syscall holds every fact
 * detrun uses about it: how it is treated (class, reason), its arguments (count and kind),
 * the memory it fills when it crosses the group boundary (outputs) and which way its data
 * goes. The seccomp filter, --trace, the record/replay regions and the log printer all read
 * these rows; nothing else lists syscalls.
 *
 * This folder depends on no other folder of detrun, not even at link level
 * (tests/check_layers.py): the rows' handler column is bound where the handlers live
 * (handlers/binding.c builds its dispatch table from the same syscalls.def).
 */
#ifndef DETRUN_SYSCALLS_SYSCALL_TABLE_H
#define DETRUN_SYSCALLS_SYSCALL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

/* Calls newer than the kernel headers of the build machine: their numbers are ABI, fixed
 * once a kernel release has them, and the table gives each a row so that none runs unseen
 * (a number without a row fails with ENOSYS). */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack 453
#endif
#ifndef __NR_futex_wake
#define __NR_futex_wake 454
#endif
#ifndef __NR_futex_wait
#define __NR_futex_wait 455
#endif
#ifndef __NR_futex_requeue
#define __NR_futex_requeue 456
#endif
#ifndef __NR_statmount
#define __NR_statmount 457
#endif
#ifndef __NR_listmount
#define __NR_listmount 458
#endif
#ifndef __NR_lsm_get_self_attr
#define __NR_lsm_get_self_attr 459
#endif
#ifndef __NR_lsm_set_self_attr
#define __NR_lsm_set_self_attr 460
#endif
#ifndef __NR_lsm_list_modules
#define __NR_lsm_list_modules 461
#endif
#ifndef __NR_mseal
#define __NR_mseal 462
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_getxattrat
#define __NR_getxattrat 464
#endif
#ifndef __NR_listxattrat
#define __NR_listxattrat 465
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif
#ifndef __NR_file_getattr
#define __NR_file_getattr 468
#endif
#ifndef __NR_file_setattr
#define __NR_file_setattr 469
#endif

enum syscall_class {
	SC_ALLOW,
	SC_SERIALIZE,
	SC_BLOCKING,
	SC_EMULATE,
	SC_EXTERNAL,
	SC_UNSUPPORTED,
	SC_LOCAL, /* last: the classes before it keep their numbers */
};

/* The shapes of output regions (syscalls.def explains each OUT_ column entry). */
enum output_shape {
	SHAPE_NONE, /* ends a row's list */
	SHAPE_BUF,
	SHAPE_IOV,
	SHAPE_MSG,
	SHAPE_MMSG,
	SHAPE_SIZED,
	SHAPE_FIXED,
	SHAPE_ARRAY,
	SHAPE_FDSET,
	SHAPE_PER_RESULT,
	SHAPE_IOCTL,
};

#define SYSCALL_MAX_OUTPUTS 4

struct syscall_output {
	uint8_t shape;    /* enum output_shape */
	int8_t arg;       /* the argument holding the region's address */
	int8_t count_arg; /* the argument holding its size, count or length pointer; -1 none */
	uint32_t size;    /* fixed size, or element size */
};

/* Which way a call's data crosses the boundary; the SEND_ values say how the sent bytes
 * are laid out in the caller's memory (argument 1, sized by argument 2). */
enum data_dir {
	DATA_NONE,
	DATA_IN,        /* bytes from outside land in the caller's memory */
	DATA_PEER,      /* no bytes, but a peer outside sees it (a connection made or shut) */
	DATA_SEND_BUF,  /* a buffer of argument-2 bytes */
	DATA_SEND_IOV,  /* an iovec array of argument-2 entries */
	DATA_SEND_MSG,  /* a msghdr and its iovecs */
	DATA_SEND_MMSG, /* an mmsghdr array: the first `result` messages */
	DATA_SEND_FILE, /* bytes from a file descriptor (sendfile): not in the caller's memory */
};

struct syscall_entry {
	const char *name;
	long nr;
	enum syscall_class cls;
	const char *kinds; /* one letter per argument, then the result's (syscalls.def) */
	int nargs;
	struct syscall_output out[SYSCALL_MAX_OUTPUTS];
	enum data_dir data;
	const char *reason;
};

extern const struct syscall_entry syscall_table[];
extern const size_t syscall_table_len;

/* Rows that stop only when an argument has one of `mask`'s bits (STOP_WHEN). */
struct syscall_condition {
	long nr;
	int arg;
	uint64_t mask;
	bool every_call_with_shim; /* the condition is dropped while a shim intercepts */
};
extern const struct syscall_condition syscall_conditions[];
extern const size_t syscall_conditions_len;

/* With processes in parallel, rows narrowed by STOP_WHEN stop also when argument `arg` has
 * a bit of `mask` (arg -1: every call): calls that may map shared memory (STOP_WHEN_SHARED). */
extern const struct syscall_condition syscall_shared_conditions[];
extern const size_t syscall_shared_conditions_len;

/* Rows that stop only when an int argument has one of the listed values (STOP_WHEN_EQ). */
struct syscall_value {
	long nr;
	int arg;
	uint32_t value; /* an int to the kernel; ioctl requests go past INT_MAX */
};
extern const struct syscall_value syscall_values[];
extern const size_t syscall_values_len;

/* A TICK row: with processes in parallel, where the filter would let it run freely it
 * stops instead with SYSCALL_TICK_TAG, only to move its domain's clock. */
bool syscall_ticks(long nr);
/* The seccomp data of a tick's stop (detrun's other stops have 0, the program's own
 * filters' refusals SECCOMP_FILTER_TAG: the kernel gives the newest filter's data). */
#define SYSCALL_TICK_TAG 0x4000u

const struct syscall_entry *syscall_lookup(long nr); /* NULL for numbers not in the table */
const char *syscall_name(long nr);                   /* "syscall_NNN" for unknown numbers */
const char *syscall_class_name(enum syscall_class cls);

/* ---- facts derived from a row (NULL rows answer "none") ---- */

/* The class lets the call run without stopping (its STOP_WHEN narrowing, process
 * arguments and a shim aside): LOCAL rows always, ALLOW rows only while one task runs at
 * a time (`parallel` false). */
bool syscall_runs_freely(const struct syscall_entry *e, bool parallel);

/* An argument names a process, a process group or a priority's "who" (kinds P G W O D):
 * the call stops unless it names the caller, and its target must be a member. */
bool syscall_names_process(const struct syscall_entry *e);
/* The first descriptor argument (the one a call on an outside object is about), or -1. */
int syscall_fd_arg(const struct syscall_entry *e);
/* The argument holding MSG_* flags (MSG_DONTWAIT, MSG_NOSIGNAL), or -1. */
int syscall_msg_flags_arg(const struct syscall_entry *e);
/* Bytes from outside land in the caller's memory (a read or receive). */
bool syscall_reads_data(const struct syscall_entry *e);
/* The call hands bytes from the caller's memory to the kernel (digested). */
bool syscall_sends_memory(const struct syscall_entry *e);
/* The call sends anything (from memory or a file): EPIPE raises SIGPIPE. */
bool syscall_sends(const struct syscall_entry *e);

/* The argument that names the target of a signal (the first P or D kind), or -1. */
int syscall_target_arg(const struct syscall_entry *e);
/* The argument holding a signal number (kind n), or -1. */
int syscall_signal_arg(const struct syscall_entry *e);

/* The signal mask a call installs or waits for (kinds k, z, K). */
struct syscall_sigset {
	int arg;       /* the sigset_t pointer, or the pair's pointer; -1 for none */
	int size_arg;  /* the argument holding its size; -1 when the pair holds it */
	bool indirect; /* arg points to a { const sigset_t *, size_t } pair (pselect6) */
};
struct syscall_sigset syscall_sigset(const struct syscall_entry *e);

/* How a call's timeout is given (kinds t T V A). */
enum timeout_form {
	TIMEOUT_NONE,
	TIMEOUT_MS,           /* milliseconds in the register; negative for none */
	TIMEOUT_TIMESPEC,     /* relative struct timespec; NULL for none */
	TIMEOUT_TIMEVAL,      /* relative struct timeval; NULL for none */
	TIMEOUT_ABS_REALTIME, /* absolute CLOCK_REALTIME struct timespec; NULL for none */
};
struct syscall_timeout {
	int arg; /* -1 for none */
	enum timeout_form form;
};
struct syscall_timeout syscall_timeout(const struct syscall_entry *e);

/* Argument `arg` points into the caller's memory (kinds p s c r l k K T V A). */
bool syscall_arg_is_pointer(const struct syscall_entry *e, int arg);
/* The first path argument (kinds s c r l), or -1. */
int syscall_path_arg(const struct syscall_entry *e);
/* The directory descriptor argument a path argument is relative to (kind a right before
 * it), or -1 for the working directory. */
int syscall_dirfd_arg(const struct syscall_entry *e, int path_arg);

/* The directory entries a call changes (kinds c r l), in argument order. */
struct syscall_entries {
	int n;            /* 0 for a call that changes none */
	int path[2];      /* the path arguments */
	bool creates;     /* the last path names an entry that did not exist */
	bool new_inode;   /* ... and a new inode (not a link's) */
	bool moves_inode; /* the first path's inode gets the last path's name (rename) */
};
struct syscall_entries syscall_entries(const struct syscall_entry *e);

/* The call returns a new descriptor (">d" after the kinds). */
bool syscall_returns_fd(const struct syscall_entry *e);
/* Something leaves the group's node: bytes sent, or a connection made or shut. */
bool syscall_lets_out(const struct syscall_entry *e);

/* Why a row's roles are read by hand (IRREGULAR in syscalls.def), or NULL. */
const char *syscall_irregular(long nr);

/* Copies a NUL-terminated string of at most n-1 bytes from the traced program's address
 * addr into out; false when it cannot be read. */
typedef bool syscall_string_reader(void *ctx, uint64_t addr, char *out, size_t n);

/* "name(arg, ...)" with the row's argument count, each formatted by its kind (strings
 * through `read`, which may be NULL); unknown numbers show six hex arguments. */
void syscall_format_call(char *buf, size_t size, long nr, const uint64_t args[6],
			 syscall_string_reader *read, void *ctx);

#endif
