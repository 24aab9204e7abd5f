/*
 * Job control: group stops and continues, as a shell sees them.
 *
 * A stop signal (SIGSTOP, or SIGTSTP/SIGTTIN/SIGTTOU with their default action) makes every
 * thread of a process trap with PTRACE_EVENT_STOP (a group stop under PTRACE_SEIZE). The
 * kernel keeps the group-stop state itself — the real parent's waitpid(WUNTRACED) reports
 * it once every thread has trapped, and waitpid(WCONTINUED) reports a SIGCONT — so detrun
 * only has to keep each stopped thread where the kernel would: parked, never resumed,
 * until a SIGCONT (or SIGKILL) reaches its process. A traced process keeps a SIGCONT
 * pending (the kernel queues it for the tracer), which is how detrun sees it arrive; the
 * first thread to see it clears the process's stop for its siblings.
 *
 * Threads of a stopping process that are parked in a call take part in the stop as the
 * kernel makes them: the call is interrupted, and restarted once the process continues.
 * Every step happens at an event or a state change the schedule orders, so stops, waits
 * and continues fall at the same logical times in every run.
 */
#ifndef DETRUN_SUPERVISOR_JOBCTL_H
#define DETRUN_SUPERVISOR_JOBCTL_H

#include <stdbool.h>

struct task;

/* A PTRACE_EVENT_STOP with stop signal `sig`: true if it is a group stop, in which case t
 * is parked until its process is continued. */
bool jobctl_group_stop(struct task *t, int sig);
/* Does pending signal `sig` stop t's process (so a parked call is interrupted and
 * restarted)? Also true, with sig 0, for a thread that must join its process's stop. */
bool jobctl_stops(const struct task *t, int sig);
/* The stop signal a sibling's group stop makes t take part in, or 0. */
int jobctl_stop_due(const struct task *t);
/* Is t in a group stop of its process's, parked until a SIGCONT? */
bool jobctl_in_group_stop(const struct task *t);
/* t's tracer inside the group resumed it from its group stop: it runs on while its process
 * stays stopped (as the kernel lets a tracee do), and takes no part in that stop again. */
void jobctl_tracer_resumed(struct task *t);
/* Is every live task of the group stopped by a group stop? */
bool jobctl_all_stopped(void);
/* A member sent `sig` to other processes: a SIGCONT changes what waitpid(WCONTINUED) sees. */
void jobctl_signal_sent(int sig);

#endif
