/*
 * The options of one detrun run: what the command line chose for the group. The supervisor
 * obeys them, and the recorder writes them into a log's header so a replay runs the same
 * group. A header of its own (no code, no other detrun includes), so every folder may read
 * the options without including the supervisor.
 */
#ifndef DETRUN_COMMON_OPTIONS_H
#define DETRUN_COMMON_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#define DETRUN_VERSION "0.2.0"

struct tracer_options {
	int quantum;        /* events per turn */
	int spin_budget_ms; /* run time without an event before the spin detector looks */
	uint64_t seed;      /* for the PRNG behind getrandom */
	int64_t epoch;      /* CLOCK_REALTIME at start, in seconds */
	bool keep_vdso;     /* leave the vDSO mapped (clock reads then bypass detrun) */
	int cpus;           /* virtual CPU count */
	bool namespaces;    /* fresh PID, mount and UTS namespaces (needs root) */
	bool real_clock;    /* wall-clock reads give the real time, as outside input */
};

#endif
