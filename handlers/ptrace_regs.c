/*
 * The registers of a tracee as its tracer inside the group sees them (sys_ptrace.c): what
 * the program would see natively, not detrun's bookkeeping. A call detrun parked looks
 * interrupted (rax -ERESTARTSYS, past its syscall instruction); a call detrun emulated
 * looks done, with its result. A tracer's write replaces only the words it changed, so a
 * read and write back leaves detrun's state as it was. The other sets (FPU, XSTATE, debug
 * registers) are the task's own, through the real ptrace on the stopped task.
 */
#include <asm/prctl.h>
#include <elf.h>
#include <errno.h>
#include <linux/audit.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "handlers/ptrace_regs.h"
#include "handlers/sys_common.h"

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif
#define ERESTARTSYS 512
/* The kernel's struct user ends with error_code and fault_address, which glibc's lacks. */
#define USER_AREA_SIZE (sizeof(struct user) + 2 * sizeof(uint64_t))
#define REGSET_MAX 16384 /* the largest XSTATE of x86_64 CPUs is under 12 KiB */

enum {
	WORDS = sizeof(struct user_regs_struct) / sizeof(uint64_t)
};

/* In parallel mode, held at the seccomp stop of a call that has yet to be handled, when
 * its tracer attached (engine/tracer_parallel.c): the call comes after the attach on the
 * timeline, so it looks interrupted before it began, as a parked one. */
static bool held_at_call(const struct task *u)
{
	return u->held && (unsigned)u->held_status >> 16 == PTRACE_EVENT_SECCOMP;
}

/* u's registers as its tracer would see them natively. */
int ptrace_native_regs(struct task *u, struct user_regs_struct *r)
{
	if (remote_load_regs(u))
		return -ESRCH;
	*r = u->regs;
	if (u->parked && u->parked_at_exit) { /* rewound onto its syscall instruction */
		r->rip += SYSCALL_INSN_LEN;
		r->orig_rax = r->rax;
		r->rax = (uint64_t)-ERESTARTSYS;
	} else if (u->parked || held_at_call(u)) { /* at its seccomp stop */
		r->rax = (uint64_t)-ERESTARTSYS;
	} else if ((int64_t)r->orig_rax == -1 && u->syscall_nr >= 0) {
		r->orig_rax = (uint64_t)u->syscall_nr; /* emulated: done, with its result */
	} else if ((int64_t)r->orig_rax == -1 &&
		   u->traced.syscall_stop == PTRACE_SYSCALL_INFO_EXIT) {
		r->orig_rax = (uint64_t)u->traced.sysemu_nr; /* SYSEMU skipped it, keeping it */
	}
	return 0;
}

/* The tracer's new registers: only the words it changed from what it was shown replace
 * detrun's, so reading and writing back leaves a parked or emulated call as it was. */
int ptrace_set_native_regs(struct task *u, const struct user_regs_struct *r)
{
	struct user_regs_struct shown;
	int err = ptrace_native_regs(u, &shown);
	if (err)
		return err;
	uint64_t *to = (uint64_t *)&u->regs;
	const uint64_t *was = (const uint64_t *)&shown, *now = (const uint64_t *)r;
	for (int i = 0; i < WORDS; i++)
		if (now[i] != was[i]) {
			to[i] = now[i];
			u->regs_dirty = true;
		}
	return 0;
}

/* A register set through an iovec in the tracer's memory: NT_PRSTATUS is the virtual
 * view, the others the task's own through the real ptrace. */
int ptrace_regset(struct task *t, struct task *u, uint64_t type, uint64_t iov_addr, bool set)
{
	struct iovec iov;
	static uint8_t buf[REGSET_MAX];
	if (remote_read(t, REMOTE(iov_addr), &iov, sizeof(iov)))
		return -EFAULT;
	size_t len = iov.iov_len < sizeof(buf) ? iov.iov_len : sizeof(buf);
	if (type == NT_PRSTATUS) {
		struct user_regs_struct r;
		int err = ptrace_native_regs(u, &r);
		if (err)
			return err;
		if (len > sizeof(r))
			len = sizeof(r);
		if (set) {
			if (len != sizeof(r) || remote_read(t, REMOTE(iov.iov_base), &r, len))
				return -EFAULT;
			return ptrace_set_native_regs(u, &r);
		}
		memcpy(buf, &r, len);
	} else {
		struct iovec local = { buf, len };
		if (set && remote_read(t, REMOTE(iov.iov_base), buf, len))
			return -EFAULT;
		if (ptrace(set ? PTRACE_SETREGSET : PTRACE_GETREGSET, u->tid, type, &local) < 0)
			return -errno;
		if (set)
			return 0;
		len = local.iov_len;
	}
	iov.iov_len = len;
	if (remote_write(t, REMOTE(iov.iov_base), buf, len) ||
	    remote_write(t, REMOTE(iov_addr), &iov, sizeof(iov)))
		return -EFAULT;
	return 0;
}

/* PEEKUSER and POKEUSER: the general registers (virtual view) and the debug registers
 * (the task's own, and the two words after them); the rest of struct user reads as zero,
 * as the kernel's does. */
int ptrace_user_area(struct task *t, struct task *u, uint64_t off, uint64_t data, bool poke)
{
	if (off & 7 || off >= USER_AREA_SIZE)
		return -EIO;
	if (off < sizeof(struct user_regs_struct)) {
		struct user_regs_struct r;
		int err = ptrace_native_regs(u, &r);
		if (err)
			return err;
		uint64_t *word = (uint64_t *)&r + off / 8;
		if (poke) {
			*word = data;
			return ptrace_set_native_regs(u, &r);
		}
		return remote_write(t, REMOTE(data), word, 8) ? -EFAULT : 0;
	}
	if (off >= offsetof(struct user, u_debugreg)) {
		errno = 0;
		long v = ptrace(poke ? PTRACE_POKEUSER : PTRACE_PEEKUSER, u->tid, off, data);
		if (errno)
			return -errno;
		return poke || remote_write(t, REMOTE(data), &v, 8) == 0 ? 0 : -EFAULT;
	}
	uint64_t zero = 0;
	return poke ? 0 : remote_write(t, REMOTE(data), &zero, 8) ? -EFAULT : 0;
}

/* PTRACE_ARCH_PRCTL: the fs and gs bases, among the registers detrun keeps for u (a GET
 * writes the value into the tracer's memory at addr). */
int ptrace_arch_prctl(struct task *t, struct task *u, uint64_t addr, uint64_t code)
{
	struct user_regs_struct r;
	int err = ptrace_native_regs(u, &r);
	if (err)
		return err;
	switch (code) {
	case ARCH_GET_FS:
	case ARCH_GET_GS: {
		uint64_t base = code == ARCH_GET_FS ? r.fs_base : r.gs_base;
		return remote_write(t, REMOTE(addr), &base, 8) ? -EFAULT : 0;
	}
	case ARCH_SET_FS:
	case ARCH_SET_GS:
		if (addr >= (1ULL << 47) - 4096) /* TASK_SIZE_MAX */
			return -EPERM;           /* not a user address, as the kernel says */
		*(code == ARCH_SET_FS ? &r.fs_base : &r.gs_base) = addr;
		return ptrace_set_native_regs(u, &r);
	default:
		return -EINVAL;
	}
}

int ptrace_fpregs(struct task *t, struct task *u, uint64_t data, bool set)
{
	struct user_fpregs_struct fp;
	if (set && remote_read(t, REMOTE(data), &fp, sizeof(fp)))
		return -EFAULT;
	if (ptrace(set ? PTRACE_SETFPREGS : PTRACE_GETFPREGS, u->tid, 0, &fp) < 0)
		return -errno;
	return set || remote_write(t, REMOTE(data), &fp, sizeof(fp)) == 0 ? 0 : -EFAULT;
}

/* PTRACE_GET_SYSCALL_INFO: the call of the syscall stop u is in, from the registers the
 * program has (native_regs); at another stop, op NONE. Returns the full size, copies at
 * most `size` bytes, as the kernel does. */
int ptrace_syscall_info(struct task *t, struct task *u, uint64_t size, uint64_t data)
{
	struct user_regs_struct r;
	int err = ptrace_native_regs(u, &r);
	if (err)
		return err;
	struct __ptrace_syscall_info info;
	memset(&info, 0, sizeof(info));
	info.op = (uint8_t)u->traced.syscall_stop;
	info.arch = AUDIT_ARCH_X86_64;
	info.instruction_pointer = r.rip;
	info.stack_pointer = r.rsp;
	size_t full = offsetof(struct __ptrace_syscall_info, entry);
	if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
		const uint64_t args[6] = { r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9 };
		info.entry.nr = r.orig_rax;
		memcpy(info.entry.args, args, sizeof(args));
		full = offsetof(struct __ptrace_syscall_info, entry.args) + sizeof(args);
	} else if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
		info.exit.rval = (int64_t)r.rax;
		info.exit.is_error = (int64_t)r.rax < 0 && (int64_t)r.rax >= -4095;
		full = offsetof(struct __ptrace_syscall_info, exit.is_error) +
		       sizeof(info.exit.is_error);
	}
	size_t len = size < full ? size : full;
	if (len && remote_write(t, REMOTE(data), &info, len))
		return -EFAULT;
	return (int)full;
}
