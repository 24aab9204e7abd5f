/* Starting to debug: `--gdb[=PORT]` (serve, wait for gdb to connect), `detrun debug LOG
 * [GDB ARGS]` (serve and start gdb on it), and a re-execution's --gdb-resume=. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/debugger_hooks.h"
#include "debugger/internal.h"
#include "recorder/fingerprint.h"
#include "recorder/log.h"

extern char **environ;

/* Listens on 127.0.0.1:port (0: any free port); returns the port or exits. */
static int listen_on(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int one = 1; /* a port still in TIME_WAIT from the last session is free */
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		fprintf(stderr, "detrun: cannot serve gdb on port %d: %s\n", port, strerror(errno));
		exit(125);
	}
	dbg.listen_fd = fd;
	dbg.mode = MODE_LIVE;
	return ntohs(a.sin_port);
}

static int parse_port(const char *arg)
{
	if (!strcmp(arg, "--gdb"))
		return 0;
	char *end;
	long port = strtol(arg + 6, &end, 10);
	if (end == arg + 6 || *end || port < 1 || port > 65535) {
		fprintf(stderr, "detrun: --gdb=PORT takes a port 1..65535, not '%s'\n", arg + 6);
		exit(125);
	}
	return (int)port;
}

static void remove_arg(int *argc, char **argv, int i)
{
	memmove(argv + i, argv + i + 1, (size_t)(*argc - i) * sizeof(char *));
	(*argc)--;
}

/* --gdb[=PORT] among detrun's options (before "--" or the program / log). */
static void take_gdb_option(int *argc, char **argv)
{
	int first = *argc > 1 && !strcmp(argv[1], "replay") ? 2 : 1;
	for (int i = first; i < *argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--gdb") || !strncmp(argv[i], "--gdb=", 6)) {
			dbg.announce_port = listen_on(parse_port(argv[i]));
			remove_arg(argc, argv, i--);
		} else if (argv[i][0] != '-') {
			break;
		}
	}
}

/* --gdb-resume=FD/MODE/TIME/HITS/NOACK[/TYPE.ADDR.LEN...] (travel.c writes it). */
static void take_resume(int *argc, char **argv)
{
	if (*argc < 2 || strncmp(argv[1], "--gdb-resume=", 13))
		return;
	char mode;
	int no_ack, used = 0;
	unsigned long long time, hits;
	if (sscanf(argv[1] + 13, "%d/%c/%llu/%llu/%d%n", &dbg.conn_fd, &mode, &time, &hits, &no_ack,
		   &used) != 5) {
		fprintf(stderr, "detrun: bad --gdb-resume\n");
		exit(125);
	}
	for (const char *p = argv[1] + 13 + used; *p == '/';
	     p = strchr(p + 1, '/') ? strchr(p + 1, '/') : "") {
		int type, len;
		unsigned long long addr;
		if (sscanf(p, "/%d.%llx.%d", &type, &addr, &len) == 3)
			points_restore((enum point_type)type, addr, len);
	}
	fcntl(dbg.conn_fd, F_SETFD, FD_CLOEXEC);
	dbg.mode = mode == 'S' ? MODE_SCAN : MODE_SEEK;
	dbg.goal = (struct position){ time, hits };
	dbg.seek_event = mode == 'E' || mode == 'B';
	dbg.at_begin = mode == 'B';
	dbg.connected = true;
	if (no_ack)
		packet_no_ack();
	remove_arg(argc, argv, 1);
}

/* The recorded program, for gdb's symbols: the very one (replay says so too, but gdb
 * would be started by then). */
static const char *recorded_program(const char *log_path)
{
	static struct log log;
	char err[512];
	if (log_load(log_path, &log, err, sizeof(err))) {
		fprintf(stderr, "detrun: %s\n", err);
		exit(125);
	}
	const Detrun__Log__Header *h = log.header;
	int fd = open(h->program, O_RDONLY | O_CLOEXEC);
	uint64_t hash = 0, size = 0;
	if (fd < 0 || fingerprint_fd(fd, &hash, &size) || hash != h->program_hash ||
	    size != h->program_size) {
		fprintf(stderr, "detrun: cannot debug %s: %s is %s\n", log_path, h->program,
			fd < 0 ? strerror(errno) : "not the recorded program (it differs)");
		exit(125);
	}
	close(fd);
	return h->program;
}

static __attribute__((noreturn)) void exec_gdb(const char *program, int port, int n_args,
					       char **args)
{
	char target[64];
	snprintf(target, sizeof(target), "target extended-remote 127.0.0.1:%d", port);
	char **argv = calloc((size_t)n_args + 14, sizeof(char *));
	int n = 0;
	const char *gdb = getenv("DETRUN_GDB") ? getenv("DETRUN_GDB") : "gdb";
	/* Every process of the group runs whatever gdb resumes (the schedule is the
	 * recording's): gdb must expect stops in all of them, not in its current one only. */
	const char *fixed[] = { gdb,   "-q",
				"-ex", "set sysroot /",
				"-ex", "set pagination off",
				"-ex", "set schedule-multiple on",
				"-ex", target };
	for (size_t i = 0; argv && i < sizeof(fixed) / sizeof(fixed[0]); i++)
		argv[n++] = (char *)fixed[i];
	for (int i = 0; argv && i < n_args; i++)
		argv[n++] = args[i];
	if (argv) {
		argv[n++] = (char *)program;
		execvp(gdb, argv);
	}
	fprintf(stderr, "detrun: cannot run %s: %s (Debian: apt-get install gdb)\n", gdb,
		strerror(errno));
	_exit(127);
}

/* A server still waiting for a gdb that never came learns it from a connection closed at
 * once: it then ends like any server whose gdb went away. */
static void knock(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (fd >= 0)
		connect(fd, (struct sockaddr *)&a, sizeof(a));
	if (fd >= 0)
		close(fd);
}

/* Is gdb there? Said before anything starts, in one line. */
static void check_gdb(void)
{
	const char *gdb = getenv("DETRUN_GDB") ? getenv("DETRUN_GDB") : "gdb";
	if (strchr(gdb, '/')) {
		if (access(gdb, X_OK) == 0)
			return;
	} else {
		char path[PATH_MAX];
		const char *dirs = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
		for (const char *d = dirs; *d; d += strcspn(d, ":") + (d[strcspn(d, ":")] == ':')) {
			snprintf(path, sizeof(path), "%.*s/%s", (int)strcspn(d, ":"), d, gdb);
			if (access(path, X_OK) == 0)
				return;
		}
	}
	fprintf(stderr, "detrun: cannot run %s: not found (Debian: apt-get install gdb)\n", gdb);
	exit(127);
}

/* This process waits for two children: gdb (in the terminal's foreground, as this
 * process was) and the server (in a process group of its own, so that Ctrl-C reaches gdb
 * only: gdb passes it on as an interrupt). When gdb ends, the server ends too, and then
 * this process, with gdb's status: nothing is left running. Returns in the server. */
static void start_gdb(const char *program, int port, int n_args, char **args)
{
	pid_t server = fork();
	if (server == 0) {
		setpgid(0, 0);
		return;
	}
	pid_t gdb = server > 0 ? fork() : -1;
	if (gdb == 0) {
		close(dbg.listen_fd);
		exec_gdb(program, port, n_args, args);
	}
	if (server < 0 || gdb < 0) {
		fprintf(stderr, "detrun: cannot fork: %s\n", strerror(errno));
		exit(125);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	close(dbg.listen_fd);
	int status = 0;
	while (waitpid(gdb, &status, 0) < 0 && errno == EINTR)
		;
	knock(port);
	while (waitpid(server, NULL, 0) < 0 && errno == EINTR)
		;
	exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* detrun debug LOG [GDB ARGS...]: becomes `detrun replay LOG` with gdb attached. */
static void take_debug(int *argc, char ***argv)
{
	char **av = *argv;
	if (*argc < 2 || strcmp(av[1], "debug"))
		return;
	if (*argc < 3 || av[2][0] == '-') {
		fprintf(stderr,
			"detrun: debug takes a LOG (usage: detrun debug LOG [GDB ARGS...])\n");
		exit(125);
	}
	check_gdb();
	const char *program = recorded_program(av[2]);
	int port = listen_on(0);
	start_gdb(program, port, *argc - 3, av + 3);
	static char *replay[4];
	replay[0] = av[0];
	replay[1] = "replay";
	replay[2] = av[2];
	*argv = replay;
	*argc = 3;
}

void debugger_init(int *argc, char ***argv)
{
	take_resume(argc, *argv);
	stepback_take_arg(argc, *argv);
	take_debug(argc, argv);
	take_gdb_option(argc, *argv);
	if (dbg.mode != MODE_OFF)
		travel_save_invocation(*argc, *argv, environ);
}
