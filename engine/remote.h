/*
 * Access to a stopped tracee: registers, memory, descriptors, injected syscalls.
 *
 * Every function here expects the task to be in a ptrace stop. Failures return -errno and
 * never abort: a task can be killed (SIGKILL from elsewhere) at any moment, and ESRCH then is
 * normal, not a detrun bug. Callers turn such failures into a result for the tracee (EFAULT)
 * or a report naming the task.
 */
#ifndef DETRUN_SUPERVISOR_REMOTE_H
#define DETRUN_SUPERVISOR_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vkernel/task.h"

/* A tracee address: a distinct type so it is never dereferenced by accident. */
typedef struct {
	uint64_t addr;
} remote_ptr;
#define REMOTE(a) ((remote_ptr){ (uint64_t)(a) })

int remote_load_regs(struct task *t);  /* fills t->regs once per stop */
int remote_store_regs(struct task *t); /* writes t->regs back if they were changed */

int remote_read(struct task *t, remote_ptr src, void *dst, size_t len);
/* A write the program itself could make, as the kernel makes a call's output: -EFAULT for
 * memory the program cannot write (read-only, unmapped), where natively the call fails
 * with EFAULT. */
int remote_write(struct task *t, remote_ptr dst, const void *src, size_t len);
/* Writes through a read-only private mapping (copy-on-write, as a debugger's breakpoint):
 * for detrun's own patches of the program's code, never for a call's output. A shared
 * mapping is refused by the kernel, so no file changes. */
int remote_patch_code(struct task *t, remote_ptr dst, const void *src, size_t len);

/* One line of /proc/TID/maps. */
struct remote_mapping {
	uint64_t start, end, offset, ino;
	unsigned dev_major, dev_minor;
	char perms[5]; /* "rwxp", "r--s" ... */
};
/* The mapping of t that holds addr: 0, -ENOENT when none does, or -errno when the maps
 * cannot be read. */
int remote_mapping_at(struct task *t, uint64_t addr, struct remote_mapping *m);

/* Places `len` bytes in scratch memory of the stopped task, below the 128-byte red zone
 * of its stack, and returns their address — or 0 when that memory is not private and
 * writable (the stack pointer is the program's to set: a write there must reach no file
 * and no other process) or the write fails. The bytes last until the task next uses its
 * stack: for an argument the syscall about to run reads, in place of program memory
 * detrun cannot or must not write. */
uint64_t remote_scratch(struct task *t, const void *data, size_t len);

/* A supervisor-side duplicate of the tracee's descriptor `fd` (pidfd_getfd); -errno on
 * failure (-EBADF when the tracee has no such descriptor). The caller closes it. */
int remote_dup_fd(struct task *t, int fd);

/* Run one syscall inside the stopped task, as if it had executed it, and restore its
 * registers afterwards. Needs proc->syscall_insn (learned at the process's first syscall
 * stop). Returns the syscall's result (-errno on failure), or -ENOEXEC if no syscall
 * instruction is known yet. The injected call bypasses the filter's stop: it is the
 * supervisor's own work, not an event. */
long remote_syscall(struct task *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		    uint64_t a4, uint64_t a5);

/* The registers of a stopped task by role, in the x86_64 calling convention: the only
 * place outside remote.c (and sys_cpu.c's instruction emulation, and the register layout
 * debugger/regs.c describes to gdb, which reads and writes them whole through task_gprs
 * and task_set_gprs) that names them. They read and write t->regs, loaded by
 * remote_load_regs; a change is stored at the resume. */
#define SYSCALL_INSN_LEN 2 /* syscall (0f 05) */

/* Syscall argument n (0..5). */
uint64_t syscall_arg(const struct task *t, int n);
void syscall_set_arg(struct task *t, int n, uint64_t v);

/* At a syscall-exit stop: the call's result (-errno on failure). */
static inline int64_t syscall_result(const struct task *t)
{
	return (int64_t)t->regs.rax;
}

/* At a syscall stop: the call being made (-1 once skipped); setting it changes the call
 * that runs (at an entry) or that a rewind runs again (at an exit). */
static inline long syscall_number(const struct task *t)
{
	return (long)t->regs.orig_rax;
}

static inline void syscall_set_number(struct task *t, long nr)
{
	t->regs.orig_rax = (uint64_t)nr;
	t->regs_dirty = true;
}

/* The instruction pointer, and at a syscall stop the address of the syscall instruction
 * itself (the kernel reports the stop with the pointer already past it). */
static inline uint64_t task_ip(const struct task *t)
{
	return t->regs.rip;
}

static inline uint64_t syscall_insn_addr(const struct task *t)
{
	return t->regs.rip - SYSCALL_INSN_LEN;
}

/* Moves the instruction pointer past an instruction of `len` bytes detrun emulated. */
static inline void task_skip_insn(struct task *t, uint64_t len)
{
	t->regs.rip += len;
	t->regs_dirty = true;
}

/* At a syscall-exit stop of a rewound call (syscall_rewind): it returns `result` after
 * all, past its syscall instruction, instead of running again. */
static inline void syscall_unrewind(struct task *t, int64_t result)
{
	t->regs.rax = (uint64_t)result;
	task_skip_insn(t, SYSCALL_INSN_LEN);
	t->traced.rewound = false;
	t->traced.exit_due = t->traced.in_syscall; /* no exit trap comes: its stop is owed */
}

static inline uint64_t task_sp(const struct task *t)
{
	return t->regs.rsp;
}

/* Moves the instruction pointer: a debugger's int3 that trapped is reported one byte past
 * it, and the task must execute the instruction the int3 stands in for. */
static inline void task_set_ip(struct task *t, uint64_t ip)
{
	t->regs.rip = ip;
	t->regs_dirty = true;
}

/* The trap flag (EFLAGS.TF): while it is set the task stops with SIGTRAP after each
 * instruction, a debugger's single step. */
#define EFLAGS_TF 0x100ULL
static inline void task_set_trap_flag(struct task *t, bool on)
{
	uint64_t flags = on ? (t->regs.eflags | EFLAGS_TF) : (t->regs.eflags & ~EFLAGS_TF);
	if (flags != t->regs.eflags) {
		t->regs.eflags = flags;
		t->regs_dirty = true;
	}
}

/* Every general register at once, for a debugger's register file (debugger/regs.c lays
 * them out as gdb numbers them): a copy of the loaded registers, and a write of them all
 * that is stored at the resume. */
static inline void task_gprs(const struct task *t, struct user_regs_struct *out)
{
	*out = t->regs;
}

static inline void task_set_gprs(struct task *t, const struct user_regs_struct *in)
{
	t->regs = *in;
	t->regs_dirty = true;
}

/* At a seccomp stop: skip the call and make it return `result`. */
void syscall_emulate(struct task *t, int64_t result);
/* At a seccomp stop: skip the call now and make the task execute it again when resumed
 * (after any signal handler runs) — how a parked call is restarted. */
void syscall_skip_and_restart(struct task *t);
/* At a syscall-exit stop: the call returns `result` instead. */
void syscall_set_result(struct task *t, int64_t result);
/* At a syscall-exit stop: make the task execute the same call again when resumed. */
void syscall_rewind(struct task *t);

void remote_forget_process(struct process *p);

/* The first line of /proc/PID/fdinfo/FD (pid 0: detrun's own descriptor) that `format`
 * (one sscanf conversion, e.g. "Pid: %d") matches, stored in *value: true if found. */
bool fdinfo_scan(pid_t pid, int fd, const char *format, void *value);

/* waitpid(2) retried when one of detrun's own signals (the spin timer, a signal from
 * outside) interrupts it: a stop or death is never lost to EINTR. */
pid_t waitpid_retry(pid_t pid, int *status, int flags);

#endif
