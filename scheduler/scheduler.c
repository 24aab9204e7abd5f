#include "scheduler/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "scheduler/vclock.h"

static struct task *tasks, *tasks_tail;
static struct task *current; /* the task whose turn it is */
static int next_vtid = 1;
static int quantum = 1;
static bool keep_turn;   /* a wait over at once does not end the turn (sched_keep_turn) */
static uint64_t unparks; /* parked tasks let go, by their own wait or by someone else */
static int turn_events;
static bool turn_over;
static uint64_t now;
static uint32_t looks; /* since the latest event */
static uint64_t signal_epoch = 1, children_epoch = 1;
static const struct sched_ops *ops;
static bool deadlock_reported;
static struct task *continuing; /* resumes before anyone else (sched_continue) */

/* Parallel mode: each memory domain has its own turn and its own logical clock. */
enum {
	MAX_DOMAINS = 1024
};
static struct domain {
	int id;
	uint64_t clock;       /* its events, raised when an event of another domain wakes it */
	struct task *current; /* whose turn it is in the domain */
	int turn_events;
	bool turn_over;
} domains[MAX_DOMAINS];
static int n_domains;
static struct domain *event_domain; /* the domain of the latest event */
static uint64_t front; /* the clock of the latest event (ticks after it do not move it) */

void sched_init(int events_per_turn)
{
	quantum = events_per_turn > 0 ? events_per_turn : 1;
}

void sched_keep_turn(bool on)
{
	keep_turn = on;
}

void sched_set_ops(const struct sched_ops *o)
{
	ops = o;
}

static bool parallel(void)
{
	return ops && ops->domain_of;
}

static int domain_id(struct task *t)
{
	return ops->domain_of(t);
}

/* The domain's state, made on first use with the clock of the timeline's front: a domain
 * is born at an event (fork, exec), which is where its clock starts. */
static struct domain *domain_get(int id)
{
	for (int i = 0; i < n_domains; i++)
		if (domains[i].id == id)
			return &domains[i];
	if (n_domains == MAX_DOMAINS) { /* drop domains without tasks */
		int kept = 0;
		for (int i = 0; i < n_domains; i++) {
			bool used = false;
			for (struct task *t = tasks; t && !used; t = sched_of(t)->next)
				used = domain_id(t) == domains[i].id;
			if (used)
				domains[kept++] = domains[i];
		}
		n_domains = kept;
		if (n_domains == MAX_DOMAINS) {
			fprintf(stderr, "detrun: more than %d memory domains\n", MAX_DOMAINS);
			abort();
		}
	}
	struct domain *d = &domains[n_domains++];
	*d = (struct domain){ .id = id, .clock = front };
	return d;
}

uint64_t sched_domain_clock(int id)
{
	return domain_get(id)->clock;
}

void sched_domain_raise(int id, uint64_t clock)
{
	struct domain *d = domain_get(id);
	if (d->clock < clock)
		d->clock = clock;
	if (d == event_domain && front < clock)
		front = clock;
}

void sched_domain_tick(int id, uint64_t weight)
{
	domain_get(id)->clock += weight;
}

uint64_t sched_front(void)
{
	return front;
}

void sched_add(struct task *t)
{
	sched_of(t)->vtid = next_vtid++;
	sched_of(t)->state = TASK_NEW;
	sched_of(t)->next = NULL;
	if (tasks_tail)
		sched_of(tasks_tail)->next = t;
	else
		tasks = t;
	tasks_tail = t;
}

static void close_wait_fds(struct wait *w)
{
	for (int i = 0; i < w->nfds; i++)
		close(w->fds[i].fd);
	free(w->fds);
	w->fds = NULL;
	w->nfds = 0;
	if (w->drop_memo)
		w->drop_memo(w->memo);
	w->memo = NULL;
	w->drop_memo = NULL;
}

void sched_remove(struct task *t)
{
	struct task **pp = &tasks, *prev = NULL;
	while (*pp && *pp != t) {
		prev = *pp;
		pp = &sched_of(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = sched_of(t)->next;
	if (tasks_tail == t)
		tasks_tail = prev;
	if (current == t)
		current = prev; /* the round-robin continues after t's position */
	for (int i = 0; i < n_domains; i++)
		if (domains[i].current == t)
			domains[i].current = prev;
	if (continuing == t)
		continuing = NULL;
	if (sched_of(t)->parked)
		close_wait_fds(&sched_of(t)->wait);
}

struct task *sched_find(pid_t tid)
{
	for (struct task *t = tasks; t; t = sched_of(t)->next)
		if (sched_of(t)->tid == tid)
			return t;
	return NULL;
}

struct task *sched_first(void)
{
	return tasks;
}

int sched_live_count(void)
{
	int n = 0;
	for (struct task *t = tasks; t; t = sched_of(t)->next)
		n += sched_of(t)->state != TASK_DEAD;
	return n;
}

uint64_t sched_now(void)
{
	return now;
}

uint32_t sched_look(void)
{
	return looks;
}

static void domain_event(struct task *t)
{
	struct domain *d = domain_get(domain_id(t));
	d->clock++;
	event_domain = d;
	front = d->clock;
	if (t != d->current) {
		d->current = t;
		d->turn_events = 0;
		d->turn_over = false;
	}
	if (++d->turn_events >= quantum)
		d->turn_over = true;
}

void sched_event(struct task *t)
{
	now++;
	looks = 0;
	vclock_step();
	if (parallel())
		domain_event(t);
	if (t != current) {
		current = t;
		turn_events = 0;
		turn_over = false;
	}
	if (++turn_events >= quantum)
		turn_over = true;
	deadlock_reported = false;
}

void sched_park(struct task *t, const struct wait *w)
{
	struct sched_task *s = sched_of(t);
	s->parked = true;
	s->wait = *w;
	snprintf(s->wait.what_text, sizeof(s->wait.what_text), "%s", w->what ? w->what : "");
	s->wait.what = s->wait.what_text;
	s->signals_seen = 0;
	if (keep_turn)
		return; /* its turn ends only if the wait is not over at the next look (scan) */
	if (t == current)
		turn_over = true;
	if (parallel()) {
		struct domain *d = domain_get(domain_id(t));
		if (d->current == t)
			d->turn_over = true;
	}
}

void sched_unpark(struct task *t)
{
	struct sched_task *s = sched_of(t);
	if (!s->parked)
		return;
	close_wait_fds(&s->wait);
	s->parked = false;
	s->parked_at_exit = false;
	unparks++;
}

void sched_end_turn(void)
{
	turn_over = true;
	if (event_domain)
		event_domain->turn_over = true;
}

void sched_signals_changed(void)
{
	signal_epoch++;
	/* A signal takes effect at once natively (a SIGCONT continues its stopped target
	 * before the sender's next instruction, a SIGSTOP stops it): every task's wait is
	 * looked at before the turn goes on. With a turn of one event that was so anyway. */
	if (keep_turn)
		sched_end_turn();
}

void sched_children_changed(void)
{
	children_epoch++;
}

uint64_t sched_signals_epoch(void)
{
	return signal_epoch;
}

uint64_t sched_children_epoch(void)
{
	return children_epoch;
}

/* Stopped at an event and free to go: not held in a stop of a tracer inside the group. */
static bool stopped_free(const struct sched_task *s)
{
	return s->state == TASK_STOPPED && !s->traced_stop;
}

/* Can parked t resume now? Prepares its resume when it can. */
static bool try_wake(struct task *t)
{
	struct sched_task *s = sched_of(t);
	struct wait *w = &s->wait;
	if (w->ready && w->ready(t) == WAIT_READY)
		goto woken;
	if (w->interruptible && s->signals_seen != signal_epoch) {
		s->signals_seen = signal_epoch;
		if (ops->interrupt_wait(t))
			goto woken;
	}
	if (w->deadline_ns >= 0 && w->deadline_ns <= vclock_now()) {
		w->on_timeout(t);
		goto woken;
	}
	return false;
woken:
	sched_unpark(t);
	if (ops->woken)
		ops->woken(t);
	return true;
}

/* Where a look begins: with the task after `from`, or with `from` itself while its turn
 * goes on and it parked (its wait may be over already: sched_keep_turn). Each task is
 * tried once a look, so an outside wait is asked once and a replay finds it at the same
 * look. A spinner's turn (spinner_turn) is not kept: descheduled again, it goes last,
 * so that the spinners take turns. */
static struct task *scan_start(struct task *from, bool from_turn_over)
{
	if (from && keep_turn && !from_turn_over && sched_of(from)->parked &&
	    !sched_of(from)->spin_descheduled)
		return from;
	return from && sched_of(from)->next ? sched_of(from)->next : tasks;
}

/* Round-robin from the task after `current`, ending with current itself; from current
 * while its turn goes on. */
static struct task *scan_once(struct task **spinner)
{
	struct task *start = scan_start(current, turn_over);
	struct task *t = start;
	*spinner = NULL;
	looks++;
	if (!t)
		return NULL;
	do {
		struct sched_task *s = sched_of(t);
		if (stopped_free(s)) {
			if (s->spin_descheduled) {
				if (!*spinner)
					*spinner = t;
			} else if (!s->parked || try_wake(t)) {
				return t;
			}
		}
		t = s->next ? s->next : tasks;
	} while (t != start);
	return NULL;
}

/* One look, or more: a predicate may let another task go without running it (a tracee
 * SIGCONT reached while its tracer listens goes into a stop that tracer holds), and what
 * a task asked before it in the look waits for may then be over (the tracer's wait4).
 * With sched_keep_turn the current task is asked first, so this happens in the ordinary
 * course: a look that found nothing after such a release is followed by another. (Logs
 * from before the rule went on to an outside wait, or a deadlock, then looked again.)
 * It ends: each repeat needs a task parked before the look, and none parks during one. */
static struct task *scan(struct task **spinner)
{
	for (;;) {
		uint64_t before = unparks;
		struct task *t = scan_once(spinner);
		if (t || !keep_turn || unparks == before)
			return t;
	}
}

/* Parallel mode: round-robin among the tasks of one domain, from its current task on. */
static struct task *scan_domain_once(struct domain *d)
{
	struct task *from = scan_start(d->current, d->turn_over);
	struct task *t = from;
	if (!t)
		return NULL;
	do {
		struct sched_task *s = sched_of(t);
		if (stopped_free(s) && !s->spin_descheduled && domain_id(t) == d->id &&
		    (!s->parked || try_wake(t)))
			return t;
		t = s->next ? s->next : tasks;
	} while (t != from);
	return NULL;
}

/* Looked at again after a release, as scan does. */
static struct task *scan_domain(struct domain *d)
{
	for (;;) {
		uint64_t before = unparks;
		struct task *t = scan_domain_once(d);
		if (t || !keep_turn || unparks == before)
			return t;
	}
}

struct task *sched_pick_in(int id)
{
	struct domain *d = domain_get(id);
	struct task *next = continuing;
	if (next && domain_id(next) == id) {
		continuing = NULL;
		if (stopped_free(sched_of(next)) && !sched_of(next)->parked)
			return next;
	}
	if (d->current && !d->turn_over && domain_id(d->current) == id) {
		const struct sched_task *s = sched_of(d->current);
		if (stopped_free(s) && !s->parked && !s->spin_descheduled)
			return d->current;
	}
	return scan_domain(d);
}

struct outside {
	int64_t deadline; /* earliest virtual deadline, -1 for none */
	struct pollfd fds[256];
	int nfds;
};

static void collect_outside(struct outside *o)
{
	o->deadline = ops->next_timer();
	o->nfds = 0;
	for (struct task *t = tasks; t; t = sched_of(t)->next) {
		struct sched_task *s = sched_of(t);
		if (!s->parked || !stopped_free(s))
			continue;
		struct wait *w = &s->wait;
		if (w->deadline_ns >= 0 && (o->deadline < 0 || w->deadline_ns < o->deadline))
			o->deadline = w->deadline_ns;
		for (int i = 0; w->external && i < w->nfds && o->nfds < 256; i++)
			o->fds[o->nfds++] = w->fds[i];
	}
}

/* A task changed state while the supervisor waited (a SIGCHLD): the supervisor handles it
 * outside the scheduler, which may free tasks, so the pick ends there. */
static bool stops_pending(void)
{
	return ops->stops_pending && ops->stops_pending();
}

/* The current task keeps the CPU: its turn is not over and it can run. */
static bool current_may_go_on(void)
{
	if (!current || turn_over)
		return false;
	const struct sched_task *s = sched_of(current);
	return stopped_free(s) && !s->parked && !s->spin_descheduled;
}

void sched_continue(struct task *t)
{
	continuing = t;
}

/* A descheduled spinner gets the CPU when nobody else can run: its turn starts. */
static struct task *spinner_turn(struct task *spinner)
{
	sched_of(spinner)->spin_descheduled = false;
	current = spinner;
	turn_events = 0;
	turn_over = false;
	return spinner;
}

/* Waits for outside input, at most until the earliest virtual deadline. The real time
 * spent waiting is what virtual time follows while outside input may arrive: a timed-out
 * wait reaches the deadline. */
static void wait_outside_paced(struct outside *o)
{
	int timeout = -1;
	if (o->deadline >= 0) {
		int64_t ms = (o->deadline - vclock_now() + 999999) / 1000000;
		timeout = ms > 0x7fffffff ? 0x7fffffff : (int)ms;
	}
	int ready = ops->wait_outside(o->fds, o->nfds, timeout);
	if (ready == 0 && o->deadline >= 0)
		vclock_advance_to(o->deadline);
}

static bool any_stopped(void)
{
	for (struct task *t = tasks; t; t = sched_of(t)->next)
		if (sched_of(t)->state == TASK_STOPPED)
			return true;
	return false;
}

/* Nothing can run and nothing outside can wake a task: reported once, then only a signal
 * from outside can change anything. */
static void deadlock_wait(void)
{
	if (!deadlock_reported) {
		ops->report_deadlock();
		deadlock_reported = true;
	}
	ops->wait_outside(NULL, 0, -1);
	sched_signals_changed();
}

struct task *sched_pick(void)
{
	struct task *next = continuing;
	continuing = NULL;
	if (next && stopped_free(sched_of(next)) && !sched_of(next)->parked)
		return next;
	for (;;) {
		ops->between_events();
		ops->fire_timers();
		if (current_may_go_on())
			return current;
		struct task *spinner;
		struct task *t = scan(&spinner);
		if (t)
			return t;
		if (!tasks)
			return NULL;

		struct outside o;
		collect_outside(&o);
		if (spinner) {
			/* Spinners wait for other tasks; if those wait on time, time must move. */
			if (o.deadline >= 0) {
				vclock_advance_to(o.deadline);
				continue;
			}
			if (o.nfds) {
				/* Tasks may change meanwhile (one killed from outside): no task
				 * pointer is kept across the wait. */
				ops->wait_outside(o.fds, o.nfds, 0);
				if (stops_pending())
					return NULL;
				if ((t = scan(&spinner)))
					return t;
				if (!spinner)
					continue;
			}
			return spinner_turn(spinner);
		}
		if (o.nfds) {
			wait_outside_paced(&o);
			if (stops_pending())
				return NULL;
			continue;
		}
		if (o.deadline >= 0) {
			vclock_advance_to(o.deadline);
			continue;
		}
		if (!any_stopped())
			return NULL;
		deadlock_wait();
		if (stops_pending())
			return NULL;
	}
}
