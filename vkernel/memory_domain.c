/* Memory domains: a union-find over the processes that share something
 * (memory_domain.h). */
#include "vkernel/memory_domain.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "vkernel/task.h"

/* A process known to share an object. Processes without one are not listed: they are
 * alone, or share an address space with a member (the same aspace). */
struct member {
	struct process *p;
	int up; /* union-find parent: an index into members */
	int n_objects, cap_objects;
	struct shared_object *objects;
};

static struct member *members;
static int n_members, cap_members;
/* A member lost objects or left: the sets are rebuilt from the objects at the next look
 * (a union-find cannot split). */
static bool dirty;
static uint64_t next_anon = 1;
static void (*merge_hook)(struct process *a, struct process *b);

void memory_domain_set_merge_hook(void (*fn)(struct process *a, struct process *b))
{
	merge_hook = fn;
}

uint64_t memory_domain_new_anon(void)
{
	return next_anon++;
}

void memory_domain_reset(void)
{
	for (int i = 0; i < n_members; i++)
		free(members[i].objects);
	free(members);
	members = NULL;
	n_members = cap_members = 0;
	dirty = false;
	next_anon = 1;
}

/* ---- the union-find --------------------------------------------------------------------------- */

static int find(int i)
{
	while (members[i].up != i) {
		members[i].up = members[members[i].up].up; /* path halving */
		i = members[i].up;
	}
	return i;
}

/* Joins the sets of i and j; false when they were one already. */
static bool unite(int i, int j)
{
	int a = find(i), b = find(j);
	if (a == b)
		return false;
	members[a > b ? a : b].up = a < b ? a : b;
	return true;
}

static bool same_object(const struct shared_object *x, const struct shared_object *y)
{
	return x->kind == y->kind && x->a == y->a && x->b == y->b;
}

/* m's record of object o, or NULL. */
static struct shared_object *object_of(const struct member *m, const struct shared_object *o)
{
	for (int k = 0; k < m->n_objects; k++)
		if (same_object(&m->objects[k], o))
			return &m->objects[k];
	return NULL;
}

/* Do members i and j share something directly: an address space, or an object that one
 * of them may write? */
static bool share(int i, int j)
{
	const struct member *a = &members[i], *b = &members[j];
	if (a->p->aspace == b->p->aspace)
		return true;
	for (int k = 0; k < a->n_objects; k++) {
		const struct shared_object *o = object_of(b, &a->objects[k]);
		if (o && !(o->read_only && a->objects[k].read_only))
			return true;
	}
	return false;
}

/* The sets again from the objects alone, after some were dropped. */
static void rebuild(void)
{
	if (!dirty)
		return;
	for (int i = 0; i < n_members; i++)
		members[i].up = i;
	for (int i = 0; i < n_members; i++)
		for (int j = i + 1; j < n_members; j++)
			if (share(i, j))
				unite(i, j);
	dirty = false;
}

/* ---- members -------------------------------------------------------------------------------- */

static int index_of(const struct process *p)
{
	for (int i = 0; i < n_members; i++)
		if (members[i].p == p)
			return i;
	return -1;
}

static int member_of(struct process *p)
{
	if (index_of(p) >= 0)
		return index_of(p);
	if (n_members == cap_members) {
		cap_members = cap_members ? cap_members * 2 : 16;
		members = realloc(members, (size_t)cap_members * sizeof(*members));
		if (!members)
			abort();
	}
	int i = n_members++;
	members[i] = (struct member){ .p = p, .up = i };
	/* Members of its address space were its domain already: one set, no merge. */
	for (int j = 0; j < i; j++)
		if (members[j].p->aspace == p->aspace)
			unite(i, j);
	return i;
}

/* Adds o to member i's objects; false when it had it (and as writable, if o is). */
static bool add_object(int i, struct shared_object o)
{
	struct member *m = &members[i];
	struct shared_object *had = object_of(m, &o);
	if (had) {
		if (!had->read_only || o.read_only)
			return false;
		had->read_only = false; /* mapped writable now: it shares with more */
		return true;
	}
	if (m->n_objects == m->cap_objects) {
		m->cap_objects = m->cap_objects ? m->cap_objects * 2 : 4;
		m->objects = realloc(m->objects, (size_t)m->cap_objects * sizeof(*m->objects));
		if (!m->objects)
			abort();
	}
	m->objects[m->n_objects++] = o;
	return true;
}

/* Removes member i (swapped with the last). */
static void remove_member(int i)
{
	free(members[i].objects);
	members[i] = members[--n_members];
	dirty = true;
}

/* Joins member i's set with every set it now shares with, reporting each merge. */
static void join_sharers(int i)
{
	for (int j = 0; j < n_members; j++)
		if (j != i && share(i, j) && unite(i, j) && merge_hook)
			merge_hook(members[i].p, members[j].p);
}

/* ---- the questions -------------------------------------------------------------------------- */

/* The member p is, or shares its address space with; -1 for neither. */
static int member_or_sharer(const struct process *p)
{
	int i = index_of(p);
	for (int j = 0; i < 0 && j < n_members; j++)
		if (members[j].p->aspace == p->aspace)
			i = j;
	return i;
}

int memory_domain_of(const struct process *p)
{
	rebuild();
	int i = member_or_sharer(p);
	if (i < 0)
		return p->aspace;
	int root = find(i), least = p->aspace;
	for (int j = 0; j < n_members; j++)
		if (members[j].p->aspace < least && find(j) == root)
			least = members[j].p->aspace;
	return least;
}

bool memory_domain_same(const struct process *a, const struct process *b)
{
	return memory_domain_of(a) == memory_domain_of(b);
}

/* ---- what changes them ---------------------------------------------------------------------- */

void memory_domain_map(struct process *p, struct shared_object o)
{
	rebuild();
	int i = member_of(p);
	if (add_object(i, o))
		join_sharers(i);
}

/* Do members i and j have a trace link already (each thread of a traced process that its
 * tracer follows, and every attach after a detach, would add one more)? */
static bool traced_already(int i, int j)
{
	for (int k = 0; k < members[i].n_objects; k++)
		if (members[i].objects[k].kind == SHARED_TRACE &&
		    object_of(&members[j], &members[i].objects[k]))
			return true;
	return false;
}

void memory_domain_trace(struct process *tracer, struct process *tracee)
{
	if (tracer == tracee)
		return;
	rebuild();
	int i = index_of(tracer), j = index_of(tracee);
	if (i >= 0 && j >= 0 && traced_already(i, j))
		return;
	struct shared_object o = { SHARED_TRACE, memory_domain_new_anon(), 0, false };
	add_object(member_of(tracer), o);
	j = member_of(tracee);
	add_object(j, o);
	join_sharers(j);
}

void memory_domain_forked(struct process *parent, struct process *child, uint64_t clone_flags)
{
	if (clone_flags & CLONE_THREAD)
		return;
	rebuild();
	int from = index_of(parent);
	/* Shared mappings are inherited: the child maps every memory object its parent does
	 * (a CLONE_VM child has them through the address space already). */
	for (int k = 0; from >= 0 && !(clone_flags & CLONE_VM) && k < members[from].n_objects;
	     k++) {
		struct shared_object o = members[from].objects[k];
		if (o.kind == SHARED_ANON || o.kind == SHARED_FILE || o.kind == SHARED_SYSV) {
			add_object(member_of(child), o);
		}
	}
	/* A table or fs information shared without the memory: an object of the two. */
	enum shared_kind links[2] = { SHARED_FILES, SHARED_FS };
	uint64_t flags[2] = { CLONE_FILES, CLONE_FS };
	for (int k = 0; k < 2 && !(clone_flags & CLONE_VM); k++)
		if (clone_flags & flags[k]) {
			struct shared_object o = { links[k], memory_domain_new_anon(), 0, false };
			add_object(member_of(parent), o);
			add_object(member_of(child), o);
		}
	int c = index_of(child);
	if (c >= 0) /* the child joins its parent's set: no two domains merge */
		for (int j = 0; j < n_members; j++)
			if (j != c && share(c, j))
				unite(c, j);
}

void memory_domain_exec(struct process *p)
{
	int i = index_of(p);
	if (i < 0)
		return;
	struct member *m = &members[i];
	int kept = 0;
	/* fs information and a trace survive exec, as the kernel keeps them */
	for (int k = 0; k < m->n_objects; k++)
		if (m->objects[k].kind == SHARED_FS || m->objects[k].kind == SHARED_TRACE)
			m->objects[kept++] = m->objects[k];
	m->n_objects = kept;
	if (kept == 0)
		remove_member(i);
	dirty = true;
}

void memory_domain_forget(struct process *p)
{
	int i = index_of(p);
	if (i >= 0)
		remove_member(i);
}
