/* The seccomp-bpf filter: every syscall whose table row is not ALLOW stops at the tracer. */
#ifndef DETRUN_SUPERVISOR_FILTER_H
#define DETRUN_SUPERVISOR_FILTER_H

#include <stdbool.h>

/* Builds and loads the filter into the calling (about to exec) process. EXTERNAL rows stop
 * only when a shim intercepts. Returns 0 or -errno. */
int filter_install(bool shim_intercepts);

#endif
