/* Shared memory between memory domains by page ownership (page_share.h). */
#include "engine/page_share.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ptrace.h>

#include "scheduler/scheduler.h"
#include "engine/fault_waker.h"
#include "engine/page_owner.h"
#include "engine/page_states.h"
#include "engine/remote.h"
#include "syscalls/syscall_table.h"
#include "engine/tracer.h"
#include "engine/tracer_internal.h"
#include "vkernel/report.h"
#include "vkernel/task.h"

enum {
	PAGE = 4096,
	MAX_SPACES = 64, /* address spaces with ranges at once: a bit each in a page's readers */
	NONE = -1,
	BARRIER_NONE = -1,
	BARRIER_ALL = -2,
};

/* A range of an address space that maps pages [pgoff, pgoff + len/PAGE) of object `obj`. */
struct range {
	uint64_t addr, len, pgoff;
	int obj;
};

/* An address space with ranges under ownership. */
struct space {
	bool used;
	int aspace;
	struct page_owner po;
	struct range *ranges;
	int n_ranges, cap_ranges;
	/* Pages it gave up while no task of it was at a ptrace stop (each blocked in a fault
	 * the kernel took inside a call): dropped at its next stop, before any of its code
	 * runs (a call is resumed to its exit stop). */
	uint64_t *pending;
	int n_pending, cap_pending;
};

/* A shared object, and the address space that holds (writes) its pages no fault has
 * moved yet: the first to map it. */
struct object {
	struct shared_object id;
	int first;          /* a space, or NONE once it is gone */
	uint64_t window_at; /* sched_now() when its current window of moves began */
	uint64_t moves;     /* pages of it moved in that window */
	bool merged;        /* its mappers are one domain now: every one holds every page */
};

/* Pages that move back and forth all the time (a counter every process bumps: nginx's
 * request statistics) cost more than running their processes one at a time: an object
 * whose pages moved N times within 16 N events has its mappers' domains merged
 * (memory_domain.h), as a SysV segment's are, from then on; N is the page_merge option
 * (common/options.h: 1024, DETRUN_PAGE_MERGE; 0 never). Counted in events, so when it
 * happens is a point on the timeline. */
enum {
	MERGE_WINDOW_PER_MOVE = 16,
};
static bool merges(int obj);
static void merge_object(struct task *t, int obj, const char *why);

static struct space spaces[MAX_SPACES];
static int n_spaces; /* used */
static struct object *objects;
static int n_objects, cap_objects;
static uint64_t ordered, transfers; /* faults that were events; those that moved a page */

/* ---- address spaces, ranges, objects -------------------------------------------------------- */

bool page_share_on(void)
{
	return tracer_parallel() && tracer_opts->page_owner;
}

static int space_of_aspace(int aspace)
{
	for (int i = 0; i < MAX_SPACES; i++)
		if (spaces[i].used && spaces[i].aspace == aspace)
			return i;
	return NONE;
}

/* The space of t's address space, opened with a userfaultfd made in t (stopped). */
static int open_space(struct task *t)
{
	int s = space_of_aspace(t->proc->aspace);
	if (s != NONE)
		return s;
	for (s = 0; s < MAX_SPACES && spaces[s].used; s++)
		;
	if (s == MAX_SPACES)
		return -ENOSPC;
	struct page_owner po;
	int err = page_owner_open(t, &po);
	if (err)
		return err;
	err = fault_waker_watch(po.uffd);
	if (err) {
		page_owner_close(&po);
		return err;
	}
	spaces[s] = (struct space){ .used = true, .aspace = t->proc->aspace, .po = po };
	n_spaces++;
	return s;
}

static int object_of(const struct shared_object *o, int first)
{
	for (int i = 0; i < n_objects; i++)
		if (objects[i].id.kind == o->kind && objects[i].id.a == o->a &&
		    objects[i].id.b == o->b)
			return i;
	if (n_objects == cap_objects) {
		cap_objects = cap_objects ? 2 * cap_objects : 16;
		objects = realloc(objects, (size_t)cap_objects * sizeof(*objects));
		if (!objects)
			abort();
	}
	objects[n_objects] = (struct object){ .id = *o, .first = first };
	return n_objects++;
}

static void add_range(int s, struct range r)
{
	struct space *sp = &spaces[s];
	if (sp->n_ranges == sp->cap_ranges) {
		sp->cap_ranges = sp->cap_ranges ? 2 * sp->cap_ranges : 8;
		sp->ranges = realloc(sp->ranges, (size_t)sp->cap_ranges * sizeof(*sp->ranges));
		if (!sp->ranges)
			abort();
	}
	sp->ranges[sp->n_ranges++] = r;
}

/* Forgets [addr, addr+len) of space s: ranges there are cut, what lies outside stays. */
static void drop_ranges(int s, uint64_t addr, uint64_t len)
{
	struct space *sp = &spaces[s];
	uint64_t end = addr + len;
	for (int i = 0; i < sp->n_ranges; i++) {
		struct range r = sp->ranges[i];
		if (r.addr >= end || addr >= r.addr + r.len)
			continue;
		sp->ranges[i--] = sp->ranges[--sp->n_ranges];
		if (r.addr < addr)
			add_range(s, (struct range){ r.addr, addr - r.addr, r.pgoff, r.obj });
		if (r.addr + r.len > end)
			add_range(s, (struct range){ end, r.addr + r.len - end,
						     r.pgoff + (end - r.addr) / PAGE, r.obj });
	}
}

static const struct range *range_at(int s, uint64_t addr)
{
	for (int i = 0; i < spaces[s].n_ranges; i++) {
		const struct range *r = &spaces[s].ranges[i];
		if (addr >= r->addr && addr < r->addr + r->len)
			return r;
	}
	return NULL;
}

/* ---- pages ---------------------------------------------------------------------------------- */

/* Who holds the page now: its state, or the object's first mapper writing it. */
static struct page_state page_get(int obj, uint64_t pgoff)
{
	struct page_state *p = page_states_find(obj, pgoff);
	return p ? *p : (struct page_state){ obj, pgoff, objects[obj].first, 0 };
}

static void page_set(struct page_state st)
{
	*page_states_get(st.obj, st.pgoff) = st;
}

static bool holds(const struct page_state *st, int s, bool write)
{
	return objects[st->obj].merged || st->writer == s || (!write && (st->readers >> s & 1));
}

/* The spaces that must give the page up (or stop writing it) for s to get it. */
static uint64_t losers(const struct page_state *st, int s, bool write)
{
	uint64_t lose = 0;
	if (objects[st->obj].merged)
		return 0;
	if (st->writer != NONE && st->writer != s)
		lose |= 1ULL << st->writer;
	if (write)
		lose |= st->readers & ~(1ULL << s);
	return lose;
}

/* ---- what changes the ranges ---------------------------------------------------------------- */

int page_share_map(struct task *t, const struct shared_object *o, uint64_t addr, uint64_t len,
		   uint64_t pgoff, bool writable)
{
	len = (len + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	int s = space_of_aspace(t->proc->aspace);
	if (s != NONE)
		drop_ranges(s, addr, len); /* a mapping over them (MAP_FIXED) replaced them */
	int known = -1;
	for (int i = 0; i < n_objects && known < 0; i++)
		if (objects[i].id.kind == o->kind && objects[i].id.a == o->a &&
		    objects[i].id.b == o->b)
			known = i;
	if (known >= 0 && objects[known].merged)
		return -EBUSY; /* its mappers are one domain: the caller joins it */
	s = writable ? open_space(t) : NONE;
	int err = !writable ? -EACCES : s < 0 ? s : page_owner_register(&spaces[s].po, addr, len);
	if (err) {
		/* The caller joins the object's mappers' domain: those under ownership join it
		 * too (every domain has stopped for this call: parallel_barrier_for). */
		if (known >= 0)
			merge_object(t, known,
				     writable ? "a process maps it that page ownership cannot take"
					      : "a process maps it read-only");
		return err;
	}
	add_range(s, (struct range){ addr, len, pgoff, object_of(o, s) });
	return 0;
}

void page_share_forked(struct task *parent, struct task *child)
{
	if (!page_share_on() || parent->proc->aspace == child->proc->aspace)
		return;
	int from = space_of_aspace(parent->proc->aspace);
	if (from == NONE || spaces[from].n_ranges == 0)
		return;
	int s = open_space(child);
	if (s < 0)
		task_die(child, "cannot open page ownership for a new process: %s", strerror(-s));
	struct page_range taken[PAGE_OWNER_MAX_RANGES];
	int n = 0;
	for (int i = 0; i < spaces[from].n_ranges; i++) {
		struct range r = spaces[from].ranges[i];
		int err = page_owner_register(&spaces[s].po, r.addr, r.len);
		if (err) /* the parent's range is gone (munmap), or never was (exec'd over) */
			continue;
		add_range(s, r);
		if (n < PAGE_OWNER_MAX_RANGES)
			taken[n++] = (struct page_range){ r.addr, r.len };
	}
	/* The child starts holding nothing: a page its copy of the mapping may show is not
	 * its own yet. */
	int err = n ? page_owner_take_ranges(&spaces[s].po, child, taken, n) : 0;
	if (err == -EINVAL) /* process_madvise before 6.13 refuses MADV_DONTNEED */
		for (int i = err = 0; !err && i < n; i++)
			err = page_owner_take(&spaces[s].po, child, taken[i].addr, taken[i].len);
	if (err)
		task_die(child, "cannot take shared pages from a new process: %s", strerror(-err));
}

void page_share_remapped(struct task *t, uint64_t old, uint64_t old_len, uint64_t at, uint64_t len)
{
	int s = space_of_aspace(t->proc->aspace);
	const struct range *r = s == NONE ? NULL : range_at(s, old);
	if (!r)
		return;
	struct range moved = { at, (len + PAGE - 1) & ~(uint64_t)(PAGE - 1),
			       r->pgoff + (old - r->addr) / PAGE, r->obj };
	if (!(old_len == 0 && at != old)) /* old_len 0: a second mapping, the old one stays */
		drop_ranges(s, old, (old_len + PAGE - 1) & ~(uint64_t)(PAGE - 1));
	drop_ranges(s, moved.addr, moved.len);
	int err = page_owner_register(&spaces[s].po, moved.addr, moved.len);
	if (!err)
		err = page_owner_take(&spaces[s].po, t, moved.addr, moved.len);
	if (err) {
		task_warn(t, "shared memory moved by mremap is no longer ordered: %s",
			  strerror(-err));
		return;
	}
	add_range(s, moved);
}

/* Space s is gone: what it held is nobody's, and its pages come to whoever asks. */
static void close_space(int s)
{
	page_states_forget(s);
	for (int i = 0; i < n_objects; i++)
		if (objects[i].first == s) {
			/* Pages nobody moved yet were its own: now they are nobody's. */
			objects[i].first = NONE;
		}
	page_owner_close(&spaces[s].po); /* leaves the waker's epoll set with it */
	free(spaces[s].ranges);
	free(spaces[s].pending);
	spaces[s] = (struct space){ 0 };
	n_spaces--;
}

void page_share_gone(struct process *p)
{
	for (int s = 0; s < MAX_SPACES; s++) {
		if (!spaces[s].used)
			continue;
		if (!tracer_task_in_aspace(spaces[s].aspace, p))
			close_space(s);
	}
}

bool page_share_covers(const struct process *p, uint64_t addr, uint64_t len)
{
	if (!p || !n_spaces) /* a task of no process (the unit tests'), or no space yet */
		return false;
	int s = space_of_aspace(p->aspace);
	if (s == NONE)
		return false;
	for (int i = 0; i < spaces[s].n_ranges; i++) {
		const struct range *r = &spaces[s].ranges[i];
		if (r->addr < addr + len && addr < r->addr + r->len)
			return true;
	}
	return false;
}

/* ---- faults --------------------------------------------------------------------------------- */

static struct task *faulting_task(int s, pid_t ns_tid)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if (t->state != TASK_DEAD && t->proc->aspace == spaces[s].aspace &&
		    t->ns_tid == ns_tid)
			return t;
	return NULL;
}

static void take_fault(int s, const struct page_fault *f)
{
	bool write = f->access == PAGE_WRITE;
	struct task *t = faulting_task(s, f->tid);
	const struct range *r = range_at(s, f->addr);
	if (t && (t->held || t->state != TASK_RUNNING))
		return; /* a fault it left (a signal, an interrupt): it comes again if it must */
	if (r && t) {
		struct page_state st = page_get(r->obj, r->pgoff + (f->addr - r->addr) / PAGE);
		if (!holds(&st, s, write)) {
			t->held = t->fault_held = true;
			t->held_status = 0;
			t->fault_addr = f->addr;
			t->fault_write = write;
			t->fault_stopped = false;
			return;
		}
	}
	/* Its own page (or a task not known: a fault cannot wait for a turn nobody has). */
	int err = page_owner_resolve(&spaces[s].po, f);
	if (err && err != -ESRCH)
		warn("page ownership: cannot give page %#llx: %s", (unsigned long long)f->addr,
		     strerror(-err));
}

void page_share_drain(void)
{
	if (!fault_waker_rang())
		return;
	for (int s = 0; s < MAX_SPACES; s++) {
		struct page_fault f;
		while (spaces[s].used && page_owner_next_fault(&spaces[s].po, &f) == 1)
			take_fault(s, &f);
	}
	fault_waker_drained();
}

/* The state of the page at addr of t's address space, and its space; false when no range
 * is there. */
static bool page_at(struct task *t, uint64_t addr, int *s, struct page_state *st)
{
	*s = space_of_aspace(t->proc->aspace);
	const struct range *r = *s == NONE ? NULL : range_at(*s, addr);
	if (!r)
		return false;
	*st = page_get(r->obj, r->pgoff + (addr - r->addr) / PAGE);
	return true;
}

/* Adds to `barrier` the domains of the spaces in `lose` other than t's own. */
static int add_barrier(int barrier, struct task *t, uint64_t lose)
{
	int mine = tracer_domain_of(t);
	for (int l = 0; l < MAX_SPACES && barrier != BARRIER_ALL; l++) {
		struct task *u = lose >> l & 1 ? tracer_task_in_aspace(spaces[l].aspace, NULL)
					       : NULL;
		int d = u ? tracer_domain_of(u) : mine;
		if (d == mine || d == barrier)
			continue;
		barrier = barrier == BARRIER_NONE ? d : BARRIER_ALL;
	}
	return barrier;
}

int page_share_barrier(struct task *t)
{
	int s;
	struct page_state st;
	if (!page_at(t, t->fault_addr, &s, &st))
		return BARRIER_NONE;
	uint64_t lose = losers(&st, s, t->fault_write);
	if (lose && merges(st.obj))
		return BARRIER_ALL;
	return add_barrier(BARRIER_NONE, t, lose);
}

/* A task of space s stopped at a ptrace stop, for a call injected into it. Its domain has
 * stopped (the barrier); a task blocked in a fault is interrupted (a user-mode fault is left
 * for the stop, and taken again when it goes on). NULL when none can be had. */
static struct task *stopped_task(int s)
{
	for (struct task *t = sched_first(); t; t = t->next)
		if (t->state != TASK_DEAD && t->proc->aspace == spaces[s].aspace &&
		    (t->state == TASK_STOPPED || (t->held && !t->fault_held) || t->fault_stopped))
			return t;
	for (struct task *t = sched_first(); t; t = t->next) {
		if (t->state == TASK_DEAD || t->proc->aspace != spaces[s].aspace ||
		    !t->fault_held || t->in_call)
			continue;
		int status;
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0 ||
		    waitpid(t->tid, &status, __WALL) != t->tid || !WIFSTOPPED(status))
			continue;
		if ((unsigned)status >> 16 == PTRACE_EVENT_STOP) {
			t->fault_stopped = true;
		} else { /* another stop came first: it is held for its turn instead */
			t->fault_held = false;
			t->held_status = status;
		}
		return t;
	}
	return NULL;
}

/* Puts t back at the seccomp stop of the call an injected call replaced (remote.h: at a
 * seccomp stop the injected call takes the pending one's place): from the registers the
 * kernel had there (`at`), the call's instruction runs again and stops at the filter as it
 * did. What the engine changed in t->regs since the stop is stored at t's next resume. */
static int rearm_call(struct task *t, const struct user_regs_struct *at)
{
	struct user_regs_struct r = *at;
	r.rax = r.orig_rax;
	r.rip -= 2;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0 || ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
		return -errno;
	for (;;) {
		int status;
		if (waitpid_retry(t->tid, &status, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(status))
			return -ESRCH;
		if ((unsigned)status >> 16 == PTRACE_EVENT_SECCOMP)
			break;
		int sig = (unsigned)status >> 16 ? 0 : WSTOPSIG(status);
		if (sig && sig != SIGTRAP)
			t->inject_signal = sig; /* kept for its next real resume */
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
			return -errno;
	}
	t->regs_dirty = true;
	return 0;
}

/* Drops [addr, addr+PAGE) from the page tables of t's process, t stopped: without losing
 * the call t may be stopped at. */
static int take_page(struct page_owner *po, struct task *t, uint64_t addr)
{
	struct __ptrace_syscall_info info;
	struct user_regs_struct kernel;
	bool at_call = ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(info), &info) > 0 &&
		       info.op == PTRACE_SYSCALL_INFO_SECCOMP;
	if (at_call && ptrace(PTRACE_GETREGS, t->tid, 0, &kernel) < 0)
		return -errno;
	bool at_entry = t->at_entry;
	int err = remote_load_regs(t);
	if (!err)
		err = page_owner_take(po, t, addr, PAGE);
	t->at_entry = at_entry;
	int rearmed = at_call ? rearm_call(t, &kernel) : 0;
	return err ? err : rearmed;
}

/* Space l gives up the page at pgoff of obj: every range of it there, write access only
 * when `keep_reading`. */
static void give_up(int l, int obj, uint64_t pgoff, bool keep_reading)
{
	struct space *sp = &spaces[l];
	for (int i = 0; i < sp->n_ranges; i++) {
		struct range r = sp->ranges[i];
		if (r.obj != obj || pgoff < r.pgoff || pgoff >= r.pgoff + r.len / PAGE)
			continue;
		uint64_t addr = r.addr + (pgoff - r.pgoff) * PAGE;
		/* Write-protect first: it also says whether the range is still registered (a
		 * munmap runs freely; an unregistered range may hold other memory now). */
		int err = page_owner_protect(&sp->po, addr, PAGE);
		if (err) {
			drop_ranges(l, r.addr, r.len);
			i = -1; /* the list changed */
			continue;
		}
		if (keep_reading)
			continue;
		struct task *u = stopped_task(l);
		if (!u) {
			if (sp->n_pending == sp->cap_pending) {
				sp->cap_pending = sp->cap_pending ? 2 * sp->cap_pending : 8;
				sp->pending = realloc(sp->pending, (size_t)sp->cap_pending *
									   sizeof(*sp->pending));
				if (!sp->pending)
					abort();
			}
			sp->pending[sp->n_pending++] = addr;
			continue;
		}
		err = take_page(&sp->po, u, addr);
		if (err && err != -ESRCH)
			warn("page ownership: cannot take page %#llx from address space %d: %s",
			     (unsigned long long)addr, sp->aspace, strerror(-err));
	}
}

void page_share_stopped(struct task *t)
{
	int s = space_of_aspace(t->proc->aspace);
	if (s == NONE || !spaces[s].n_pending)
		return;
	for (int i = 0; i < spaces[s].n_pending; i++) {
		int err = take_page(&spaces[s].po, t, spaces[s].pending[i]);
		if (err && err != -ESRCH)
			task_warn(t, "cannot take page %#llx: %s",
				  (unsigned long long)spaces[s].pending[i], strerror(-err));
	}
	spaces[s].n_pending = 0;
}

static uint64_t merge_moves(void)
{
	return tracer_opts->page_merge > 0 ? (uint64_t)tracer_opts->page_merge : 0;
}

/* The moves of obj's pages in its current window, counting one more now. */
static uint64_t moves_with_one_more(const struct object *o)
{
	uint64_t window = MERGE_WINDOW_PER_MOVE * merge_moves();
	return (sched_now() - o->window_at > window ? 0 : o->moves) + 1;
}

/* Would moving a page of obj now merge its mappers (whose domains must then all have
 * stopped)? */
static bool merges(int obj)
{
	return merge_moves() && !objects[obj].merged &&
	       moves_with_one_more(&objects[obj]) >= merge_moves();
}

/* The processes that map obj join one memory domain; its pages are everyone's from now
 * on (every domain has stopped: the barrier of the move that merges). */
static void merge_object(struct task *t, int obj, const char *why)
{
	for (int l = 0; l < MAX_SPACES; l++) {
		bool maps = false;
		for (int i = 0; spaces[l].used && i < spaces[l].n_ranges; i++)
			maps |= spaces[l].ranges[i].obj == obj;
		for (struct task *u = sched_first(); maps && u; u = u->next)
			if (u->state != TASK_DEAD && u->proc->aspace == spaces[l].aspace)
				memory_domain_map(u->proc, objects[obj].id);
	}
	objects[obj].merged = true;
	trace_event(t, "  object %d merged (%s): its mappers are one memory domain now", obj, why);
}

/* Counts a move of obj's pages, merging its mappers at the threshold. */
static void count_move(struct task *t, int obj)
{
	struct object *o = &objects[obj];
	bool merge = merges(obj);
	o->moves = moves_with_one_more(o);
	if (o->moves == 1)
		o->window_at = sched_now();
	if (merge)
		merge_object(t, obj, "its pages moved all the time");
}

/* Space s gets the page of state st: the spaces that must give it up do (their domains
 * have stopped); false when none had to. */
static bool move_page(int s, struct page_state st, bool write)
{
	uint64_t lose = losers(&st, s, write);
	for (int l = 0; l < MAX_SPACES; l++)
		if (lose >> l & 1)
			give_up(l, st.obj, st.pgoff, !write && l == st.writer);
	if (write) {
		st.writer = s;
		st.readers = 0;
	} else {
		if (st.writer != NONE && st.writer != s)
			st.readers |= 1ULL << st.writer;
		st.writer = NONE;
		st.readers |= 1ULL << s;
	}
	page_set(st);
	transfers += lose != 0;
	return lose != 0;
}

/* The pages a call of t's, stopped at its seccomp stop, points into (the first page of
 * each pointer argument) that t's address space does not hold for writing: its handler
 * may read or write them, and detrun cannot read a page the process does not hold. */
static int call_pages(struct task *t, uint64_t pages_at[6])
{
	struct __ptrace_syscall_info info;
	int s = space_of_aspace(t->proc->aspace);
	if (s == NONE || !spaces[s].n_ranges ||
	    ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(info), &info) <= 0 ||
	    info.op != PTRACE_SYSCALL_INFO_SECCOMP)
		return 0;
	const struct syscall_entry *e = syscall_lookup((long)info.seccomp.nr);
	int n = 0;
	for (int a = 0; e && a < e->nargs && a < 6; a++) {
		if (!syscall_arg_is_pointer(e, a))
			continue;
		uint64_t at = info.seccomp.args[a] & ~(uint64_t)(PAGE - 1);
		int sp;
		struct page_state st;
		if (!page_at(t, at, &sp, &st) || holds(&st, sp, true))
			continue;
		bool seen = false;
		for (int i = 0; i < n; i++)
			seen |= pages_at[i] == at;
		if (!seen)
			pages_at[n++] = at;
	}
	return n;
}

int page_share_call_barrier(struct task *t)
{
	uint64_t at[6];
	int n = call_pages(t, at), barrier = BARRIER_NONE;
	for (int i = 0; i < n; i++) {
		int s;
		struct page_state st;
		if (!page_at(t, at[i], &s, &st))
			continue;
		uint64_t lose = losers(&st, s, true);
		barrier = lose && merges(st.obj) ? BARRIER_ALL : add_barrier(barrier, t, lose);
	}
	return barrier;
}

void page_share_call_pages(struct task *t)
{
	uint64_t at[6];
	int n = call_pages(t, at);
	for (int i = 0; i < n; i++) {
		int s;
		struct page_state st;
		if (!page_at(t, at[i], &s, &st))
			continue;
		bool moved = move_page(s, st, true);
		int err = page_owner_give(&spaces[s].po, at[i], PAGE, true);
		if (moved)
			count_move(t, st.obj);
		if (err && err != -ESRCH)
			task_warn(t, "cannot give page %#llx: %s", (unsigned long long)at[i],
				  strerror(-err));
		trace_event(t, "  page %#llx given for the call (object %d page %llu)%s",
			    (unsigned long long)at[i], st.obj, (unsigned long long)st.pgoff,
			    moved ? ": moved" : "");
	}
}

void page_share_transfer(struct task *t)
{
	t->fault_held = false;
	int s;
	struct page_state st;
	if (page_at(t, t->fault_addr, &s, &st)) {
		bool moved = move_page(s, st, t->fault_write);
		ordered++;
		tracer_page_event(t);
		trace_event(t, "  page %#llx %s (object %d page %llu)%s",
			    (unsigned long long)t->fault_addr, t->fault_write ? "written" : "read",
			    st.obj, (unsigned long long)st.pgoff, moved ? ": moved" : "");
		if (moved)
			count_move(t, st.obj);
	}
	struct page_fault f = { t->fault_addr, t->ns_tid, t->fault_write ? PAGE_WRITE : PAGE_READ,
				PAGE_MINOR };
	int err = s == NONE ? -ESRCH : page_owner_resolve(&spaces[s].po, &f);
	if (err && err != -ESRCH)
		task_warn(t, "cannot give page %#llx: %s", (unsigned long long)t->fault_addr,
			  strerror(-err));
	if (t->fault_stopped) {
		t->fault_stopped = false;
		tracer_resume(t);
	}
}

void page_share_report(void)
{
	if (report_trace && ordered)
		fprintf(report_trace_out,
			"[t=%llu] page ownership: %llu faults ordered, %llu moved a page\n",
			(unsigned long long)sched_now(), (unsigned long long)ordered,
			(unsigned long long)transfers);
}
