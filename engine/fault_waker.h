/*
 * The fault waker (parallel mode's page ownership, engine/page_share.h): a thread that
 * tells the stop loop a userfaultfd has a fault to read. The stop loop sleeps in waitpid,
 * which no descriptor ends, so the thread polls every userfaultfd watched and sends the
 * loop the spin alarm's SIGALRM (tracer_wait_any then returns 0), then waits until the loop
 * says it has read what came. The thread takes none of detrun's signals and touches no
 * tracee: ptrace stays with the loop's thread.
 */
#ifndef DETRUN_ENGINE_FAULT_WAKER_H
#define DETRUN_ENGINE_FAULT_WAKER_H

#include <stdbool.h>

/* Watches userfaultfd `fd` (closing it stops the watch); the first call starts the thread
 * and must come from the stop loop's thread. 0 or -errno. */
int fault_waker_watch(int fd);

/* Did the waker ring since the last call? Then the loop reads every userfaultfd and calls
 * fault_waker_drained, after which the waker watches again. */
bool fault_waker_rang(void);
void fault_waker_drained(void);

#endif
