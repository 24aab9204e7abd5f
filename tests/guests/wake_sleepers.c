/* Calls that sleep in the kernel until another member acts: splice, tee and vmsplice on
 * pipes, sendfile into a full pipe, SysV messages and semaphores, POSIX message queues,
 * opening a FIFO before its other end, an AIO poll, and writev, pwritev2 and sendmsg of more
 * than the pipe or socket holds. Usage: wake_sleepers MODE [DIR]. The parent makes the
 * sleeping call, a child makes it complete; both check what went through and the parent
 * prints one fixed line. */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <mqueue.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BIG (256 * 1024)

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void settle(void)
{
	for (int i = 0; i < 3; i++)
		(void)getppid();
}

static int reap(pid_t pid)
{
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n <= 0)
			die("write");
		buf += n, len -= (size_t)n;
	}
}

/* Reads until EOF; the byte count, checked against the pattern byte i % 251. */
static long drain_checked(int fd)
{
	static char buf[65536];
	long total = 0;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0)
			die("read");
		if (n == 0)
			return total;
		for (ssize_t i = 0; i < n; i++)
			if ((unsigned char)buf[i] != (unsigned char)((total + i) % 251))
				return -1;
		total += n;
	}
}

static char *pattern(size_t len)
{
	char *p = malloc(len);
	if (!p)
		die("malloc");
	for (size_t i = 0; i < len; i++)
		p[i] = (char)(i % 251);
	return p;
}

/* A child that writes `text` into fd and exits. */
static pid_t child_writing(int fd, const char *text, int close_fd)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (close_fd >= 0)
			close(close_fd);
		settle();
		write_all(fd, text, strlen(text));
		_exit(7);
	}
	return pid;
}

/* A child that drains fd (a pipe's read end or a socket), checking the pattern. */
static pid_t child_draining(int fd, int close_fd)
{
	pid_t pid = fork();
	if (pid == 0) {
		close(close_fd);
		settle();
		long n = drain_checked(fd);
		_exit(n == BIG ? 7 : 1);
	}
	return pid;
}

/* preadv2 at the file position (offset -1) reads a pipe like readv. */
static void preadv2_case(void)
{
	int p[2];
	if (pipe(p))
		die("pipe");
	pid_t pid = child_writing(p[1], "hello through preadv2", -1);
	char buf[64] = { 0 };
	struct iovec iov = { buf, sizeof(buf) - 1 };
	if (preadv2(p[0], &iov, 1, -1, 0) <= 0)
		die("preadv2");
	printf("preadv2: %s, child %d\n", buf, reap(pid));
}

static void splice_case(bool tee_instead)
{
	int a[2], b[2];
	if (pipe(a) || pipe(b))
		die("pipe");
	pid_t pid = child_writing(a[1], "hello through a pipe", -1);
	ssize_t n = tee_instead ? tee(a[0], b[1], 1024, 0)
				: splice(a[0], NULL, b[1], NULL, 1024, 0);
	if (n <= 0)
		die(tee_instead ? "tee" : "splice");
	char buf[64] = { 0 };
	if (read(b[0], buf, (size_t)n) != n)
		die("read");
	printf("%s: %s, child %d\n", tee_instead ? "tee" : "splice", buf, reap(pid));
}

/* Fills a blocking pipe: afterwards a blocking write would sleep. */
static void fill_pipe(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	char *p = pattern(65536);
	ssize_t n = write(fd, p, 65536);
	if (n != 65536)
		die("fill pipe");
	fcntl(fd, F_SETFL, fl);
	free(p);
}

/* The pipe holds 64 KiB of pattern; the rest of BIG follows by `how`. */
static void into_full_pipe(const char *how, const char *dir)
{
	size_t rest = BIG - 65536;
	char *cont = malloc(rest); /* the pattern goes on from byte 65536 */
	for (size_t i = 0; i < rest; i++)
		cont[i] = (char)((65536 + i) % 251);
	int f = -1;
	char path[4096];
	if (strcmp(how, "sendfile") == 0) { /* its source is ready before the pipe fills */
		snprintf(path, sizeof(path), "%s/wake_sendfile_src", dir);
		f = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (f < 0)
			die("open");
		write_all(f, cont, rest);
	}
	int p[2];
	if (pipe(p))
		die("pipe");
	fill_pipe(p[1]);
	pid_t pid = child_draining(p[0], p[1]);
	close(p[0]);
	ssize_t n = -1;
	struct iovec iov[2] = { { cont, rest / 3 }, { cont + rest / 3, rest - rest / 3 } };
	if (strcmp(how, "writev") == 0) {
		n = writev(p[1], iov, 2);
	} else if (strcmp(how, "pwritev2") == 0) {
		n = pwritev2(p[1], iov, 2, -1, 0);
	} else if (strcmp(how, "vmsplice") == 0) {
		n = 0;
		while ((size_t)n < rest) {
			struct iovec v = { cont + n, rest - (size_t)n };
			ssize_t k = vmsplice(p[1], &v, 1, 0);
			if (k <= 0)
				die("vmsplice");
			n += k;
		}
	} else if (strcmp(how, "sendfile") == 0) {
		off_t off = 0;
		n = 0;
		while ((size_t)n < rest) {
			ssize_t k = sendfile(p[1], f, &off, rest - (size_t)n);
			if (k <= 0)
				die("sendfile");
			n += k;
		}
		close(f);
		unlink(path);
	}
	if (n != (ssize_t)rest)
		die(how);
	close(p[1]);
	printf("%s into a full pipe: %zd bytes, child %d\n", how, n, reap(pid));
	free(cont);
}

/* sendmsg of BIG bytes on a stream socketpair the child drains. */
static void sendmsg_case(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	pid_t pid = child_draining(sv[1], sv[0]);
	close(sv[1]);
	char *buf = pattern(BIG);
	struct iovec iov[2] = { { buf, BIG / 2 }, { buf + BIG / 2, BIG - BIG / 2 } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n = sendmsg(sv[0], &m, 0);
	if (n != BIG)
		die("sendmsg");
	close(sv[0]);
	printf("sendmsg on a socketpair: %zd bytes, child %d\n", n, reap(pid));
	free(buf);
}

/* recv with MSG_WAITALL of more than one write brings: the child sends in parts. */
static void recv_waitall_case(bool use_recvmsg)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	char *buf = pattern(BIG);
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		settle();
		for (size_t off = 0; off < BIG; off += 10000)
			write_all(sv[1], buf + off, BIG - off < 10000 ? BIG - off : 10000);
		_exit(7);
	}
	close(sv[1]);
	char *got = calloc(1, BIG);
	ssize_t n;
	if (use_recvmsg) {
		struct iovec iov[2] = { { got, BIG / 3 }, { got + BIG / 3, BIG - BIG / 3 } };
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_flags = -1 };
		n = recvmsg(sv[0], &m, MSG_WAITALL);
		if (m.msg_flags != 0)
			die("msg_flags");
	} else {
		n = recv(sv[0], got, BIG, MSG_WAITALL);
	}
	printf("%s MSG_WAITALL: %zd bytes, %s, child %d\n", use_recvmsg ? "recvmsg" : "recv", n,
	       n == BIG && memcmp(buf, got, BIG) == 0 ? "intact" : "CORRUPT", reap(pid));
	free(buf);
	free(got);
}

struct text_msg {
	long type;
	char text[64];
};

static void msg_case(bool send_full)
{
	int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (q < 0)
		die("msgget");
	if (send_full) {
		struct msqid_ds ds;
		msgctl(q, IPC_STAT, &ds);
		ds.msg_qbytes = 64;
		if (msgctl(q, IPC_SET, &ds))
			die("msgctl");
	}
	pid_t pid = fork();
	if (pid == 0) {
		settle();
		struct text_msg m = { 1, "a message" };
		if (send_full) {
			struct text_msg r;
			for (int i = 0; i < 2; i++)
				if (msgrcv(q, &r, sizeof(r.text), 0, 0) < 0)
					_exit(1);
		} else if (msgsnd(q, &m, sizeof(m.text), 0)) {
			_exit(1);
		}
		_exit(7);
	}
	struct text_msg m = { 1, "filling" };
	if (send_full) {
		if (msgsnd(q, &m, 64, 0) || msgsnd(q, &m, 64, 0))
			die("msgsnd");
		printf("msgsnd into a full queue: sent, child %d\n", reap(pid));
	} else {
		if (msgrcv(q, &m, sizeof(m.text), 0, 0) < 0)
			die("msgrcv");
		printf("msgrcv: %s, child %d\n", m.text, reap(pid));
	}
	msgctl(q, IPC_RMID, NULL);
}

static void sem_case(bool timed)
{
	int s = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	if (s < 0)
		die("semget");
	pid_t pid = fork();
	if (pid == 0) {
		settle();
		struct sembuf up = { 0, 2, 0 };
		_exit(semop(s, &up, 1) ? 1 : 7);
	}
	struct sembuf down = { 0, -2, 0 };
	struct timespec ts = { 3600, 0 };
	if (timed ? semtimedop(s, &down, 1, &ts) : semop(s, &down, 1))
		die("semop");
	printf("%s: got it, value %d, child %d\n", timed ? "semtimedop" : "semop",
	       semctl(s, 0, GETVAL), reap(pid));
	semctl(s, 0, IPC_RMID);
}

static void mq_case(bool send_full)
{
	char name[64];
	snprintf(name, sizeof(name), "/wake_mq_%d", (int)getpid());
	struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = 32 };
	mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
	if (q < 0)
		die("mq_open");
	mq_unlink(name);
	pid_t pid = fork();
	if (pid == 0) {
		settle();
		char buf[32] = "a queued message";
		if (send_full)
			_exit(mq_receive(q, buf, sizeof(buf), NULL) < 0 ? 1 : 7);
		_exit(mq_send(q, buf, sizeof(buf), 0) ? 1 : 7);
	}
	char buf[32] = "filling";
	if (send_full) {
		if (mq_send(q, buf, sizeof(buf), 0) || mq_send(q, buf, sizeof(buf), 0))
			die("mq_send");
		printf("mq_send into a full queue: sent, child %d\n", reap(pid));
	} else {
		if (mq_receive(q, buf, sizeof(buf), NULL) < 0)
			die("mq_receive");
		printf("mq_receive: %s, child %d\n", buf, reap(pid));
	}
}

static void fifo_case(const char *dir, bool reader_first)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/wake_fifo", dir);
	if (mkfifo(path, 0600))
		die("mkfifo");
	pid_t pid = fork();
	if (pid == 0) {
		settle();
		int fd = open(path, reader_first ? O_WRONLY : O_RDONLY);
		if (fd < 0)
			_exit(1);
		if (reader_first)
			write_all(fd, "through a fifo", 14);
		else {
			char buf[32] = { 0 };
			if (read(fd, buf, sizeof(buf)) != 14)
				_exit(1);
		}
		_exit(7);
	}
	int fd = open(path, reader_first ? O_RDONLY : O_WRONLY);
	if (fd < 0)
		die("open fifo");
	char buf[32] = { 0 };
	if (reader_first) {
		if (read(fd, buf, sizeof(buf)) != 14)
			die("read fifo");
	} else {
		write_all(fd, "through a fifo", 14);
		strcpy(buf, "written");
	}
	printf("fifo opened for %s first: %s, child %d\n", reader_first ? "reading" : "writing",
	       buf, reap(pid));
	unlink(path);
}

/* Waits nobody ends: the timeouts run out (on the virtual clock under detrun). */
static void timeouts_case(void)
{
	int s = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	struct sembuf down = { 0, -1, 0 };
	struct timespec rel = { 0, 50 * 1000 * 1000 };
	int r = semtimedop(s, &down, 1, &rel);
	int sem_errno = errno;
	semctl(s, 0, IPC_RMID);
	char name[64];
	snprintf(name, sizeof(name), "/wake_mq_t%d", (int)getpid());
	struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = 32 };
	mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
	if (q < 0)
		die("mq_open");
	mq_unlink(name);
	struct timespec abs;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 50 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000)
		abs.tv_sec++, abs.tv_nsec -= 1000000000;
	char buf[32];
	ssize_t n = mq_timedreceive(q, buf, sizeof(buf), NULL, &abs);
	int mq_errno = errno;
	printf("timeouts: semtimedop %d %s, mq_timedreceive %zd %s\n", r, strerror(sem_errno), n,
	       strerror(mq_errno));
}

/* Three blocking connects to a listener with backlog 0, which a child accepts later: the
 * second finds the backlog full and sleeps until the child accepts. */
static void connect_backlog_case(const char *dir)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/wake_sock", dir);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 0))
		die("listen");
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 20; i++) /* under detrun: the parent's turns come first */
			sched_yield();
		int got = 0;
		for (int i = 0; i < 3; i++) {
			int c = accept(l, NULL, NULL);
			char byte;
			if (c >= 0 && read(c, &byte, 1) == 1)
				got++;
		}
		_exit(got == 3 ? 7 : 1);
	}
	close(l);
	for (int i = 0; i < 3; i++) {
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) || write(c, "x", 1) != 1)
			die("connect");
	}
	printf("connect to a full backlog: 3 connections, child %d\n", reap(pid));
	unlink(a.sun_path);
}

/* An AIO poll of an empty pipe, completed when the child writes. */
static void aio_poll_case(void)
{
	aio_context_t ctx = 0;
	if (syscall(SYS_io_setup, 4, &ctx)) {
		printf("aio poll: io_setup: %s\n", strerror(errno)); /* refused by detrun */
		return;
	}
	int p[2];
	if (pipe(p))
		die("pipe");
	struct iocb cb = { .aio_fildes = (uint32_t)p[0],
			   .aio_lio_opcode = IOCB_CMD_POLL,
			   .aio_buf = POLLIN };
	struct iocb *cbs[1] = { &cb };
	if (syscall(SYS_io_submit, ctx, 1, cbs) != 1)
		die("io_submit");
	pid_t pid = child_writing(p[1], "x", -1);
	struct io_event ev;
	if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
		die("io_getevents");
	printf("aio poll: events %#llx, child %d\n", (unsigned long long)ev.res, reap(pid));
	syscall(SYS_io_destroy, ctx);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "splice") == 0 || strcmp(mode, "tee") == 0)
		splice_case(mode[0] == 't');
	else if (!strcmp(mode, "writev") || !strcmp(mode, "pwritev2") ||
		 !strcmp(mode, "vmsplice") || !strcmp(mode, "sendfile"))
		into_full_pipe(mode, dir);
	else if (strcmp(mode, "sendmsg") == 0)
		sendmsg_case();
	else if (strcmp(mode, "msgrcv") == 0 || strcmp(mode, "msgsnd") == 0)
		msg_case(mode[3] == 's');
	else if (strcmp(mode, "semop") == 0 || strcmp(mode, "semtimedop") == 0)
		sem_case(mode[3] == 't');
	else if (strcmp(mode, "mq_receive") == 0 || strcmp(mode, "mq_send") == 0)
		mq_case(mode[3] == 's');
	else if (strcmp(mode, "fifo_read") == 0 || strcmp(mode, "fifo_write") == 0)
		fifo_case(dir, mode[5] == 'r');
	else if (strcmp(mode, "recv_waitall") == 0 || strcmp(mode, "recvmsg_waitall") == 0)
		recv_waitall_case(mode[4] == 'm');
	else if (strcmp(mode, "preadv2") == 0)
		preadv2_case();
	else if (strcmp(mode, "connect_backlog") == 0)
		connect_backlog_case(dir);
	else if (strcmp(mode, "timeouts") == 0)
		timeouts_case();
	else if (strcmp(mode, "aio_poll") == 0)
		aio_poll_case();
	else {
		fprintf(stderr, "usage: wake_sleepers MODE [DIR]\n");
		return 2;
	}
	return 0;
}
