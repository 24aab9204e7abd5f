/*
 * Where the outside inputs of a run go and where they come from.
 *
 * The record shim writes every input record through a sink; the replay shim reads them
 * through a source. Both only see records with absolute logical times, in timeline order;
 * what lies behind is the sink's or source's business: a log file (recorder/log.c), or a
 * replicated stream (replicate/: the leader's sink publishes to NATS JetStream, a
 * follower's source is fed live from it and may block until the next record arrives).
 */
#ifndef DETRUN_RECORDER_INPUT_H
#define DETRUN_RECORDER_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recorder/log.h"

struct input_sink {
	const char *name; /* for messages: the file, the stream */
	/* Appends one record at logical time `time`. 0 or -errno. */
	int (*append)(struct input_sink *s, uint64_t time, LogRecord *rec);
	/* The group is about to wait for the outside: push what is buffered. 0 or -errno. */
	int (*flush)(struct input_sink *s);
	/* Before output leaves the node: every record appended so far is durable. May be
	 * NULL (a file: output and log are lost together). 0 or -errno. */
	int (*sync)(struct input_sink *s);
	/* Flushes and releases the sink. 0 or -errno. */
	int (*close)(struct input_sink *s);
	/* What the call that failed with `err` met, in words ("deposed: another node
	 * leads"), where the errno says too little; NULL (or no such function): the errno's
	 * text is said. */
	const char *(*why)(struct input_sink *s, int err);
};

struct input_source {
	/* The next record and its absolute logical time; NULL at the end. A live source may
	 * wait here until the next record exists. */
	const LogRecord *(*head)(struct input_source *s, uint64_t *time);
	void (*consume)(struct input_source *s); /* the head was used: move past it */
	/* The first record from the head on that is about task `vtid`, and its time; NULL
	 * when none is left. A task inside a call whose exit is logged (a write's Output)
	 * finds that record here before other tasks' events reach it. Optional: a live
	 * source, which cannot look ahead, leaves it NULL. */
	const LogRecord *(*next_of_task)(struct input_source *s, int vtid, uint64_t *time);
	/* Where the head is, for a divergence report ("log offset 1234"). */
	void (*where)(struct input_source *s, char *buf, size_t len);
	bool (*complete)(struct input_source *s); /* the inputs end with an End record */
};

/* A log file as a sink: creates PATH with HEADER (NULL with errno set on failure). */
struct input_sink *log_sink_create(const char *path, const Detrun__Log__Header *header);
/* A loaded log as a source (the log must outlive it). */
struct input_source *log_source(const struct log *log);

#endif
