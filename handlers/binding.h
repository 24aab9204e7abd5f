/*
 * The handler column of syscalls.def, bound here where the handlers live (as gVisor's
 * linux64.go and strace's syscallent bind theirs): syscalls/ keeps the one list and knows
 * no handler; this folder derives a table indexed by syscall number from the same rows,
 * and handler_ops gives the engine that dispatch and the handlers' lifecycle hooks. The
 * composition root (cli/) installs handler_ops in the engine.
 */
#ifndef DETRUN_HANDLERS_BINDING_H
#define DETRUN_HANDLERS_BINDING_H

#include "engine/handler_ops.h"

struct task;

/* A handler runs at the syscall's seccomp stop with t->regs loaded. It leaves the task
 * ready to resume natively, sets an emulated result, parks it, or asks for the exit stop. */
typedef void syscall_handler(struct task *t);

#define SYSCALL(name, cls, handler, kinds, outputs, data, reason) syscall_handler handler;
#define STOP_WHEN(name, arg, mask, with_shim)
#define STOP_WHEN_EQ(name, arg, value)
#define STOP_WHEN_SHARED(name, arg, mask)
#define IRREGULAR(name, why)
#include "syscalls/syscalls.def"

/* The handler of the row for `nr`, NULL for numbers without a row. */
syscall_handler *handler_of(long nr);

extern const struct handler_ops handler_ops;

#endif
