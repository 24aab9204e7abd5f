/* Who holds each page moved (page_states.h). */
#include "engine/page_states.h"

#include <stdbool.h>
#include <stdlib.h>

static struct page_state *pages; /* a power of two long */
static size_t n_pages, cap_pages;

static size_t slot_of(int obj, uint64_t pgoff)
{
	uint64_t h = (pgoff * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)obj * 0xc2b2ae3d27d4eb4fULL);
	return (size_t)(h >> 17) & (cap_pages - 1);
}

struct page_state *page_states_find(int obj, uint64_t pgoff)
{
	if (!cap_pages)
		return NULL;
	for (size_t i = slot_of(obj, pgoff);; i = (i + 1) & (cap_pages - 1)) {
		if (pages[i].obj < 0)
			return NULL;
		if (pages[i].obj == obj && pages[i].pgoff == pgoff)
			return &pages[i];
	}
}

/* Doubles the table when it is half full, so a search always ends at a free slot. */
static void grow(void)
{
	struct page_state *old = pages;
	size_t old_cap = cap_pages;
	cap_pages = cap_pages ? 2 * cap_pages : 1024;
	pages = malloc(cap_pages * sizeof(*pages));
	if (!pages)
		abort();
	for (size_t i = 0; i < cap_pages; i++)
		pages[i].obj = -1;
	n_pages = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].obj >= 0)
			*page_states_get(old[i].obj, old[i].pgoff) = old[i];
	free(old);
}

struct page_state *page_states_get(int obj, uint64_t pgoff)
{
	struct page_state *p = page_states_find(obj, pgoff);
	if (p)
		return p;
	if (2 * (n_pages + 1) > cap_pages)
		grow();
	size_t i = slot_of(obj, pgoff);
	while (pages[i].obj >= 0)
		i = (i + 1) & (cap_pages - 1);
	n_pages++;
	pages[i] = (struct page_state){ obj, pgoff, -1, 0 };
	return &pages[i];
}

void page_states_forget(int s)
{
	for (size_t i = 0; i < cap_pages; i++) {
		if (pages[i].obj < 0)
			continue;
		if (pages[i].writer == s)
			pages[i].writer = -1;
		pages[i].readers &= ~(1ULL << s);
	}
}
