/*
 * The syscall table, derived from syscalls.def. One row per x86_64 syscall says how detrun
 * treats it; the seccomp filter, the dispatcher and every printed name come from here.
 */
#ifndef DETRUN_SUPERVISOR_SYSCALL_TABLE_H
#define DETRUN_SUPERVISOR_SYSCALL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct task;

enum syscall_class {
	SC_ALLOW,
	SC_SERIALIZE,
	SC_BLOCKING,
	SC_EMULATE,
	SC_EXTERNAL,
	SC_UNSUPPORTED,
};

/* A handler runs at the syscall's seccomp stop with t->regs loaded. It leaves the task
 * ready to resume natively, sets an emulated result, parks it, or asks for the exit stop. */
typedef void syscall_handler(struct task *t);

struct syscall_entry {
	const char *name;
	long nr;
	enum syscall_class cls;
	syscall_handler *handler;
	const char *reason;
};

#define SYSCALL(name, cls, handler, reason) syscall_handler handler;
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value)
#include "supervisor/syscalls.def"
#undef STOP_WHEN_EQ
#undef STOP_WHEN
#undef SYSCALL

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

/* Rows that stop only when an int argument has one of the listed values (STOP_WHEN_EQ). */
struct syscall_value {
	long nr;
	int arg;
	uint32_t value; /* an int to the kernel; ioctl requests go past INT_MAX */
};
extern const struct syscall_value syscall_values[];
extern const size_t syscall_values_len;

const struct syscall_entry *syscall_lookup(long nr); /* NULL for numbers not in the table */
const char *syscall_name(long nr);                   /* "syscall_NNN" for unknown numbers */
const char *syscall_class_name(enum syscall_class cls);

#endif
