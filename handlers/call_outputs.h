/* The output regions of an external call: where its result leaves bytes in the program's
 * memory (the data read, an address filled in, a length updated), derived from the
 * outputs column of the call's row in syscalls.def. Recording reads them after the call,
 * replay writes them back, in this order (sys_external.c). */
#ifndef DETRUN_SUPERVISOR_CALL_OUTPUTS_H
#define DETRUN_SUPERVISOR_CALL_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/shim.h"

struct task;

enum region_kind {
	R_DATA,       /* takes the next bytes of the call's data budget (read data, iov) */
	R_BUDGET,     /* a 4-byte count the call fills in that becomes the data budget */
	R_LEN,        /* a length field (4 or 8 bytes) the call updates ... */
	R_ADDR,       /* ... bounding the address or control data that follows it */
	R_FIXED,      /* `max` bytes, when the call succeeds */
	R_PER_RESULT, /* ret elements of `elem` bytes (epoll events, mmsghdrs) */
};

struct region_spec {
	enum region_kind kind;
	uint64_t addr, max;
	uint32_t elem;
};

/* Enough for any call with at most MAX_IOVECS buffers (and MAX_MMSGS messages); a call
 * with more is marked incomplete: record warns, replay refuses — never a silent gap. */
#define MAX_REGIONS 256
#define MAX_IOVECS 16
#define MAX_MMSGS 8

struct outputs {
	struct region_spec r[MAX_REGIONS];
	int n;
	bool incomplete;
	uint64_t own_vlen; /* a recvmmsg given MAX_MMSGS messages: the program's vlen; 0 */
};

/* The regions of t's call, at its seccomp stop (the call has not run). */
void describe_outputs(struct task *t, struct outputs *o);
/* After the call returned `ret`: the bytes each region holds now, into out[]. */
void read_outputs(struct task *t, const struct outputs *o, int64_t ret, struct shim_region *out);
void free_regions(struct shim_region *out, size_t n);

#endif
