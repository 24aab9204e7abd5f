/* Opening a FIFO: a blocking open for reading sleeps in the kernel until a writer opens it,
 * one for writing until a reader does (O_RDWR and O_NONBLOCK never sleep).
 *
 * Whether the other end is open is read from the group's descriptor tables (/proc/PID/fd
 * and fdinfo of every member process), never by opening the FIFO, which the program could
 * notice. A writer with no reader parks before its open until some member holds a read end.
 * A reader with no writer opens with O_NONBLOCK added (a read end always opens at once), so
 * a writer arriving later finds it and its own open does not sleep; the reader's O_NONBLOCK
 * is cleared again and it stays parked at the call's exit until a writer has come: one
 * is open, or its end reports data or a hang-up (a writer came and went).
 *
 * Openers outside the group are not seen (a FIFO is a file anyone may open): a parked
 * open notices them only when the group runs on. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "handlers/sys_common.h"
#include "handlers/sys_park.h"
#include "handlers/sys_files.h"
#include "syscalls/syscall_table.h"

/* Does process tgid hold the FIFO (dev, ino) open for reading (want_write false) or
 * writing? */
static bool process_holds(pid_t tgid, dev_t dev, ino_t ino, bool want_write)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", tgid);
	DIR *d = opendir(path);
	if (!d)
		return false;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char fdpath[320], line[128];
		struct stat st;
		snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/%s", tgid, e->d_name);
		if (stat(fdpath, &st) || !S_ISFIFO(st.st_mode) || st.st_dev != dev ||
		    st.st_ino != ino)
			continue;
		snprintf(fdpath, sizeof(fdpath), "/proc/%d/fdinfo/%s", tgid, e->d_name);
		FILE *f = fopen(fdpath, "re");
		unsigned flags = 0;
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "flags: %o", &flags) == 1)
				break;
		if (f)
			fclose(f);
		int mode = (int)(flags & O_ACCMODE);
		found = mode == O_RDWR || mode == (want_write ? O_WRONLY : O_RDONLY);
	}
	closedir(d);
	return found;
}

/* Does any member process hold the FIFO open that way? */
static bool group_holds(dev_t dev, ino_t ino, bool want_write)
{
	for (struct task *t = sched_first(); t; t = t->next) {
		bool seen = t->state == TASK_DEAD;
		for (struct task *u = sched_first(); u != t && !seen; u = u->next)
			seen = u->proc == t->proc && u->state != TASK_DEAD;
		if (!seen && process_holds(t->proc->tgid, dev, ino, want_write))
			return true;
	}
	return false;
}

static enum wait_result reader_came(struct task *t)
{
	const struct wait_state *s = parked_state(t, PARKED_FIFO);
	return group_holds(s->fifo.dev, s->fifo.ino, false) ? WAIT_READY : WAIT_NOT_READY;
}

static enum wait_result writer_came(struct task *t)
{
	if (t->wait.nfds == 1 && fds_ready_now(t->wait.fds, 1) &&
	    (t->wait.fds[0].revents & (POLLIN | POLLHUP)))
		return WAIT_READY;
	const struct wait_state *s = parked_state(t, PARKED_FIFO);
	return group_holds(s->fifo.dev, s->fifo.ino, true) ? WAIT_READY : WAIT_NOT_READY;
}

/* A signal ends the reader's wait: its open is undone and rewound, so the scheduler either
 * restarts it or makes it fail with EINTR, as for a call that never returned. */
static void reader_interrupted(struct task *t)
{
	remote_load_regs(t);
	remote_syscall(t, __NR_close, (uint64_t)parked_state(t, PARKED_FIFO)->fifo.reader_fd, 0, 0,
		       0, 0, 0);
	syscall_rewind(t);
}

static void park_fifo(struct task *t, const struct stat *st, int reader_fd, int supervisor_fd)
{
	struct wait w = {
		.what = reader_fd >= 0 ? "open of a FIFO for reading"
				       : "open of a FIFO for writing",
		.deadline_ns = -1,
		.ready = reader_fd >= 0 ? writer_came : reader_came,
		.on_interrupt = reader_fd >= 0 ? reader_interrupted : NULL,
		.interruptible = true,
		.restartable = true,
	};
	struct wait_state *s = parked_state_new(t, PARKED_FIFO);
	s->fifo.dev = st->st_dev;
	s->fifo.ino = st->st_ino;
	s->fifo.reader_fd = reader_fd;
	if (supervisor_fd >= 0) {
		w.fds = malloc(sizeof(*w.fds));
		if (!w.fds)
			abort();
		*w.fds = (struct pollfd){ supervisor_fd, POLLIN, 0 };
		w.nfds = 1;
	}
	sched_park(t, &w);
}

/* At the exit of a reader's open made non-blocking: clear O_NONBLOCK, wait for a writer. */
static void reader_opened(struct task *t)
{
	syscall_set_arg(t, t->exit.changed_arg.arg, t->exit.changed_arg.value);
	int64_t fd = syscall_result(t);
	if (fd < 0)
		return;
	int dup = remote_dup_fd(t, (int)fd);
	struct stat st;
	if (dup < 0 || fstat(dup, &st)) {
		if (dup >= 0)
			close(dup);
		return;
	}
	int fl = fcntl(dup, F_GETFL);
	if (fl >= 0)
		fcntl(dup, F_SETFL, fl & ~O_NONBLOCK);
	if (group_holds(st.st_dev, st.st_ino, true)) {
		close(dup);
		return;
	}
	park_fifo(t, &st, (int)fd, dup);
}

static int flags_arg(long nr)
{
	return nr == __NR_open ? 1 : nr == __NR_openat ? 2 : -1;
}

/* Does t's open name a FIFO it would sleep on? Then it is handled here (true). */
static bool fifo_open(struct task *t, const struct open_target *o)
{
	long nr = t->syscall_nr;
	int arg = flags_arg(nr);
	uint64_t flags = nr == __NR_creat ? (O_CREAT | O_WRONLY | O_TRUNC) : syscall_arg(t, arg);
	int mode = (int)(flags & O_ACCMODE);
	if ((flags & (O_NONBLOCK | O_PATH | O_DIRECTORY)) || (mode != O_RDONLY && mode != O_WRONLY))
		return false;
	if (!o->resolved || !S_ISFIFO(o->st.st_mode))
		return false;
	const struct stat st = o->st;
	bool reader = mode == O_RDONLY;
	if (group_holds(st.st_dev, st.st_ino, reader))
		return true; /* the other end is open: the open returns at once */
	if (!reader) {
		park_fifo(t, &st, -1, -1);
		return true;
	}
	t->exit.changed_arg.value = flags;
	t->exit.changed_arg.arg = arg;
	syscall_set_arg(t, arg, flags | O_NONBLOCK);
	tracer_want_exit(t, reader_opened);
	return true;
}

/* Implements open(2), openat(2), creat(2): FIFOs wait for their other end; everything else
 * is sys_open's (stamping, fingerprints). openat2 is left to sys_open: its flags live in
 * memory, where the reader's O_NONBLOCK could not be added without writing the program's. */
void sys_open_fifo(struct task *t)
{
	struct open_target o;
	open_target_lookup(t, &o);
	if (!fifo_open(t, &o))
		sys_open_target(t, &o);
}
