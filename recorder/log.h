/*
 * The record log (format: proto/log.proto). A log is the Header, then the outside inputs of
 * one run in the order the run met them, each stamped with its logical time and task.
 *
 * Writing is buffered into blocks (LOG_BLOCK_MAX bytes, each with its CRC-32) and a
 * block goes to disk whole: when it is full, whenever the group waits for outside input
 * (so an idle server's log is complete on disk), and at the end. Reading validates the
 * whole file before anything runs: a truncated, corrupted or empty log gives one line
 * naming the byte offset, never a crash — replay either has every record or refuses.
 */
#ifndef DETRUN_RECORDER_LOG_H
#define DETRUN_RECORDER_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/log.pb-c.h"

#define LOG_MAGIC "DETRUNLG"
#define LOG_MAGIC_LEN 8
/* 2: Header.ignored_signals; 3: looks of outside input; 4: Header.exec_path, Output records;
 * 5: FileImage records (before-images of the files the group changes);
 * 6: Header.controlling_terminal; 7: Header.keep_turn (a detrun before it would replay such
 * a log with every park ending the turn, and diverge) */
#define LOG_FORMAT_VERSION 7
#define LOG_FORMAT_OLDEST 1        /* a version-1 log does not say which signals were ignored */
#define LOG_BLOCK_MAX (1u << 20)   /* records are gathered into blocks up to this size */
#define LOG_RECORD_MAX (64u << 20) /* one larger record (a big read) gets a block alone */

typedef Detrun__Log__Record LogRecord;

/* ---- writing ---- */
struct log_writer;
/* Creates FILE (truncating it) and writes the magic and the header record. NULL with
 * errno set on failure. */
struct log_writer *log_create(const char *path, const Detrun__Log__Header *header);
/* Appends one record (its dt is computed from `time`). Returns 0 or -errno. */
int log_append(struct log_writer *w, uint64_t time, LogRecord *rec);
int log_flush(struct log_writer *w); /* writes the pending block, if any */
int log_close(struct log_writer *w); /* flushes and closes */

/* ---- reading ---- */
struct log {
	Detrun__Log__Header *header; /* points into records[0] */
	LogRecord **records;         /* records[1..n-1]: everything after the header */
	uint64_t *times;             /* absolute logical time of each record */
	size_t *offsets;             /* file offset of the block holding each record */
	size_t n;
	size_t file_size;
	bool complete; /* ends with an End record */
};
/* Parses and checks a whole log held in memory. 0, or -1 with a one-line message in err
 * naming the offset of the first problem. */
int log_parse(const uint8_t *buf, size_t len, struct log *log, char *err, size_t errlen);
/* Reads FILE and parses it; same contract, the message also names the file. */
int log_load(const char *path, struct log *log, char *err, size_t errlen);
void log_free(struct log *log);

/* "entries" for a FileRead of a directory (path ending in '/'), else "bytes". */
const char *log_file_unit(const char *path);

/* Bytes written to each descriptor by the Output records so far: the byte offset at which
 * an Output's bytes start (log.proto). log_output_offset returns it and counts `len` more. */
struct log_output_fd {
	int fd;
	uint64_t bytes;
};
struct log_output_offsets {
	struct log_output_fd *fds;
	size_t n;
};
uint64_t log_output_offset(struct log_output_offsets *o, int fd, uint64_t len);

/* The record's kind as a word ("result", "ready", ...). */
const char *log_kind_name(const LogRecord *rec);

#endif
