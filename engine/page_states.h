/*
 * Who holds each page of shared memory that page ownership has moved (engine/page_share.h):
 * a table by (object, page of the object), open addressing. Pages never moved are not in
 * it (page_share.c answers for them: the object's first mapper writes them).
 */
#ifndef DETRUN_ENGINE_PAGE_STATES_H
#define DETRUN_ENGINE_PAGE_STATES_H

#include <stdint.h>

/* A page some fault has moved: who writes it, or who reads it. */
struct page_state {
	int obj; /* -1: a free slot */
	uint64_t pgoff;
	int writer;       /* an address space's index (page_share.c), or -1 */
	uint64_t readers; /* address spaces, a bit each; none while there is a writer */
};

/* The page's state, NULL when it never moved. */
struct page_state *page_states_find(int obj, uint64_t pgoff);
/* The same, added (no writer, no reader) when it is not there. */
struct page_state *page_states_get(int obj, uint64_t pgoff);
/* Address space s is gone: it holds nothing any more. */
void page_states_forget(int s);

#endif
