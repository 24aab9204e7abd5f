/*
 * What detrun must know about each call that moves data across the group boundary: where
 * the bytes it sends sit in the caller's memory (they are digested, so replay can tell
 * when the program sends something else), which argument holds its MSG_* flags, and
 * whether a failed send raises SIGPIPE. One row per call (sys_external.c), used by every
 * place that needs one of these facts; a unit test checks the rows against the syscall
 * table, so a send call cannot be left out of one list and kept in another again.
 */
#ifndef DETRUN_SUPERVISOR_EXTERNAL_FACTS_H
#define DETRUN_SUPERVISOR_EXTERNAL_FACTS_H

#include <stdbool.h>
#include <stddef.h>

enum send_layout {
	SEND_NONE,
	SEND_BUFFER, /* a buffer (argument 1) of argument-2 bytes */
	SEND_IOVEC,  /* an iovec array (argument 1) of argument-2 entries */
	SEND_MSGHDR, /* a msghdr (argument 1) and its iovecs */
	SEND_MMSG,   /* an mmsghdr array (argument 1): the first `result` messages */
	SEND_FILE,   /* bytes from a file descriptor (sendfile): not in the caller's memory */
};

struct external_facts {
	long nr;
	enum send_layout sends;
	int flags_arg;      /* the argument with MSG_* flags, -1 for none */
	bool sigpipe;       /* EPIPE raises SIGPIPE (unless MSG_NOSIGNAL in flags_arg) */
};

/* The row of `nr`, NULL for a call that neither sends nor takes MSG_* flags. */
const struct external_facts *external_call_facts(long nr);
/* Every row, for the consistency test. */
extern const struct external_facts external_facts_table[];
extern const size_t external_facts_len;

#endif
