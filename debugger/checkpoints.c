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
 * ptrace does not follow a fork of the tracer, so a copy cannot be duplicated: each serves
 * one run. gdb's `checkpoint` parks two (a reverse-continue takes two runs, one counting
 * the hits, one stopping at the last), made one after the other, so the program's output
 * they write comes in the same order on every session. A run that finds no hit after its
 * copy's time scans again from an earlier copy, or from the start.
 *
 * Copies are children of the process gdb's session started (the `server`, whose pid the
 * launcher or the shell waits for). Once one is used, the live replay is a copy, not the
 * server: the server then only coordinates. It starts each next run (a copy, or a fresh
 * detrun executed again from the start), parks the copies later runs ask for, and ends
 * with the status of the last run. A copy whose server goes sees its socket close and
 * ends its group: nothing outlives the session.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debugger/internal.h"
#include "scheduler/scheduler.h"
#include "vkernel/report.h"

enum {
	MAX_COPIES = 16,
	COPIES_PER_CHECKPOINT = 2,
	MSG_MAX = 65536
};

/* The parked copies, in the server (the process that spawned them). */
static struct {
	pid_t pid;
	int ctl;
	uint64_t time;
} pool[MAX_COPIES];
static int n_pool;
static bool cleanup_registered;

static int coord_fd = -1; /* a run the server started: its socket to the server */
static int park_fd = -1;  /* a copy, parked or not yet: its socket to the server */

/* ---- the copies (in the server) ------------------------------------------------------ */

/* A copy ends its group and exits when its socket closes: the server waits for that, so
 * that nothing of the session outlives it even by a moment. */
static void end_copies(void)
{
	for (int i = 0; i < n_pool; i++)
		close(pool[i].ctl);
	for (int i = 0; i < n_pool; i++)
		while (waitpid(pool[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
	n_pool = 0;
}

/* Parks one copy at the first event at or after `time`; false if it could not. */
static bool spawn_copy(uint64_t time)
{
	if (n_pool == MAX_COPIES)
		return false;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	char spec[160];
	snprintf(spec, sizeof(spec), "--gdb-resume=-1/P/%llu/0/0/%u/-1/c%d",
		 (unsigned long long)time, report_warnings_said(), sv[1]);
	pid_t pid = travel_spawn(spec, NULL, sv[1], -1, -1);
	close(sv[1]);
	char msg[64];
	unsigned long long at = 0;
	if (pid < 0 || listen_recv_msg(sv[0], msg, sizeof(msg), NULL, NULL) <= 0 ||
	    sscanf(msg, "parked %llu", &at) != 1) {
		close(sv[0]);
		while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return false;
	}
	if (!cleanup_registered)
		atexit(end_copies);
	cleanup_registered = true;
	pool[n_pool++] = (typeof(pool[0])){ pid, sv[0], at };
	return true;
}

static int make_copies(uint64_t time)
{
	int made = 0;
	while (made < COPIES_PER_CHECKPOINT && spawn_copy(time))
		made++;
	return made;
}

/* The latest copy at or before `bound` (-1: none). */
static int best_copy(uint64_t bound)
{
	int best = -1;
	for (int i = 0; i < n_pool; i++)
		if (pool[i].time <= bound && (best < 0 || pool[i].time > pool[best].time))
			best = i;
	return best;
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

/* The next run: the latest copy that may serve it, else detrun executed again. */
static struct run start_run(const struct request *r)
{
	int i = best_copy(r->bound);
	if (i >= 0) {
		static char msg[MSG_MAX];
		snprintf(msg, sizeof(msg), "go %llu\n%s\n%s", (unsigned long long)pool[i].time,
			 r->spec, r->job);
		struct run run = { pool[i].pid, pool[i].ctl };
		pool[i] = pool[--n_pool];
		if (listen_send_msg(run.ctl, msg, r->fds, r->nfds) == 0)
			return run;
		close(run.ctl);
		while (waitpid(run.pid, NULL, 0) < 0 && errno == EINTR)
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
			ssize_t n = listen_recv_msg(run.ctl, msg, sizeof(msg), fds, &nfds);
			unsigned long long time;
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

void checkpoints_park(struct dbg_state *dbg, struct task *t)
{
	(void)t;
	char msg[64];
	snprintf(msg, sizeof(msg), "parked %llu", (unsigned long long)sched_now());
	static char got[MSG_MAX];
	int fds[2], nfds = 0;
	unsigned long long start;
	if (listen_send_msg(park_fd, msg, NULL, 0) < 0 ||
	    listen_recv_msg(park_fd, got, sizeof(got), fds, &nfds) <= 0 || nfds < 1 ||
	    sscanf(got, "go %llu", &start) != 1) {
		report_run_cleanup(); /* the session ended, or it had no use for this copy */
		exit(0);
	}
	char *spec = strchr(got, '\n');
	char *job = spec ? strchr(spec + 1, '\n') : NULL;
	if (!job)
		die("a parked run got a bad request");
	*spec++ = 0;
	*job++ = 0;
	coord_fd = park_fd;
	park_fd = -1;
	launch_resume(dbg, spec, fds, nfds);
	if (*job)
		stepback_take_job(job);
	travel_set_origin(spec, job, start);
}
