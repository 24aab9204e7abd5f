/*
 * The group's own process group, and the terminal's foreground.
 *
 * The program runs in a process group of its own (its first process, or the namespace's
 * init, leads it), never in detrun's: kill(0, sig) from the program then reaches the group
 * alone, and a signal sent to detrun's process group from outside (GNU timeout, a shell's
 * job control) reaches detrun alone, which passes it on at a logical time a shim can log.
 *
 * When detrun starts in its terminal's foreground, the group's process group becomes the
 * foreground one (the program reads the terminal as it would natively) and detrun's is
 * made the foreground again when detrun ends, however it ends. The terminal's own signals
 * (Ctrl-C, Ctrl-\, Ctrl-Z, a resize, a hang-up) then go to the group's process group, not
 * to detrun; a small sentinel process in that process group — detrun's code, untraced,
 * doing nothing but wait — reports each of them to detrun through the pipe detrun's own
 * signal handler writes to, so the shim still sees them at once even while every task is
 * stopped (a stopped tracee reports nothing). The sentinel lives outside the group's PID
 * namespace and ignores every signal but the terminal's own.
 */
#ifndef DETRUN_SUPERVISOR_FOREGROUND_H
#define DETRUN_SUPERVISOR_FOREGROUND_H

#include <stdbool.h>
#include <sys/types.h>

/* The message detrun's signal handler and the sentinel write to detrun's signal pipe. */
struct outside_signal_msg {
	int sig;
	int code;  /* si_code: SI_KERNEL for the terminal's own signals */
	pid_t pid; /* the sender as detrun sees it; 0 for the kernel */
};

/* The group runs without a controlling terminal: a replay of a recording that had none
 * (the program could not open /dev/tty then, and must not now). Call before
 * foreground_prepare, which then leaves the terminal alone. */
void foreground_leave_terminal(void);
/* Whether the group gives up the terminal (launch_options.no_terminal). */
bool foreground_left_terminal(void);
/* Whether detrun has a controlling terminal. */
bool foreground_have_terminal(void);
/* Before the program starts (and before detrun enters a PID namespace, which the sentinel
 * must stay out of): if detrun has a controlling terminal, starts the sentinel. */
void foreground_prepare(void);
/* Moves the sentinel into `pgid` (already the group's process group), reporting terminal
 * signals through `report` (called in a signal handler: async-signal-safe), and gives
 * that group the terminal if detrun is in its foreground. Nothing if not prepared. */
void foreground_give(pid_t pgid, void (*report)(const struct outside_signal_msg *msg));
/* Every task of the group is stopped (Ctrl-Z, SIGSTOP): detrun stops too, so the shell
 * that runs it sees its job stopped, with the terminal back in detrun's process group.
 * Returns once detrun is continued (the SIGCONT is passed on to the group as any signal
 * sent to detrun); the group gets the terminal again if detrun is in the foreground. */
void foreground_stop_with_group(void);
/* detrun's own process group is the foreground one again; the sentinel is gone. Safe to
 * call more than once (it also runs at exit). */
void foreground_restore(void);

#endif
