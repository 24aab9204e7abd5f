/* The seccomp-bpf filter: every syscall whose table row is not ALLOW stops at the tracer. */
#ifndef DETRUN_SUPERVISOR_FILTER_H
#define DETRUN_SUPERVISOR_FILTER_H

/* Builds and loads the filter into the calling (about to exec) process. Returns 0 or -errno. */
int filter_install(void);

#endif
