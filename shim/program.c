/* A shim in another process, in any language: detrun starts it with one end of a stream
 * socket as its descriptor 3 and speaks proto/shim.proto over it. In monitor mode the shim
 * is told each external call after it ran; in control mode each call waits for the shim's
 * verdict: run as it is, or return this instead. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/shim.pb-c.h"
#include "shim/shim.h"
#include "syscalls/syscall_table.h"

#define SHIM_PROTOCOL_VERSION 1
#define SHIM_MESSAGE_MAX (16u << 20)

static int sock = -1;
static pid_t shim_pid;
static const char *shim_command;

/* Waits until the shim's socket is ready for `events`. A shim that never answers (or
 * never reads) is no reason to hang: an ending signal sent to detrun (SIGTERM, SIGINT, ...)
 * ends the run here, the group and the shim killed, with the status of a run that signal
 * ended (128 + N, as when the program dies of it, which is what the signal would have
 * done to a program without a handler). */
static void wait_for_shim(short events)
{
	const struct shim_outside *o = shim_outside();
	for (;;) {
		struct pollfd p[2] = { { sock, events, 0 }, { o ? o->signal_fd : -1, POLLIN, 0 } };
		int r = poll(p, 2, -1);
		int sig = r > 0 && p[1].revents ? o->end_requested() : 0;
		if (sig) {
			fprintf(stderr,
				"detrun: %s while waiting for shim '%s': the group and the shim "
				"are killed\n",
				strsignal(sig), shim_command);
			o->end_run(128 + sig);
		}
		if ((r < 0 && errno != EINTR) || (r > 0 && p[0].revents))
			return; /* ready, or the send or read that follows says what is wrong */
	}
}

static void send_message(const Detrun__Shim__ShimMessage *m)
{
	size_t len = detrun__shim__shim_message__get_packed_size(m);
	uint8_t *buf = malloc(len + 4);
	if (!buf)
		abort();
	for (int i = 0; i < 4; i++)
		buf[i] = (uint8_t)(len >> (8 * i));
	detrun__shim__shim_message__pack(m, buf + 4);
	size_t done = 0;
	while (done < len + 4) {
		wait_for_shim(POLLOUT);
		/* MSG_NOSIGNAL: a shim that is gone is an error to report, not a SIGPIPE. */
		ssize_t n = send(sock, buf + done, len + 4 - done, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			free(buf);
			shim_abort(NULL, "shim '%s' stopped listening: %s", shim_command,
				   n < 0 ? strerror(errno) : "closed");
		}
		done += (size_t)n;
	}
	free(buf);
}

static void receive_exactly(uint8_t *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		wait_for_shim(POLLIN);
		ssize_t n = read(sock, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			shim_abort(NULL, "shim '%s' closed its socket without a verdict%s%s",
				   shim_command, n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
		done += (size_t)n;
	}
}

static Detrun__Shim__Verdict *receive_verdict(Detrun__Shim__ShimMessage **holder)
{
	uint8_t head[4];
	receive_exactly(head, 4);
	uint32_t len = (uint32_t)head[0] | (uint32_t)head[1] << 8 | (uint32_t)head[2] << 16 |
		       (uint32_t)head[3] << 24;
	if (len > SHIM_MESSAGE_MAX)
		shim_abort(NULL, "shim '%s' sent a message of %u bytes (at most %u)", shim_command,
			   len, SHIM_MESSAGE_MAX);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	receive_exactly(buf, len);
	*holder = detrun__shim__shim_message__unpack(NULL, len, buf);
	free(buf);
	if (!*holder || (*holder)->kind_case != DETRUN__SHIM__SHIM_MESSAGE__KIND_VERDICT)
		shim_abort(NULL, "shim '%s' answered with something other than a Verdict",
			   shim_command);
	return (*holder)->verdict;
}

static void fill_call(Detrun__Shim__Call *call, const struct shim_call *c, uint64_t *args)
{
	call->time = c->time;
	call->task = (uint32_t)c->vtid;
	call->syscall = (char *)syscall_name(c->nr);
	call->nr = (uint32_t)c->nr;
	call->fd = c->fd;
	for (int i = 0; i < 6; i++)
		args[i] = c->args[i];
	call->n_args = 6;
	call->args = args;
}

static void send_call(Detrun__Shim__Call *call)
{
	Detrun__Shim__ShimMessage m = DETRUN__SHIM__SHIM_MESSAGE__INIT;
	m.kind_case = DETRUN__SHIM__SHIM_MESSAGE__KIND_CALL;
	m.call = call;
	send_message(&m);
}

static void program_monitor(const struct shim_call *c)
{
	Detrun__Shim__Call call = DETRUN__SHIM__CALL__INIT;
	uint64_t args[6];
	fill_call(&call, c, args);
	call.done = true;
	call.ret = c->ret;
	size_t total = 0;
	for (size_t i = 0; i < c->n_out; i++)
		total += c->out[i].data ? c->out[i].len : 0;
	uint8_t *data = malloc(total + c->sent_len + 1);
	if (!data)
		abort();
	size_t n = 0;
	for (size_t i = 0; i < c->n_out; i++)
		if (c->out[i].data && c->out[i].len) {
			memcpy(data + n, c->out[i].bytes, c->out[i].len);
			n += c->out[i].len;
		}
	if (c->sent_len)
		memcpy(data + n, c->sent, c->sent_len), n += c->sent_len;
	call.data = (ProtobufCBinaryData){ n, data };
	send_call(&call);
	free(data);
}

/* The verdict's bytes go into the call's data regions in order; its result is the shim's. */
static bool program_control(struct shim_call *c)
{
	Detrun__Shim__Call call = DETRUN__SHIM__CALL__INIT;
	uint64_t args[6];
	fill_call(&call, c, args);
	send_call(&call);
	Detrun__Shim__ShimMessage *holder;
	Detrun__Shim__Verdict *v = receive_verdict(&holder);
	if (v->run) {
		detrun__shim__shim_message__free_unpacked(holder, NULL);
		return false;
	}
	static uint8_t *kept; /* the bytes stay valid until the supervisor has written them */
	free(kept);
	kept = malloc(v->data.len + 1);
	if (!kept)
		abort();
	memcpy(kept, v->data.data, v->data.len);
	size_t used = 0;
	for (size_t i = 0; i < c->n_out; i++) {
		c->out[i].len = 0;
		if (!c->out[i].data || used == v->data.len)
			continue;
		size_t take = v->data.len - used;
		if (take > c->out[i].max)
			take = c->out[i].max;
		c->out[i].bytes = kept + used;
		c->out[i].len = take;
		used += take;
	}
	c->ret = v->ret;
	detrun__shim__shim_message__free_unpacked(holder, NULL);
	return true;
}

/* While the group waits for the outside, so does detrun — and a shim never speaks unasked,
 * so its socket turning readable means it is gone: the run ends instead of waiting on. */
static int program_wait_outside(uint64_t time, struct pollfd *fds, int nfds, int timeout_ms,
				int (*real_wait)(struct pollfd *, int, int))
{
	struct pollfd all[257];
	int n = 0;
	for (int i = 0; i < nfds && n < 256; i++)
		all[n++] = fds[i];
	all[n++] = (struct pollfd){ sock, POLLIN, 0 };
	int r = real_wait(all, n, timeout_ms);
	if (r > 0 && all[n - 1].revents)
		shim_abort(NULL,
			   "shim '%s' closed its socket while the group waited for outside "
			   "input (t=%llu)",
			   shim_command, (unsigned long long)time);
	for (int i = 0; i < n - 1; i++)
		fds[i].revents = all[i].revents;
	return r;
}

static pid_t detrun_pid;
static bool shim_reaped;

/* The shim and whatever it started form a process group of their own, which never
 * outlives detrun: however detrun exits, the group is killed and the shim reaped. */
static void end_shim(void)
{
	if (shim_reaped || getpid() != detrun_pid)
		return;
	shim_reaped = true;
	kill(-shim_pid, SIGKILL);
	while (waitpid(shim_pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* The shim gets a Bye and a few seconds to finish. One that exits without having read
 * everything (its socket reset) or exits non-zero is reported: it may have missed calls. */
static int program_finish(uint64_t time, int code)
{
	Detrun__Shim__Bye bye = DETRUN__SHIM__BYE__INIT;
	bye.exit_code = code;
	Detrun__Shim__ShimMessage m = DETRUN__SHIM__SHIM_MESSAGE__INIT;
	m.kind_case = DETRUN__SHIM__SHIM_MESSAGE__KIND_BYE;
	m.bye = &bye;
	send_message(&m);
	shutdown(sock, SHUT_WR);
	int pidfd = (int)syscall(SYS_pidfd_open, shim_pid, 0);
	struct pollfd p = { pidfd, POLLIN, 0 };
	if (pidfd >= 0 && poll(&p, 1, 5000) <= 0)
		fprintf(stderr, "detrun: shim '%s' did not exit after the run: killed\n",
			shim_command);
	if (pidfd >= 0)
		close(pidfd);
	char byte;
	if (recv(sock, &byte, 1, MSG_DONTWAIT) < 0 && errno == ECONNRESET)
		fprintf(stderr,
			"detrun: warning: shim '%s' exited without reading all detrun "
			"sent it\n",
			shim_command);
	close(sock);
	int status;
	pid_t got = -1;
	if (!shim_reaped)
		while ((got = waitpid(shim_pid, &status, WNOHANG)) < 0 && errno == EINTR)
			;
	if (got == shim_pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		fprintf(stderr, "detrun: warning: shim '%s' %s %d\n", shim_command,
			WIFEXITED(status) ? "exited with status" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	if (got == shim_pid)
		shim_reaped = true;
	end_shim();
	return code;
}

static const struct shim_ops program_shim = {
	.name = "program",
	.monitor = program_monitor,
	.wait_outside = program_wait_outside,
	.finish = program_finish,
};

static const struct shim_ops program_control_shim = {
	.name = "program (control)",
	.control = program_control,
	.wait_outside = program_wait_outside,
	.finish = program_finish,
};

int program_shim_start(const char *command, bool control, char **argv)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		fprintf(stderr, "detrun: cannot start shim '%s': %s\n", command, strerror(errno));
		return -1;
	}
	pid_t parent = getpid();
	shim_pid = fork();
	if (shim_pid < 0) {
		fprintf(stderr, "detrun: cannot start shim '%s': %s\n", command, strerror(errno));
		return -1;
	}
	if (shim_pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(125);
		if (dup2(sv[1], 3) < 0)
			_exit(125);
		setenv("DETRUN_SHIM_FD", "3", 1);
		execl("/bin/sh", "sh", "-c", command, (char *)NULL);
		_exit(127);
	}
	setpgid(shim_pid, shim_pid); /* as the child does: whichever runs first */
	close(sv[1]);
	sock = sv[0];
	shim_command = command;
	detrun_pid = parent;
	atexit(end_shim);
	Detrun__Shim__Hello hello = DETRUN__SHIM__HELLO__INIT;
	hello.protocol_version = SHIM_PROTOCOL_VERSION;
	hello.mode = control ? DETRUN__SHIM__MODE__CONTROL : DETRUN__SHIM__MODE__MONITOR;
	for (hello.n_argv = 0; argv[hello.n_argv]; hello.n_argv++)
		;
	hello.argv = argv;
	Detrun__Shim__ShimMessage m = DETRUN__SHIM__SHIM_MESSAGE__INIT;
	m.kind_case = DETRUN__SHIM__SHIM_MESSAGE__KIND_HELLO;
	m.hello = &hello;
	shim_set(control ? &program_control_shim : &program_shim);
	send_message(&m);
	return 0;
}
