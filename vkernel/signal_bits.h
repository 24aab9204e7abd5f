/*
 * Signal sets as the kernel keeps them in /proc and in sigset_t: bit (sig-1) for signal sig.
 */
#ifndef DETRUN_SUPERVISOR_SIGNAL_BITS_H
#define DETRUN_SUPERVISOR_SIGNAL_BITS_H

#include <signal.h>

#define SIGBIT(s) (1ULL << ((s)-1))

/* Signals a terminal sends to its whole foreground group: Ctrl-C, Ctrl-\, Ctrl-Z, a
 * resize, a hangup. While a shim intercepts, the copies the terminal gives each task are
 * dropped and detrun passes its own on at a logged point (tracer_outside.c); a pending
 * one counts only where proc->terminal_due says it was really delivered (or sent by a
 * member). */
#define TERMINAL_SIGNALS \
	(SIGBIT(SIGINT) | SIGBIT(SIGQUIT) | SIGBIT(SIGTSTP) | SIGBIT(SIGWINCH) | SIGBIT(SIGHUP))

#endif
