/* The standard descriptors of a replay: what the recorded program inherited, as far as
 * the program can tell.
 *
 * A program looks at its standard output: stdio buffers a file or a pipe and not a
 * terminal, `ls` prints columns only to a terminal, a server logs differently to a file.
 * So a replay whose output goes elsewhere than the recording's (recorded into a file,
 * replayed on a terminal; recorded on a terminal, replayed into `less`) would take another
 * path and diverge. The replay therefore gives the group a stand-in of the recorded kind
 * wherever the kind differs, and a relay process outside the group copies what the
 * program writes there to the real descriptor, as it comes:
 * - output that went outside (a terminal, a pipe or socket from the shell) is outside
 *   again: every question the program asks of it (fstat, isatty, the window size) is
 *   answered from the log, whatever the stand-in is, so a pipe does (a socket pair for a
 *   socket, which send(2) needs);
 * - output that went into a regular file is a file again, unnamed, in /tmp: the group
 *   writes it as it wrote the recorded one (an internal file, not in the log), and the
 *   relay follows it through inotify;
 * - output that went to a device that was not a terminal (/dev/null) goes to /dev/null,
 *   as it did.
 * The relay ends when detrun does: detrun waits for it to copy the rest, so the output
 * is all there when the shell prompt comes back. detrun's own messages keep to the real
 * standard error, never the program's stand-in, which they would change. */
#include "cli/replay_stdio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/write_all.h"
#include "engine/foreground.h"
#include "handlers/sys_external.h"
#include "recorder/fingerprint.h"
#include "vkernel/report.h"

/* A standard descriptor given a stand-in: the relay copies `from` (the stand-in's other
 * end, or the file itself) to `to` (the real descriptor). */
struct relayed {
	int from, to;
	bool file;
	off_t copied;
};

static struct relayed relays[2];
static int n_relays;
static pid_t relay_pid = -1;
static int relay_ctl = -1; /* closed by detrun at its end: the relay copies the rest, ends */

static const char *kind_name(uint32_t kind)
{
	switch (kind) {
	case 0:
		return "closed";
	case S_IFREG:
		return "a file";
	case S_IFIFO:
		return "a pipe";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFDIR:
		return "a directory";
	default:
		return "a special file";
	}
}

/* A terminal, or a pipe or socket whose other end is outside the group. */
bool outside_channel(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && (isatty(fd) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

static bool recorded_outside(const Detrun__Log__Header *h, int fd)
{
	for (size_t i = 0; i < h->n_outside_fds; i++)
		if (h->outside_fds[i] == fd)
			return true;
	return false;
}

static uint32_t kind_now(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? (uint32_t)(st.st_mode & S_IFMT) : 0;
}

/* ---- the relay (a process outside the group) --------------------------------------------- */

/* Copies what is there now; false once `from` has nothing more to give (the end of a
 * pipe). What `to` no longer takes (its reader gone: `detrun replay LOG | head`) is read
 * and dropped, so that the group, which wrote all of it when recorded, never blocks. */
static bool relay_copy(struct relayed *r)
{
	char buf[65536];
	for (;;) {
		ssize_t n = r->file ? pread(r->from, buf, sizeof(buf), r->copied)
				    : read(r->from, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0)
			return r->file && n == 0;
		r->copied += n;
		if (r->to >= 0 && write_all(r->to, buf, (size_t)n) < 0)
			r->to = -1;
	}
}

static __attribute__((noreturn)) void relay_main(int ctl)
{
	signal(SIGPIPE, SIG_IGN);
	int notify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	struct pollfd pfd[3];
	for (int i = 0; i < n_relays; i++) {
		fcntl(relays[i].from, F_SETFL, O_NONBLOCK);
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", relays[i].from);
		if (relays[i].file && notify >= 0)
			inotify_add_watch(notify, path, IN_MODIFY);
		pfd[i] = (struct pollfd){ relays[i].file ? -1 : relays[i].from, POLLIN, 0 };
	}
	pfd[n_relays] = (struct pollfd){ notify, POLLIN, 0 };
	pfd[n_relays + 1] = (struct pollfd){ ctl, POLLIN, 0 };
	for (bool ending = false; !ending;) {
		if (poll(pfd, (nfds_t)n_relays + 2, -1) < 0 && errno != EINTR)
			break;
		char events[4096];
		while (notify >= 0 && read(notify, events, sizeof(events)) > 0)
			;
		ending = pfd[n_relays + 1].revents != 0;
		for (int i = 0; i < n_relays; i++)
			if ((relays[i].file || pfd[i].revents) && !relay_copy(&relays[i]))
				pfd[i].fd = -1;
	}
	for (int i = 0; i < n_relays; i++) /* the group has ended: all it wrote is there */
		relay_copy(&relays[i]);
	_exit(0);
}

static void start_relay(void)
{
	int ctl[2];
	if (pipe2(ctl, O_CLOEXEC) < 0)
		die("cannot start the replay's output relay: %s", strerror(errno));
	relay_pid = fork();
	if (relay_pid < 0)
		die("cannot start the replay's output relay: %s", strerror(errno));
	if (relay_pid == 0) {
		close(ctl[1]);
		for (int fd = 1; fd <= 2; fd++)
			close(fd); /* the stand-ins' writing ends: a pipe's end shows when the group's go */
		relay_main(ctl[0]);
	}
	close(ctl[0]);
	relay_ctl = ctl[1];
	for (int i = 0; i < n_relays; i++)
		if (!relays[i].file)
			close(relays[i].from);
}

void replay_stdio_finish(void)
{
	if (relay_pid < 0)
		return;
	fflush(stdout);
	close(1);
	close(2);
	close(relay_ctl);
	while (waitpid(relay_pid, NULL, 0) < 0 && errno == EINTR)
		;
	relay_pid = -1;
}

/* ---- the stand-ins ----------------------------------------------------------------------- */

/* detrun's own messages go on to the real standard error once fd 2 is the program's. */
static void keep_messages_on_real_stderr(void)
{
	int mine = fcntl(2, F_DUPFD_CLOEXEC, 3);
	FILE *f = mine >= 0 ? fdopen(mine, "w") : NULL;
	if (!f)
		die("cannot keep detrun's messages apart from the replay's: %s", strerror(errno));
	setvbuf(f, NULL, _IONBF, 0);
	if (report_trace_out == stderr)
		report_trace_out = f;
	stderr = f;
}

/* Makes a stand-in of `kind` for fd: the descriptor the group writes to, and into *from
 * what the relay reads; -1 if none can be made. */
static int make_stand_in(uint32_t kind, bool outside, int *from)
{
	int ends[2];
	if (outside && kind == S_IFSOCK) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) < 0)
			return -1;
		shutdown(ends[0], SHUT_WR);
		*from = ends[0];
		return ends[1];
	}
	if (outside) {
		if (pipe2(ends, O_CLOEXEC) < 0)
			return -1;
		*from = ends[0];
		return ends[1];
	}
	if (kind == S_IFREG) {
		const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
		int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		*from = fd;
		return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
	}
	if (kind == S_IFCHR) {
		*from = -1;
		return open("/dev/null", O_WRONLY | O_CLOEXEC);
	}
	return -1;
}

/* Gives the group's fd a stand-in of the recorded kind where the real one differs; true if
 * fd is now as the program had it. */
static bool stand_in_for(const Detrun__Log__Header *h, int fd)
{
	uint32_t kind = h->std_kinds[fd];
	bool outside = recorded_outside(h, fd);
	if (outside ? outside_channel(fd) : kind_now(fd) == kind && !outside_channel(fd))
		return true;
	if (fd == 2)
		keep_messages_on_real_stderr();
	int from = -1, ours = make_stand_in(kind, outside, &from);
	int real = ours < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (real < 0 || dup2(ours, fd) < 0) {
		warn("%s is %s, it was %s when recorded, and no stand-in could be made (%s): the "
		     "program may notice and the replay diverge",
		     fd == 1 ? "standard output" : "standard error", kind_name(kind_now(fd)),
		     kind_name(kind), strerror(errno));
		return false;
	}
	close(ours);
	if (from >= 0)
		relays[n_relays++] = (struct relayed){ from, real, !outside, 0 };
	else
		close(real);
	return true;
}

/* Standard input from a regular file is that file again, read from where the recording
 * began reading it; it must not have changed. */
static void replay_stdin_file(const Detrun__Log__Header *h)
{
	int fd = open(h->stdin_file, O_RDONLY | O_CLOEXEC);
	uint64_t hash = 0, size;
	if (fd < 0 || fingerprint_fd(fd, &hash, &size) || hash != h->stdin_hash) {
		fprintf(stderr, "detrun: cannot replay: standard input %s %s\n", h->stdin_file,
			fd < 0 ? strerror(errno) : "differs from the recording");
		exit(125);
	}
	if (lseek(fd, h->stdin_offset, SEEK_SET) < 0 || dup2(fd, 0) < 0)
		die("cannot set up standard input for the replay: %s", strerror(errno));
	close(fd);
}

/* Standard input that came from outside is a pipe nobody writes (every read of it is
 * answered from the log, its flags as recorded), a file is the same file, a closed one is
 * closed, and anything else is /dev/null, so the replay never reads this terminal. */
static void replay_stdin(const Detrun__Log__Header *h)
{
	int stand_in[2];
	if (recorded_outside(h, 0)) {
		if (pipe(stand_in) < 0 || dup2(stand_in[0], 0) < 0)
			die("cannot set up standard input for the replay: %s", strerror(errno));
		close(stand_in[0]);
		fcntl(stand_in[1], F_SETFD, FD_CLOEXEC); /* kept open: reads never see EOF */
		if (h->n_std_flags > 0 && (h->std_flags[0] & O_NONBLOCK))
			fcntl(0, F_SETFL, O_NONBLOCK);
	} else if (*h->stdin_file) {
		replay_stdin_file(h);
	} else if (h->n_std_kinds > 0 && h->std_kinds[0] == 0) {
		close(0);
	} else {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0)
			die("cannot set up standard input for the replay: %s", strerror(errno));
		close(null);
	}
	if (recorded_outside(h, 0))
		external_register(0);
}

/* The controlling terminal as recorded: without one, the program could not open /dev/tty,
 * and bash then goes another way from its start. One the recording had cannot be given
 * back where there is none. */
static void replay_terminal(const Detrun__Log__Header *h)
{
	if (h->format_version < 6)
		return;
	if (!h->controlling_terminal)
		foreground_leave_terminal();
	else if (!foreground_have_terminal())
		warn("the recording had a controlling terminal and this replay has none: a "
		     "program that opens /dev/tty will diverge (replay it in a terminal)");
}

void replay_stdio_setup(const Detrun__Log__Header *h)
{
	replay_terminal(h);
	replay_stdin(h);
	for (int fd = 1; fd <= 2 && (size_t)fd < h->n_std_kinds; fd++) {
		if (h->std_kinds[fd] == 0)
			close(fd);
		else if (stand_in_for(h, fd) && recorded_outside(h, fd))
			external_register(fd);
	}
	if (n_relays > 0) {
		start_relay();
		atexit(replay_stdio_finish);
	}
}
