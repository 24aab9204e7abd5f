/*
 * A tracee's registers for its tracer inside the group (ptrace_regs.c): the general ones
 * as the program would see them natively, the others the task's own. Each request returns
 * 0 or -errno (the tracer's result); t is the tracer, u the stopped tracee.
 */
#ifndef DETRUN_HANDLERS_PTRACE_REGS_H
#define DETRUN_HANDLERS_PTRACE_REGS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/user.h>

struct task;

/* u's general registers as its tracer would see them natively. */
int ptrace_native_regs(struct task *u, struct user_regs_struct *r);
/* The tracer's new general registers for u: the words it changed replace detrun's. */
int ptrace_set_native_regs(struct task *u, const struct user_regs_struct *r);
/* GETREGSET and SETREGSET (the iovec at iov_addr in t's memory). */
int ptrace_regset(struct task *t, struct task *u, uint64_t type, uint64_t iov_addr, bool set);
/* PEEKUSER and POKEUSER. */
int ptrace_user_area(struct task *t, struct task *u, uint64_t off, uint64_t data, bool poke);
/* PTRACE_ARCH_PRCTL: get or set the fs or gs base. */
int ptrace_arch_prctl(struct task *t, struct task *u, uint64_t addr, uint64_t code);
/* GETFPREGS and SETFPREGS. */
int ptrace_fpregs(struct task *t, struct task *u, uint64_t data, bool set);
/* PTRACE_GET_SYSCALL_INFO for u at the stop it is in: the full size, or -errno. */
int ptrace_syscall_info(struct task *t, struct task *u, uint64_t size, uint64_t data);

#endif
