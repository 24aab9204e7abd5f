/*
 * What the host kernel says of a task in /proc/TID/status: both the engine (signal stops,
 * exits) and the virtual kernel (is a timer's signal still pending?) read it.
 */
#ifndef DETRUN_VKERNEL_HOST_STATUS_H
#define DETRUN_VKERNEL_HOST_STATUS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* /proc/TID/status of a task (or any pid), read whole into buf (NUL-terminated): 0, or
 * -errno when the task is gone. */
int proc_status_read(pid_t tid, char *buf, size_t size);
/* The number after `field` (e.g. "\nSigPnd:") in that text, read in `base` (0 lets
 * strtoull decide); `missing` when the field is absent. */
uint64_t proc_status_field(const char *status, const char *field, int base, uint64_t missing);
/* From that text: the signals pending for the thread or its process, and its blocked
 * mask (bit sig-1 each). 0, or -errno when the task is gone. */
int proc_signal_state(pid_t tid, uint64_t *pending, uint64_t *blocked);

#endif
