/* The seccomp-bpf filter: every syscall whose table row is not ALLOW stops at the tracer. */
#ifndef DETRUN_SUPERVISOR_FILTER_H
#define DETRUN_SUPERVISOR_FILTER_H

#include <stdbool.h>

/* Builds and loads the filter into the calling (about to exec) process. EXTERNAL rows stop
 * only when a shim intercepts. With processes in parallel (`parallel`: --jobs above 1),
 * ALLOW rows stop too, only LOCAL rows run freely, and calls that may map shared memory
 * stop (STOP_WHEN_SHARED); one task at a time, the filter is the serial one, unchanged.
 * Returns 0 or -errno. */
int filter_install(bool shim_intercepts, bool parallel);

/* Writes the BPF program filter_install would load to `fd` (tests compare programs).
 * Returns 0 or -errno. */
int filter_export(bool shim_intercepts, bool parallel, int fd);

/* At a seccomp stop: a 32-bit (int 0x80) or x32 call, which the filter lets stop instead
 * of killing the process? It is refused with ENOSYS and a warning naming it (once per
 * process), and true is returned: its number is not the x86_64 call of that number and
 * must never reach the dispatcher, where it could run natively. */
struct task;
bool filter_foreign_call(struct task *t);

#endif
