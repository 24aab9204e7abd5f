/*
 * The page detrun shares with each address space it gives its own vDSO (engine/vdso.h).
 *
 * The vDSO (engine/vdso/vdso.c) answers clock reads from this page without a stop. What a
 * read returns must be a function of the logical timeline, as a trapped read's value is:
 * the supervisor writes here the virtual time of the process's last event (an event of
 * any of its tasks, in the timeline's order), or of the end of a wait of one of them, or
 * of a pick of one of them when time moved without an event of theirs (engine/vdso.h:
 * points of the timeline, the same on every run), and the vDSO adds
 * VDSO_READ_STEP_NS for each read since (counted here, in `reads`). Threads of a process run one at a time
 * under detrun (one memory domain at a time in parallel mode), so the plain counter
 * counts the same reads in the same order on every run. After VDSO_FAST_READS reads
 * without an event the vDSO makes the real syscall: it stops, is an event, and moves the
 * clock by a whole event's step, so a loop that waits on the clock still gets there, and
 * the values never go back (VDSO_FAST_READS reads move less than one event does).
 *
 * The program can write this page (it is its memory): that changes its own clock reads
 * and nothing else, since the supervisor only ever writes it.
 */
#ifndef DETRUN_ENGINE_VDSO_DATA_H
#define DETRUN_ENGINE_VDSO_DATA_H

#include <stdint.h>

#define VDSO_DATA_SIZE 4096
#define VDSO_FAST_READS 128  /* reads between two events before the syscall */
#define VDSO_READ_STEP_NS 1  /* what each of them moves the clock */
#define VDSO_REAL_CLOCK 0x1u /* --clock=real: wall-clock reads are outside input (syscall) */

struct vdso_data {
	int64_t mono_ns;  /* CLOCK_MONOTONIC at the process's last event or pick */
	int64_t epoch_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	int64_t boot_ns;  /* CLOCK_MONOTONIC - the CPU-time clocks */
	uint32_t reads;   /* reads answered since mono_ns was written */
	uint32_t flags;   /* VDSO_REAL_CLOCK */
};

#endif
