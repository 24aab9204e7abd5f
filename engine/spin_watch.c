#include "engine/spin_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>

#include "scheduler/scheduler.h"
#include "engine/spin.h"
#include "vkernel/task.h"
#include "engine/remote.h"
#include "engine/tracer_internal.h"
/* ---- memory watch ------------------------------------------------------------------------ */

/*
 * Which pages did the task write? The kernel says, without reading any memory: each
 * writable mapping is registered with a userfaultfd in write-protect *async* mode for the
 * length of the probe, its pages are write-protected, and PAGEMAP_SCAN on
 * /proc/PID/pagemap lists the pages written since (the kernel resolves each write fault
 * itself, so no writer ever blocks — the reason plain uffd write-protection was dropped
 * earlier). Soft-dirty bits would do the same but CONFIG_MEM_SOFT_DIRTY is often off
 * (it is on this project's VMs). A written page is not yet a changed one — a spin on
 * `atomic_exchange(&lock, 1)` writes the same value forever — so the pages written in a
 * first short window are hashed, and the verdict window that follows counts as unchanged
 * only if every page it wrote was among them and still hashes the same.
 *
 * Write tracking is per address space (any thread's writes, and the kernel's through
 * copy_to_user), covers anonymous, private file-backed and shared mappings alike, and
 * sees through THP (a huge page is split when partly protected) and KSM (merged pages
 * are copied on the first write as always). It does not see writes another process makes
 * to shared memory through its own mapping: in the serial group no other member runs
 * during a probe. fork() copies no registration (no UFFD_FEATURE_EVENT_FORK): the child's
 * pages are plain. Mappings the kernel refuses to register (the program's own userfaultfd
 * holds them, say) fall back to a digest of their contents, as everything did before.
 * Registration is undone when the task reaches its next event (spin_end), so it is never
 * visible to the program at an event (/proc/PID/smaps flags, a registration of its own);
 * between probes of one long run only the pages written since are protected again.
 */

#define UFFD_FEATURE_WP_ASYNC_ (1ULL << 15)
#define PAGE_IS_WRITTEN_ (1ULL << 1)
struct page_region_ {
	uint64_t start, end, categories;
};
struct pm_scan_arg_ {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN_ _IOWR('f', 16, struct pm_scan_arg_)
#define PM_SCAN_WP_MATCHING_ (1ULL << 0)

enum {
	MAX_HASHED_PAGES = 4096, /* pages a first window may write and still be compared */
	MAX_SPACES = 64,
	MAX_CARRIED = 64,             /* pages carried from one probe to the next */
	MAX_CYCLE_PAGES = 256,        /* pages a loop may write and still be stepped through */
	MAX_DIGEST_BYTES = 256 << 20, /* memory digested per probe (where pages are not tracked) */
};
/* A writable mapping this large is a sanitizer's shadow (AddressSanitizer reserves 14 TiB),
 * not data: protecting it would make the kernel build page tables for all of it (GiBs of
 * them, detrun stuck in reclaim), and a digest cannot read it. It is left out of the
 * watch; a program that writes its shadow writes its own memory too. */
#define SHADOW_BYTES (64ULL << 30)

/* One userfaultfd per address space, made inside the task and held by detrun. */
static struct space {
	int aspace;
	int uffd, pagemap;
} spaces[MAX_SPACES];
static int n_spaces;
static int watch_mode = -1; /* 1: pages (userfaultfd), 0: digest everything */

/* The mappings registered and protected during the running task's current run. */
static struct {
	struct space *space;
	struct range_ {
		uint64_t start, end;
	} * r;
	int n, cap;
} active;

/* Pages an earlier probe of this run saw written without knowing their contents before
 * (a loop that calls a function writes its return address only now and then): hashed at
 * the next settle, so that writing them again with the same contents is no change. */
static uint64_t carried[MAX_CARRIED];
static int n_carried;

void spin_end(void)
{
	for (int i = 0; i < active.n; i++) {
		struct uffdio_range range = { active.r[i].start,
					      active.r[i].end - active.r[i].start };
		ioctl(active.space->uffd, UFFDIO_UNREGISTER, &range);
	}
	active.n = 0;
	active.space = NULL;
	n_carried = 0;
}

static bool is_active(uint64_t start, uint64_t end)
{
	for (int i = 0; i < active.n; i++)
		if (active.r[i].start == start && active.r[i].end == end)
			return true;
	return false;
}

static void add_active(struct space *s, uint64_t start, uint64_t end)
{
	if (active.n == active.cap) {
		active.cap = active.cap ? active.cap * 2 : 64;
		active.r = realloc(active.r, (size_t)active.cap * sizeof(*active.r));
		if (!active.r)
			abort();
	}
	active.space = s;
	active.r[active.n++] = (struct range_){ start, end };
}

static void forget_dead_spaces(void)
{
	for (int i = 0; i < n_spaces;)
		if (!tracer_task_in_aspace(spaces[i].aspace, NULL)) {
			if (spaces[i].uffd >= 0)
				close(spaces[i].uffd);
			if (spaces[i].pagemap >= 0)
				close(spaces[i].pagemap);
			spaces[i] = spaces[--n_spaces];
		} else {
			i++;
		}
}

/* A userfaultfd for t's address space: created by an injected call in t (the descriptor
 * lives in t's table only for the moment it takes to duplicate and close it). */
static int make_uffd(struct task *t)
{
	/* User-mode faults only: the program runs without CAP_SYS_PTRACE (launch.c), which
	 * a userfaultfd for kernel faults needs; write-protect async faults are resolved by
	 * the kernel whoever writes. */
	long fd = remote_syscall(t, SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY,
				 0, 0, 0, 0, 0);
	if (fd < 0)
		return -1;
	int mine = remote_dup_fd(t, (int)fd);
	remote_syscall(t, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0);
	if (mine < 0)
		return -1;
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC_ };
	if (ioctl(mine, UFFDIO_API, &api) < 0) {
		close(mine);
		return -1;
	}
	return mine;
}

static struct space *space_of(struct task *t)
{
	if (watch_mode < 0) {
		const char *m = getenv("DETRUN_SPIN_WATCH");
		watch_mode = !(m && !strcmp(m, "digest"));
	}
	if (!watch_mode)
		return NULL;
	for (int i = 0; i < n_spaces; i++)
		if (spaces[i].aspace == t->proc->aspace)
			return spaces[i].uffd >= 0 ? &spaces[i] : NULL;
	forget_dead_spaces();
	if (n_spaces == MAX_SPACES)
		return NULL;
	struct space *s = &spaces[n_spaces++];
	*s = (struct space){ t->proc->aspace, make_uffd(t), -1 };
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/pagemap", t->tid);
	if (s->uffd >= 0)
		s->pagemap = open(path, O_RDONLY | O_CLOEXEC);
	if (s->pagemap < 0 && s->uffd >= 0) {
		close(s->uffd);
		s->uffd = -1;
	}
	return s->uffd >= 0 ? s : NULL;
}

/* Reads [a, a+n) of t (n a multiple of pages, within 64 KiB) into buf, with zeros for the
 * pages that are neither present nor swapped, which are not read: reading one would fault
 * it in, and first-touch ticks (touch_ticks.h) count that fault, here at a moment timing
 * chose. Natively such a page reads as zeros. */
static int read_mapped(struct task *t, int pagemap, uint64_t a, unsigned char *buf, size_t n)
{
	uint64_t entries[16];
	size_t pages = (n + 4095) / 4096;
	if (pagemap < 0 || pages > 16 ||
	    pread(pagemap, entries, pages * 8, (off_t)(a / 4096 * 8)) != (ssize_t)(pages * 8))
		return remote_read(t, REMOTE(a), buf, n);
	for (size_t i = 0; i < pages; i++) {
		size_t len = i + 1 < pages ? 4096 : n - i * 4096;
		if (!(entries[i] & (3ULL << 62)))
			memset(buf + i * 4096, 0, len);
		else if (remote_read(t, REMOTE(a + i * 4096), buf + i * 4096, len))
			return -1;
	}
	return 0;
}

static uint64_t digest(struct task *t, uint64_t start, uint64_t end)
{
	uint64_t h = 1469598103934665603ULL;
	static unsigned char buf[1 << 16];
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/pagemap", t->tid);
	int pagemap = open(path, O_RDONLY | O_CLOEXEC);
	for (uint64_t a = start; a < end; a += sizeof(buf)) {
		size_t n = end - a < sizeof(buf) ? (size_t)(end - a) : sizeof(buf);
		if (read_mapped(t, pagemap, a, buf, n)) {
			h = 0;
			break;
		}
		for (size_t i = 0; i < n; i += 8) {
			uint64_t w;
			memcpy(&w, buf + i, 8);
			h = (h ^ w) * 1099511628211ULL;
		}
	}
	if (pagemap >= 0)
		close(pagemap);
	return h;
}

static bool track(struct space *s, struct region *r)
{
	struct uffdio_register reg = { .range = { r->start, r->end - r->start },
				       .mode = UFFDIO_REGISTER_MODE_WP };
	if (ioctl(s->uffd, UFFDIO_REGISTER, &reg) < 0)
		return false;
	struct uffdio_writeprotect wp = { .range = reg.range, .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	if (ioctl(s->uffd, UFFDIO_WRITEPROTECT, &wp) < 0) {
		ioctl(s->uffd, UFFDIO_UNREGISTER, &reg.range);
		return false;
	}
	return true;
}

/* Calls `fn` for every run of pages of r written since it was last protected; with
 * `protect`, protects them again. Stops early when fn returns false (then false). */
static bool written_pages(struct probe *p, const struct region *r, bool protect,
			  bool (*fn)(struct probe *, uint64_t, uint64_t, void *), void *arg)
{
	struct page_region_ vec[256];
	uint64_t from = r->start;
	while (from < r->end) {
		struct pm_scan_arg_ a = {
			.size = sizeof(a),
			.flags = protect ? PM_SCAN_WP_MATCHING_ : 0,
			.start = from,
			.end = r->end,
			.vec = (uint64_t)(uintptr_t)vec,
			.vec_len = 256,
			.category_mask = PAGE_IS_WRITTEN_,
			.return_mask = PAGE_IS_WRITTEN_,
		};
		long n = ioctl(p->space->pagemap, PAGEMAP_SCAN_, &a);
		if (n < 0)
			return fn(p, r->start, r->end, arg); /* cannot tell: all of it */
		for (long i = 0; i < n; i++)
			if (!fn(p, vec[i].start, vec[i].end, arg))
				return false;
		if (a.walk_end <= from)
			break;
		from = a.walk_end;
	}
	return true;
}

static bool hash_pages(struct probe *p, uint64_t start, uint64_t end, void *t)
{
	for (uint64_t a = start; a < end; a += 4096) {
		if (p->npages == MAX_HASHED_PAGES) {
			p->overflow = true;
			return false;
		}
		p->pages[p->npages++] = (struct page_hash){ a, digest(t, a, a + 4096) };
	}
	return true;
}

static struct page_hash *find_page(struct probe *p, uint64_t a)
{
	int lo = 0, hi = p->npages;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (p->pages[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->npages && p->pages[lo].addr == a ? &p->pages[lo] : NULL;
}

/* True (go on) while every page written is one hashed before and still hashes the same. */
static bool same_pages(struct probe *p, uint64_t start, uint64_t end, void *t)
{
	for (uint64_t a = start; a < end; a += 4096) {
		struct page_hash *h = find_page(p, a);
		if (!h || digest(t, a, a + 4096) != h->hash)
			return false;
	}
	return true;
}

static int by_address(const void *a, const void *b)
{
	uint64_t x = ((const struct page_hash *)a)->addr, y = ((const struct page_hash *)b)->addr;
	return x < y ? -1 : x > y;
}

static void sort_pages(struct probe *p)
{
	qsort(p->pages, (size_t)p->npages, sizeof(*p->pages), by_address);
	int kept = 0;
	for (int i = 0; i < p->npages; i++)
		if (!kept || p->pages[kept - 1].addr != p->pages[i].addr)
			p->pages[kept++] = p->pages[i];
	p->npages = kept;
}

static void carry(uint64_t a)
{
	for (int i = 0; i < n_carried; i++)
		if (carried[i] == a)
			return;
	if (n_carried < MAX_CARRIED)
		carried[n_carried++] = a;
}

static bool ignore_pages(struct probe *p, uint64_t start, uint64_t end, void *t)
{
	return true;
}

/* Begins the watch: writable mappings are registered and protected (those registered at
 * an earlier probe of this run: their pages written since are protected again), or, failing
 * that, marked for a digest. Nothing is read yet. */
void watch_memory(struct probe *p, struct task *t)
{
	*p = (struct probe){ .task = t };
	p->space = space_of(t);
	if (active.space && active.space != p->space)
		spin_end();
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", t->tid);
	FILE *f = fopen(path, "re");
	if (!f) {
		p->untrackable = true;
		return;
	}
	int cap = 0;
	uint64_t digested = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char perms[8], name[256] = "";
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %255s", &start, &end, perms, name) < 3)
			continue;
		if (perms[1] != 'w' || !strcmp(name, "[vvar]") || !strcmp(name, "[vdso]") ||
		    end - start >= SHADOW_BYTES)
			continue;
		if (p->n == cap) {
			cap = cap ? cap * 2 : 64;
			p->regions = realloc(p->regions, (size_t)cap * sizeof(*p->regions));
			if (!p->regions)
				abort();
		}
		struct region *r = &p->regions[p->n++];
		*r = (struct region){ start, end, 0, false };
		if (p->space && is_active(start, end)) {
			r->tracked = true;
			written_pages(p, r, true, ignore_pages, t);
		} else if (p->space && track(p->space, r)) {
			r->tracked = true;
			add_active(p->space, start, end);
		}
		if (!r->tracked && (digested += end - start) > MAX_DIGEST_BYTES)
			p->untrackable = true;
	}
	fclose(f);
}

/* Between the first window and the verdict window: hash the pages the first one wrote
 * (protecting them again) and those carried over, and digest the untracked mappings. */
void watch_settle(struct probe *p)
{
	if (p->untrackable)
		return;
	for (int i = 0; i < p->n; i++) {
		struct region *r = &p->regions[i];
		if (!r->tracked) {
			r->digest = digest(p->task, r->start, r->end);
			continue;
		}
		if (!p->pages && !(p->pages = malloc(MAX_HASHED_PAGES * sizeof(*p->pages))))
			abort();
		if (!p->overflow)
			written_pages(p, r, true, hash_pages, p->task);
	}
	if (!p->pages || p->overflow)
		return;
	for (int i = 0; i < n_carried && p->npages < MAX_HASHED_PAGES; i++)
		p->pages[p->npages++] = (struct page_hash){ carried[i], digest(p->task, carried[i],
									       carried[i] + 4096) };
	sort_pages(p);
}

/* What the verdict window did to memory: a page hashed before that hashes otherwise now, or
 * a digested mapping that changed, is a change; a written page nobody hashed before is
 * unknown (it is carried over, to be hashed at the next probe's settle). */
static bool classify_pages(struct probe *p, uint64_t start, uint64_t end, void *t)
{
	for (uint64_t a = start; a < end; a += 4096) {
		struct page_hash *h = find_page(p, a);
		if (!h) {
			carry(a);
			if (p->verdict < MEM_UNKNOWN)
				p->verdict = MEM_UNKNOWN;
		} else if (digest(t, a, a + 4096) != h->hash) {
			p->verdict = MEM_CHANGED;
			return false;
		} else if (p->verdict < MEM_SAME) {
			p->verdict = MEM_SAME;
		}
	}
	return true;
}

enum mem_verdict watch_verdict(struct probe *p)
{
	p->verdict = p->untrackable || p->overflow ? MEM_CHANGED : MEM_UNTOUCHED;
	for (int i = 0; i < p->n && p->verdict != MEM_CHANGED; i++) {
		struct region *r = &p->regions[i];
		if (r->tracked)
			written_pages(p, r, false, classify_pages, p->task);
		else if (digest(p->task, r->start, r->end) != r->digest)
			p->verdict = MEM_CHANGED;
	}
	return p->verdict;
}

/* The registrations stay until spin_end. */
void watch_end(struct probe *p)
{
	free(p->regions);
	free(p->pages);
}

/* ---- the watch of a cycle (spin_cycle.h) --------------------------------------------- */

static bool add_pages(struct probe *p, uint64_t start, uint64_t end, void *t)
{
	for (uint64_t a = start; a < end; a += 4096) {
		if (p->npages == MAX_HASHED_PAGES) {
			p->overflow = true;
			return false;
		}
		p->pages[p->npages++] = (struct page_hash){ a, 0 };
	}
	return true;
}

/* Every page the probe saw written, hashed now; the watch starts over from here. */
static bool cycle_mark(void *ctx)
{
	struct probe *p = ctx;
	if (p->untrackable || p->overflow || !p->pages)
		return false;
	for (int i = 0; i < p->n; i++) {
		struct region *r = &p->regions[i];
		if (r->tracked)
			written_pages(p, r, true, add_pages, p->task);
		else
			r->digest = digest(p->task, r->start, r->end);
	}
	sort_pages(p);
	if (p->npages > MAX_CYCLE_PAGES)
		return false; /* a spin writes a few pages; each step would read all of them */
	for (int i = 0; i < p->npages; i++)
		p->pages[i].hash = digest(p->task, p->pages[i].addr, p->pages[i].addr + 4096);
	return !p->overflow;
}

static bool cycle_unchanged(void *ctx)
{
	struct probe *p = ctx;
	for (int i = 0; i < p->n; i++) {
		struct region *r = &p->regions[i];
		if (r->tracked ? !written_pages(p, r, false, same_pages, p->task)
			       : digest(p->task, r->start, r->end) != r->digest)
			return false;
	}
	return true;
}

static uint64_t cycle_weight(void *ctx, uint64_t sp)
{
	struct probe *p = ctx;
	const struct region *stack = NULL;
	for (int i = 0; i < p->n && !stack; i++)
		if (p->regions[i].start <= sp && sp < p->regions[i].end)
			stack = &p->regions[i];
	uint64_t weight = 0, words[512];
	for (int i = 0; i < p->npages; i++) {
		uint64_t a = p->pages[i].addr;
		if ((stack && stack->start <= a && a < stack->end) ||
		    remote_read(p->task, REMOTE(a), words, sizeof(words)))
			continue;
		for (int w = 0; w < 512; w++)
			weight += words[w] != 0;
	}
	return weight;
}

struct cycle_memory watch_cycle(struct probe *p)
{
	return (struct cycle_memory){ p, cycle_mark, cycle_unchanged, cycle_weight };
}
