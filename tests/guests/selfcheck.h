/* Guests check their own results where a result is knowable (a total that must be N, a
 * read that must return what was written, an errno that must be a given value). A wrong
 * one prints a failure signature on stdout and stderr and exits 1, so a guest that errs the
 * same way on every run cannot pass a comparison of runs:
 *
 *     NAME: SELF-CHECK FAILED: <what was wrong>
 *
 * Usable from any thread or forked child: it writes with write(2), not through stdio's
 * locks, and ends the process with _exit after flushing what stdout already holds. */
#ifndef DETRUN_TESTS_GUESTS_SELFCHECK_H
#define DETRUN_TESTS_GUESTS_SELFCHECK_H

#include <errno.h> /* program_invocation_short_name (_GNU_SOURCE) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((format(printf, 1, 2), noreturn, unused)) static void
selfcheck_failed(const char *fmt, ...)
{
	char msg[512];
	snprintf(msg, sizeof(msg) - 1, "%s: SELF-CHECK FAILED: ", program_invocation_short_name);
	size_t n = strlen(msg);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - 1 - n, fmt, ap);
	va_end(ap);
	n = strlen(msg);
	msg[n++] = '\n';
	fflush(stdout);
	if (write(1, msg, n) < 0 || write(2, msg, n) < 0)
		_exit(1);
	_exit(1);
}

/* CHECK(condition, "printf format", ...): the failure says which condition and why. */
#define CHECK(cond, ...) \
	do { \
		if (!(cond)) \
			selfcheck_failed(__VA_ARGS__); \
	} while (0)

#endif
