/*
 * The spin probe's memory watch: which pages a task writes while it is sampled, and
 * whether their contents change (spin.c decides; spin_watch.c says how it is tracked).
 */
#ifndef DETRUN_SUPERVISOR_SPIN_WATCH_H
#define DETRUN_SUPERVISOR_SPIN_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/spin_cycle.h"

struct task;

/* What the verdict window did to memory, from least to most. */
enum mem_verdict {
	MEM_UNTOUCHED, /* nothing written (or, in a digested mapping, nothing changed) */
	MEM_SAME,      /* pages written, each with the contents it had before */
	MEM_UNKNOWN,   /* a page written whose contents before are not known */
	MEM_CHANGED,   /* a page or mapping changed, or too much memory to tell */
};

struct region {
	uint64_t start, end;
	uint64_t digest; /* untracked regions: a digest of the contents */
	bool tracked;    /* registered: the kernel tracks its written pages */
};

struct page_hash {
	uint64_t addr, hash;
};

struct probe {
	struct task *task;
	struct region *regions;
	int n;
	bool untrackable; /* digested memory too large to compare */
	bool overflow;    /* the first window wrote too many pages to compare */
	struct space *space;
	struct page_hash *pages; /* sorted by address */
	int npages;
	enum mem_verdict verdict;
};

/* Begins the watch of t's writable memory; nothing is read yet. */
void watch_memory(struct probe *p, struct task *t);
/* After the first window: hash what it wrote; the verdict window starts. */
void watch_settle(struct probe *p);
/* After the verdict window. */
enum mem_verdict watch_verdict(struct probe *p);
/* The watch as spin_cycle.c uses it, from where the verdict window ended. */
struct cycle_memory watch_cycle(struct probe *p);
void watch_end(struct probe *p);

#endif
