/* `detrun log`: a record log as text, as JSON lines, or as totals. */
#ifndef DETRUN_RECORDER_LOG_PRINT_H
#define DETRUN_RECORDER_LOG_PRINT_H

enum log_print_mode {
	LOG_PRINT_TEXT,
	LOG_PRINT_JSON,
	LOG_PRINT_STATS
};

/* Prints LOG to stdout. Returns the exit code: 0, or 125 after a one-line error. */
int log_print(const char *path, enum log_print_mode mode);

#endif
