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

/* Every option: X(type, name, comment), in the struct's order. The struct is generated
 * from this list, and so is its mapping to the log header's field of the same name
 * (recorder/header_options.c): an option without a header field does not build, and
 * tests/unit_header_options_test.cc checks each one's round trip. */
#define TRACER_OPTIONS(X) \
	X(int, quantum, "events per turn") \
	X(int, spin_budget_ms, "run time without an event before the spin detector looks") \
	X(uint64_t, seed, "for the PRNG behind getrandom") \
	X(int64_t, epoch, "CLOCK_REALTIME at start, in seconds") \
	X(bool, keep_vdso, "leave the kernel's vDSO mapped (clock reads then bypass detrun)") \
	X(int, cpus, "virtual CPU count") \
	X(bool, namespaces, "fresh PID, mount and UTS namespaces (needs root)") \
	X(bool, real_clock, "wall-clock reads give the real time, as outside input") \
	X(int, jobs, "processes that run at once (1: one task at a time)") \
	X(bool, page_owner, "parallel mode: shmem sharers apart, by page ownership") \
	X(int, page_merge, "page moves of one object after which its sharers merge (0: never)") \
	X(bool, own_vdso, "detrun's vDSO answers clock reads without a stop (engine/vdso.h)") \
	X(bool, keep_turn, "a call whose wait is over at once keeps its task's turn")

struct tracer_options {
#define TRACER_OPTION_FIELD(type, name, comment) type name;
	TRACER_OPTIONS(TRACER_OPTION_FIELD)
#undef TRACER_OPTION_FIELD
};

#endif
