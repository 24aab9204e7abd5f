/*
 * The program's SIGSEGV and SIGILL, kept intact although detrun traps on them.
 *
 * RDTSC (PR_TSC_SIGSEGV) and patched CPUID/RDRAND/RDPID (UD2) reach detrun as signals the
 * kernel *forces*: when the signal is blocked or ignored, forcing resets its handler to
 * SIG_DFL and unblocks it (kernel/signal.c, force_sig_info_to_task), before detrun sees
 * anything. The dynamic loader reads the TSC right after exec, with the mask the parent
 * left, so a program started with SIGSEGV blocked would find it unblocked.
 *
 * To undo exactly what forcing changed, detrun must know whether the signal was blocked at
 * the fault. Rather than follow the mask through every rt_sigprocmask (an allowed call),
 * sigreturn and handler entry, detrun keeps the kernel's disposition of both signals a
 * handler at all times: the program's own handler, or a sentinel that stands for SIG_DFL
 * or SIG_IGN. Forcing then changes the disposition exactly when the signal was blocked,
 * so a disposition found reset at a trap means: it was blocked; block it again and put
 * the handler back. The program sees its own action (rt_sigaction's old action is
 * rewritten), and every delivery of these signals passes through detrun, which applies
 * the program's SIG_DFL or SIG_IGN there. SA_RESETHAND is applied by detrun too, so the
 * kernel's handler is never reset behind its back.
 */
#ifndef DETRUN_SUPERVISOR_TRAP_SIGNALS_H
#define DETRUN_SUPERVISOR_TRAP_SIGNALS_H

#include <stdbool.h>

struct task;

/* At the exec stop (after exec_setup): handlers are gone, ignored signals stay; the
 * sentinel is installed. */
void trap_signals_exec(struct task *t);
/* After a trap on SIGSEGV/SIGILL was emulated: undoes what forcing it changed. */
void trap_signals_after_trap(struct task *t, int sig);
/* At a delivery stop of SIGSEGV/SIGILL that is not a trap: applies the program's own
 * disposition. False: the program ignores it, drop it. */
bool trap_signals_deliver(struct task *t, int sig);
/* At the rt_sigaction stop for SIGSEGV/SIGILL (the call then runs natively). */
void trap_signals_sigaction(struct task *t);
/* A forked process starts with its parent's actions. */
struct process;
void trap_signals_inherit(struct process *child, const struct process *parent);

#endif
