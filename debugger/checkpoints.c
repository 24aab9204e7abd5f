/* Checkpoints: going back from a parked run instead of from the start.
 *
 * Going back is running again (travel.c): a new detrun replay of the same log reaches the
 * wanted position, and the cost grows with the distance from the start. A checkpoint is
 * such a run made ahead of time and stopped (parked) at an event: a `copy`. It holds the
 * whole replay, the supervisor and its group, frozen at that logical time, in the state
 * any run from the start would have there, since the replay is deterministic and the
 * points gdb sets change nothing the program sees. Going back to a position at or after
 * its time hands the copy what a re-execution would get on its command line (where to go,
 * gdb's points, the processes it follows, the connection), and it goes on from there: the
 * cost is the distance from the copy, not from the start.
 *
 * Why not rr's fork of the tracees: a replay performs the group's internal I/O for real
 * (its pipes, its files in the run's private overlay), which a forked group would share
 * with the original; and ptrace does not follow a fork of the tracer. So a copy cannot be
 * duplicated, each serves one run, and every copy has replayed the whole way to its time.
 * What can be done cheaply is to move a parked copy on (`advance`): the cost is then the
 * distance between the two times.
 *
 * Copies are kept without being asked for, as rr keeps its checkpoints: at every multiple
 * of a spacing up to the front (the latest time a run of the session reached), the spacing
 * doubled (and the copies off the new multiples ended) whenever there would be more than
 * AUTO_COPIES. So the nearest copy before any target within the front is at most an
 * eighth to a quarter of the front behind it. They are made in the background, one at a
 * time, the latest missing first, by moving the latest parked one before on (advance) or,
 * with none, from the start; two at the two latest times. gdb's `checkpoint` parks two
 * more at its event. A copy used is made again the same way once the run that went back
 * talks to gdb (not while the runs of a going back use the copies), so `restart 1`
 * serves again and again. A
 * copy writes nothing where the user sees it until it is used (shim_hold_output: its
 * writes to the program's output are checked, not performed), and its files are its
 * run's private view: nothing of one shows or stays.
 *
 * Which copy a run starts from is decided by the session's commands alone, never by how
 * fast copies park: the latest one asked for at or before the target (or the automatic
 * one there), waited for if still on its way. So the positions and the copy used are the
 * same in every session; only the wait differs. A run that finds no hit after its copy's
 * time scans again from an earlier copy, or from the start.
 *
 * Copies are children of the process gdb's session started (the `server`, whose pid the
 * launcher or the shell waits for). Once one is used, the live replay is a copy, not the
 * server: the server then only coordinates. It starts each next run (a copy, or a fresh
 * detrun executed again from the start), keeps the copies, and ends with the status of
 * the last run. A copy whose server goes sees its socket close (or is killed: its parent
 * death signal) and ends its group: nothing outlives the session.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debugger/internal.h"
#include "scheduler/scheduler.h"
#include "shim/shim.h"
#include "vkernel/report.h"

enum {
	MAX_COPIES = 24, /* every copy is a whole replay: memory is bounded by count */
	COPIES_PER_CHECKPOINT = 2,
	AUTO_COPIES = 8,  /* automatic copies, at most */
	AUTO_FIRST = 256, /* their first spacing in events, doubled as the front advances */
	MSG_MAX = 65536
};

/* The copies, in the server (the process that spawned them). */
static struct copy {
	pid_t pid;
	int ctl;
	uint64_t want; /* asked for: the first event at or after this time */
	uint64_t time; /* where it parked (0: still on its way) */
	bool automatic;
} pool[MAX_COPIES];
static int n_pool;
static bool cleanup_registered;

/* The automatic copies: at every multiple of `spacing` up to the front (the latest time a
 * run of the session reached), the spacing doubled whenever that makes too many. */
static uint64_t front, spacing = AUTO_FIRST;
static bool auto_off;             /* a copy failed: no more are made unasked */
static bool travelling;           /* the runs of a going back: no copy is made meanwhile */
static uint64_t owed[MAX_COPIES]; /* a checkpoint's copies used, to be made again */
static int n_owed;
static bool said_live; /* a run: told the server it talks to gdb */

static int coord_fd = -1;                 /* a run the server started: its socket to the server */
static int park_fd = -1;                  /* a copy, parked or not yet: its socket to the server */
static uint64_t next_report = AUTO_FIRST; /* a run: the next front it tells the server */
static uint64_t served_time;              /* this run went on from a copy parked here */
static bool served_auto;                  /* ... an automatic one */

/* ---- the copies (in the server) ------------------------------------------------------ */

/* A copy ends its group and exits when its socket closes: a parked one at once, one on its
 * way at its next look (checkpoints_passed; killed, it would say so, or leave its group's
 * helpers to whoever reaps orphans). The server waits for it, so that nothing of the
 * session outlives it even by a moment. */
static void end_copy(int i)
{
	close(pool[i].ctl);
	while (waitpid(pool[i].pid, NULL, 0) < 0 && errno == EINTR)
		;
	pool[i] = pool[--n_pool];
}

static void end_copies(void)
{
	while (n_pool > 0)
		end_copy(n_pool - 1);
}

/* Starts a copy towards the first event at or after `want`, in the background: it says
 * "parked" when it is there (settle). Its output is held meanwhile (shim_hold_output). */
static bool spawn_copy(uint64_t want, bool automatic)
{
	if (n_pool == MAX_COPIES)
		return false;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	char spec[160];
	snprintf(spec, sizeof(spec), "--gdb-resume=-1/P/%llu/0/0/%u/-1/c%d",
		 (unsigned long long)want, report_warnings_said(), sv[1]);
	pid_t pid = travel_spawn(spec, NULL, sv[1], -1, -1);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return false;
	}
	if (!cleanup_registered)
		atexit(end_copies);
	cleanup_registered = true;
	pool[n_pool++] = (struct copy){ pid, sv[0], want, 0, automatic };
	return true;
}

/* Waits for copy i to park: false if it could not (it is gone from the pool then). */
static bool settle(int i)
{
	if (pool[i].time)
		return true;
	char msg[64];
	unsigned long long at = 0;
	if (listen_recv_msg(pool[i].ctl, msg, sizeof(msg), NULL, NULL) <= 0 ||
	    sscanf(msg, "parked %llu", &at) != 1 || at == 0) {
		if (pool[i].automatic)
			auto_off = true;
		end_copy(i);
		return false;
	}
	pool[i].time = at;
	return true;
}

static int count_auto(uint64_t want)
{
	int n = 0;
	for (int i = 0; i < n_pool; i++)
		n += pool[i].automatic && pool[i].want == want;
	return n;
}

/* A copy towards `want` (its index, -1: none): the latest parked automatic copy before it goes on there (the
 * cost is the distance between them, not from the start), else one from the start. The
 * place it left is filled again the same way, later (fill). */
static int make_copy(uint64_t want, bool automatic)
{
	int j = -1;
	for (int i = 0; i < n_pool; i++)
		if (pool[i].automatic && pool[i].time && pool[i].want < want &&
		    (j < 0 || pool[i].want > pool[j].want))
			j = i;
	char msg[48];
	snprintf(msg, sizeof(msg), "advance %llu", (unsigned long long)want);
	if (j < 0 || listen_send_msg(pool[j].ctl, msg, NULL, 0) < 0)
		return spawn_copy(want, automatic) ? n_pool - 1 : -1;
	pool[j].want = want;
	pool[j].time = 0;
	pool[j].automatic = automatic;
	return j;
}

/* Copies owed: the used ones, made again once the run that went back is live (made during
 * its travel, they would take the copies it is about to use, and the processor). The
 * automatic ones one on its way at a time, the latest missing first (going back is mostly
 * near); two at each of the two latest times, where a reverse-continue takes two runs
 * (the scan again from an earlier copy, then the stop). */
static void fill(void)
{
	if (auto_off || travelling)
		return;
	while (n_owed > 0)
		make_copy(owed[--n_owed], false);
	for (int i = 0; i < n_pool; i++)
		if (pool[i].automatic && !pool[i].time)
			return;
	uint64_t top = front / spacing * spacing;
	for (uint64_t t = top; t > 0; t -= spacing)
		if (count_auto(t) < (t + spacing >= top ? 2 : 1)) {
			make_copy(t, true);
			return;
		}
}

/* Copies that parked since: settled without waiting, and the next automatic one started. */
static void poll_copies(void)
{
	for (int i = n_pool - 1; i >= 0; i--) {
		struct pollfd p = { pool[i].ctl, POLLIN, 0 };
		if (!pool[i].time && poll(&p, 1, 0) == 1)
			settle(i);
	}
	fill();
}

/* A run of the session reached `now`: the ladder of automatic copies reaches it too. */
static void advance_front(uint64_t now)
{
	if (now <= front)
		return;
	front = now;
	while (front / spacing > AUTO_COPIES) {
		spacing *= 2;
		for (int i = n_pool - 1; i >= 0; i--)
			if (pool[i].automatic && pool[i].want % spacing)
				end_copy(i);
	}
	poll_copies();
}

static int make_copies(uint64_t time)
{
	int made = 0;
	while (made < COPIES_PER_CHECKPOINT && spawn_copy(time, false))
		made++;
	return made;
}

/* The copy a run going back to `bound` starts from: the latest asked for at or before it,
 * waited for if it is on its way, or the automatic one there, started now (no slower than
 * a run from the start, and the same in every session: which copy serves depends on the
 * session's commands only, never on how fast copies park). -1: the start. */
static int best_copy(uint64_t bound)
{
	for (;;) {
		int best = -1;
		for (int i = 0; i < n_pool; i++)
			if (pool[i].want <= bound && (best < 0 || pool[i].want > pool[best].want))
				best = i;
		uint64_t rung = (bound < front ? bound : front) / spacing * spacing;
		int made = !auto_off && rung && (best < 0 || pool[best].want < rung)
				   ? make_copy(rung, true)
				   : -1;
		if (made >= 0)
			best = made;
		if (best < 0)
			return -1;
		if (!settle(best))
			continue;
		if (pool[best].time <= bound)
			return best;
		bound = pool[best].want - 1; /* no event between: an earlier one serves */
	}
}

/* ---- the server as coordinator ------------------------------------------------------- */

struct request {
	uint64_t bound;
	char spec[MSG_MAX / 2];
	char job[1024];
	int fds[2];
	int nfds;
};

struct run {
	pid_t pid;
	int ctl;
};

/* The next run: the latest copy that may serve it, else detrun executed again. A copy
 * serves once (ptrace does not follow a fork of the tracer): another is started towards
 * the same time at once, in the background, so that the checkpoint serves again. */
static struct run start_run(const struct request *r)
{
	travelling = true;
	int i = best_copy(r->bound);
	if (i >= 0) {
		static char msg[MSG_MAX];
		snprintf(msg, sizeof(msg), "go %llu %c\n%s\n%s", (unsigned long long)pool[i].time,
			 pool[i].automatic ? 'a' : 'k', r->spec, r->job);
		struct copy used = pool[i];
		pool[i] = pool[--n_pool];
		if (!used.automatic && n_owed < MAX_COPIES)
			owed[n_owed++] = used.want;
		if (listen_send_msg(used.ctl, msg, r->fds, r->nfds) == 0)
			return (struct run){ used.pid, used.ctl };
		close(used.ctl);
		while (waitpid(used.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		die("cannot start the next run: %s", strerror(errno));
	static char spec[MSG_MAX];
	/* The connection's descriptors here are not the ones the spec names (/f: these). */
	snprintf(spec, sizeof(spec), "%s/c%d/f%d.%d", r->spec, sv[1], r->fds[0],
		 r->nfds > 1 ? r->fds[1] : -1);
	pid_t pid = travel_spawn(spec, r->job[0] ? r->job : NULL, sv[1], r->fds[0],
				 r->nfds > 1 ? r->fds[1] : -1);
	if (pid < 0)
		die("cannot start the next run: %s", strerror(errno));
	close(sv[1]);
	return (struct run){ pid, sv[0] };
}

/* Waits until fd is readable, copies that park meanwhile settled (and the next automatic
 * one started): the copies go on while the session waits for gdb or for its run. */
static void wait_readable(int fd)
{
	for (;;) {
		struct pollfd p[1 + MAX_COPIES];
		int n = 0;
		p[n++] = (struct pollfd){ fd, POLLIN, 0 };
		for (int i = 0; i < n_pool; i++)
			if (!pool[i].time)
				p[n++] = (struct pollfd){ pool[i].ctl, POLLIN, 0 };
		if (n == 1 || (poll(p, (nfds_t)n, -1) < 0 && errno != EINTR) || p[0].revents)
			return;
		poll_copies();
	}
}

static bool parse_request(const char *msg, struct request *r)
{
	unsigned long long bound;
	const char *spec = strchr(msg, '\n');
	const char *job = spec ? strchr(spec + 1, '\n') : NULL;
	if (sscanf(msg, "travel %llu", &bound) != 1 || !job)
		return false;
	r->bound = bound;
	snprintf(r->spec, sizeof(r->spec), "%.*s", (int)(job - spec - 1), spec + 1);
	snprintf(r->job, sizeof(r->job), "%s", job + 1);
	return true;
}

static __attribute__((noreturn)) void finish(int status)
{
	end_copies();
	exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* The server from its first use of a copy on: one run lives at a time, and asks it for
 * copies and for the next run. Ends with the last run's status. */
static __attribute__((noreturn)) void coordinate(struct request r)
{
	struct itimerval off = { 0 };
	setitimer(ITIMER_REAL, &off, NULL);
	static char msg[MSG_MAX];
	for (;;) {
		struct run run = start_run(&r);
		for (int i = 0; i < r.nfds; i++)
			close(r.fds[i]);
		for (;;) {
			int fds[2], nfds = 0;
			wait_readable(run.ctl);
			ssize_t n = listen_recv_msg(run.ctl, msg, sizeof(msg), fds, &nfds);
			unsigned long long time;
			if (n > 0 && sscanf(msg, "front %llu", &time) == 1) {
				advance_front(time);
				continue;
			}
			if (n > 0 && !strcmp(msg, "live")) {
				travelling = false;
				fill();
				continue;
			}
			if (n > 0 && sscanf(msg, "checkpoint %llu", &time) == 1) {
				char reply[32];
				snprintf(reply, sizeof(reply), "made %d", make_copies(time));
				listen_send_msg(run.ctl, reply, NULL, 0);
				continue;
			}
			int status = 0;
			close(run.ctl);
			while (waitpid(run.pid, &status, 0) < 0 && errno == EINTR)
				;
			if (n <= 0 || !parse_request(msg, &r))
				finish(status); /* the session ended in that run */
			memcpy(r.fds, fds, sizeof(fds));
			r.nfds = nfds;
			break;
		}
	}
}

/* ---- what the debugger calls ---------------------------------------------------------- */

void checkpoints_set_socket(int fd, bool parked)
{
	shim_hold_output(parked); /* nothing of a copy shows until it is used */
	if (parked)
		park_fd = fd;
	else
		coord_fd = fd;
}

bool checkpoints_active(void)
{
	return coord_fd >= 0 || n_pool > 0;
}

int checkpoints_make(uint64_t time)
{
	if (coord_fd < 0)
		return make_copies(time);
	char msg[64];
	snprintf(msg, sizeof(msg), "checkpoint %llu", (unsigned long long)time);
	int made = 0;
	if (listen_send_msg(coord_fd, msg, NULL, 0) < 0 ||
	    listen_recv_msg(coord_fd, msg, sizeof(msg), NULL, NULL) <= 0 ||
	    sscanf(msg, "made %d", &made) != 1)
		return 0;
	return made;
}

void checkpoints_travel(const char *spec, const char *job, uint64_t bound, int conn, int refusing)
{
	static char msg[MSG_MAX];
	snprintf(msg, sizeof(msg), "travel %llu\n%s\n%s", (unsigned long long)bound, spec,
		 job ? job : "");
	int fds[2] = { conn, refusing };
	report_run_cleanup(); /* the group goes first: nothing of it may outlive this run */
	if (coord_fd >= 0) {
		if (listen_send_msg(coord_fd, msg, fds, refusing >= 0 ? 2 : 1) < 0)
			die("the session's server has gone");
		exit(0);
	}
	struct request r;
	if (!parse_request(msg, &r))
		die("cannot go back: the request is too long");
	/* Copies: the server's own stay open (its refusing thread goes on answering). */
	r.fds[0] = dup(conn), r.fds[1] = refusing >= 0 ? dup(refusing) : -1;
	r.nfds = refusing >= 0 ? 2 : 1;
	coordinate(r);
}

void checkpoints_passed(uint64_t now)
{
	if (now < next_report)
		return;
	next_report = (now / AUTO_FIRST + 1) * AUTO_FIRST;
	/* A copy on its way tells nothing, and ends when the server closed its socket (it
	 * writes on it only once the copy is parked). */
	struct pollfd p = { park_fd, POLLIN, 0 };
	if (park_fd >= 0 && poll(&p, 1, 0) == 1) {
		report_run_cleanup();
		exit(0);
	}
	if (park_fd >= 0)
		return;
	/* A run that is no replay would do its outside calls again in every copy. */
	if (strcmp(shim_get()->name, "replay"))
		return;
	if (coord_fd < 0) {
		advance_front(now);
		return;
	}
	char msg[48];
	snprintf(msg, sizeof(msg), "front %llu", (unsigned long long)now);
	listen_send_msg(coord_fd, msg, NULL, 0);
}

void checkpoints_wait_gdb(int conn)
{
	if (coord_fd < 0 && park_fd < 0)
		wait_readable(conn);
	if (coord_fd >= 0 && !said_live && listen_send_msg(coord_fd, "live", NULL, 0) == 0)
		said_live = true;
}

void checkpoints_describe_origin(char *out, size_t size)
{
	if (served_time)
		snprintf(out, size,
			 "This run went on from a run parked at logical time %llu (%s).\n",
			 (unsigned long long)served_time,
			 served_auto ? "kept automatically" : "a checkpoint's");
	else
		snprintf(out, size, "This run started from the start of the recording.\n");
}

void checkpoints_park(struct dbg_state *dbg, struct task *t)
{
	(void)t;
	static char got[MSG_MAX];
	int fds[2], nfds = 0;
	unsigned long long start, want;
	char kind = 0;
	for (;;) {
		char msg[64];
		snprintf(msg, sizeof(msg), "parked %llu", (unsigned long long)sched_now());
		if (listen_send_msg(park_fd, msg, NULL, 0) < 0 ||
		    listen_recv_msg(park_fd, got, sizeof(got), fds, &nfds) <= 0)
			break;
		/* Asked to go on to a later time and park there (the server's make_copy). */
		if (sscanf(got, "advance %llu", &want) == 1 && want > sched_now()) {
			dbg->goal = (struct position){ want, 0 };
			return;
		}
		if (sscanf(got, "advance %llu", &want) == 1)
			continue;
		if (nfds < 1 || sscanf(got, "go %llu %c", &start, &kind) != 2)
			break;
		char *spec = strchr(got, '\n');
		char *job = spec ? strchr(spec + 1, '\n') : NULL;
		if (!job)
			die("a parked run got a bad request");
		*spec++ = 0;
		*job++ = 0;
		coord_fd = park_fd;
		park_fd = -1;
		served_time = start;
		served_auto = kind == 'a';
		next_report = (start / AUTO_FIRST + 1) * AUTO_FIRST;
		shim_hold_output(false); /* the program's output shows from here on */
		launch_resume(dbg, spec, fds, nfds);
		if (*job)
			stepback_take_job(job);
		travel_set_origin(spec, job, start);
		return;
	}
	report_run_cleanup(); /* the session ended, or it had no use for this copy */
	exit(0);
}
