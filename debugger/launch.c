/* Starting to debug: `--gdb[=SPEC]` (serve, wait for gdb to connect), `detrun debug LOG
 * [GDB ARGS]` (serve and start gdb on it, through a pipe), and a re-execution's
 * --gdb-resume=. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debugger/debugger.h"
#include "engine/debugger_hooks.h"
#include "debugger/internal.h"
#include "recorder/fingerprint.h"
#include "recorder/log.h"
#include "vkernel/report.h"

extern char **environ;

/* The debugging session: set up here from the command line, then the server's
 * (server_start), which lends it to the other files' functions it calls. */
static struct dbg_state session = { .mode = MODE_OFF, .conn_fd = -1 };

static void remove_arg(int *argc, char **argv, int i)
{
	memmove(argv + i, argv + i + 1, (size_t)(*argc - i) * sizeof(char *));
	(*argc)--;
}

/* --gdb[=SPEC] among detrun's options (before "--" or the program / log). */
static void take_gdb_option(int *argc, char **argv)
{
	int first = *argc > 1 && !strcmp(argv[1], "replay") ? 2 : 1;
	for (int i = first; i < *argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--gdb") || !strncmp(argv[i], "--gdb=", 6)) {
			listen_start(argv[i][5] ? argv[i] + 6 : NULL);
			session.mode = MODE_LIVE;
			remove_arg(argc, argv, i--);
		} else if (argv[i][0] != '-') {
			break;
		}
	}
}

/* --gdb-resume=FD/MODE/TIME/HITS/NOACK/WARNINGS/REFUSING[/TYPE.ADDR.LEN.OWNER...]
 * [/pPID.SINCE...][/kCHECKPOINT...][/q][/cFD] (travel.c writes it: gdb's points, the processes
 * it follows, its checkpoints; checkpoints.c adds the socket to the server). A parked copy
 * gets it when it is used, with the connection (and the refusing socket) in `fds`. */
void launch_resume(struct dbg_state *dbg, const char *arg, const int *fds, int nfds)
{
	char mode;
	int no_ack, used = 0;
	unsigned long long time, hits;
	unsigned warnings;
	int refusing;
	if (sscanf(arg + 13, "%d/%c/%llu/%llu/%d/%u/%d%n", &dbg->conn_fd, &mode, &time, &hits,
		   &no_ack, &warnings, &refusing, &used) != 7) {
		fprintf(stderr, "detrun: bad --gdb-resume\n");
		exit(125);
	}
	if (fds) {
		dbg->conn_fd = fds[0];
		refusing = nfds > 1 ? fds[1] : -1;
	}
	for (const char *p = arg + 13 + used; *p == '/';
	     p = strchr(p + 1, '/') ? strchr(p + 1, '/') : "") {
		int type, len, owner, fd;
		unsigned long long addr, since;
		if (sscanf(p, "/p%d.%llu", &owner, &since) == 2)
			procs_plan(owner, since);
		else if (sscanf(p, "/c%d", &fd) == 1)
			checkpoints_set_socket(fd, mode == 'P');
		else if (sscanf(p, "/f%d.%d", &fd, &refusing) == 2)
			dbg->conn_fd = fd;
		else if (p[1] == 'k')
			travel_restore_checkpoint(p + 2);
		else if (p[1] == 'q')
			dbg->quiet = true;
		else if (sscanf(p, "/%d.%llx.%d.%d", &type, &addr, &len, &owner) == 4)
			points_restore((enum point_type)type, addr, len, owner);
	}
	if (dbg->conn_fd >= 0)
		fcntl(dbg->conn_fd, F_SETFD, FD_CLOEXEC);
	if (refusing >= 0) {
		fcntl(refusing, F_SETFD, FD_CLOEXEC);
		listen_refuse_others(refusing);
	}
	dbg->mode = mode == 'S' ? MODE_SCAN : MODE_SEEK;
	dbg->goal = (struct position){ time, hits };
	dbg->seek_event = mode == 'E' || mode == 'B' || mode == 'R' || mode == 'P';
	dbg->at_begin = mode == 'B' || mode == 'R';
	dbg->run_begin = mode == 'R';
	dbg->park = mode == 'P';
	dbg->arrived = true;
	report_skip_warnings(warnings); /* the session said them already */
	dbg->connected = true;
	if (no_ack)
		packet_no_ack();
}

static void take_resume(int *argc, char **argv)
{
	if (*argc < 2 || strncmp(argv[1], "--gdb-resume=", 13))
		return;
	launch_resume(&session, argv[1], NULL, 0);
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

/* The command gdb runs as its remote pipe (with sh -c): this detrun, handing the pipe over
 * fd `pair`. The path is quoted for the shell: each ' becomes '\''. */
static void handoff_command(int pair, char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	size_t at = (size_t)snprintf(out, size, "target extended-remote | exec '");
	for (const char *p = self; *p && at + 8 < size; p++) {
		if (*p == '\'')
			at += (size_t)snprintf(out + at, size - at, "'\\''");
		else
			out[at++] = *p;
	}
	snprintf(out + at, size - at, "' --gdb-handoff=%d", pair);
}

/* gdb's checkpoint commands, served by detrun's monitor (debugger/checkpoints.c), as rr
 * defines them in its gdb: gdb's own make the program fork, which a replay cannot. */
static const char gdb_commands[] =
	"set $_detrun_confirm = $_gdb_setting(\"confirm\")\n"
	"set confirm off\n" /* no "Really redefine built-in command?" */
	"define checkpoint\n  monitor checkpoint\nend\n"
	"document checkpoint\nRemember this position; `restart N` goes back to it.\nend\n"
	"define restart\n  monitor restart $arg0\n  continue\nend\n"
	"document restart\nGo to checkpoint N.\nend\n"
	"define info checkpoints\n  monitor checkpoints\nend\n"
	"define delete checkpoint\n  monitor delete-checkpoint $arg0\nend\n"
	/* gdb keeps each watchpoint's last value to show as the next hit's "Old value". A
	 * stop where the replay went back (or anywhere by running again: reverse-continue,
	 * monitor goto, restart) leaves it stale: enabling a watchpoint again reads it anew. */
	"python\n"
	"def _detrun_arrived(event):\n"
	"    try:\n"
	"        if 'received: \"1\"' not in gdb.execute('maint packet qDetrunArrived',\n"
	"                                               to_string=True):\n"
	"            return\n"
	"    except gdb.error:\n"
	"        return\n"
	"    for b in gdb.breakpoints():\n"
	"        if b.enabled and b.type in (gdb.BP_WATCHPOINT, gdb.BP_HARDWARE_WATCHPOINT,\n"
	"                                    gdb.BP_READ_WATCHPOINT, gdb.BP_ACCESS_WATCHPOINT):\n"
	"            b.enabled = False\n"
	"            b.enabled = True\n"
	"gdb.events.stop.connect(_detrun_arrived)\n"
	"end\n"
	"if $_detrun_confirm\n  set confirm on\nend\n";

/* The commands above as a file gdb reads (-x): a memory file it inherits. */
static const char *gdb_command_file(void)
{
	static char path[64];
	int fd = memfd_create("detrun-gdb-commands", 0);
	if (fd < 0 || write(fd, gdb_commands, sizeof(gdb_commands) - 1) < 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path;
}

static __attribute__((noreturn)) void exec_gdb(const char *program, int pair, int n_args,
					       char **args)
{
	static char target[3 * PATH_MAX];
	handoff_command(pair, target, sizeof(target));
	fcntl(pair, F_SETFD, 0); /* gdb keeps the descriptors it starts with for its pipe */
	char **argv = calloc((size_t)n_args + 16, sizeof(char *));
	int n = 0;
	const char *gdb = getenv("DETRUN_GDB") ? getenv("DETRUN_GDB") : "gdb";
	/* Every process of the group runs whatever gdb resumes (the schedule is the
	 * recording's): gdb must expect stops in all of them, not in its current one only. */
	const char *fixed[] = { gdb, "-q", "-ex", "set sysroot /", "-ex", "set pagination off",
				"-ex", "set schedule-multiple on", "-ex",
				"alias when = monitor when", /* rr's command */
				/* a call refused (debugger/calls.c) returns at once */
				"-ex", "set unwindonsignal on",
				/* detrun answers gdb's first packet at the program's first stop,
				 * seconds away on a busy machine: at gdb's default of 2 s it gave
				 * up on qSupported and the session began out of step ("Remote
				 * replied unexpectedly to 'vMustReplyEmpty'") */
				"-ex", "set remotetimeout 120" };
	for (size_t i = 0; argv && i < sizeof(fixed) / sizeof(fixed[0]); i++)
		argv[n++] = (char *)fixed[i];
	const char *commands = gdb_command_file();
	if (argv && commands) {
		argv[n++] = "-x";
		argv[n++] = (char *)commands;
	}
	if (argv) {
		argv[n++] = "-ex";
		argv[n++] = target;
	}
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
 * this process, with gdb's status: nothing is left running. The server waits for gdb's
 * pipe on a socket pair: when gdb ends before handing it over, the pair reads its end.
 * Returns in the server. */
static void start_gdb(const char *program, int pair, int n_args, char **args)
{
	pid_t server = fork();
	if (server == 0) {
		setpgid(0, 0);
		close(pair);
		return;
	}
	pid_t gdb = server > 0 ? fork() : -1;
	if (gdb == 0) {
		listen_close();
		exec_gdb(program, pair, n_args, args);
	}
	if (server < 0 || gdb < 0) {
		fprintf(stderr, "detrun: cannot fork: %s\n", strerror(errno));
		exit(125);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	listen_close();
	close(pair);
	int status = 0;
	while (waitpid(gdb, &status, 0) < 0 && errno == EINTR)
		;
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
	if (*argc >= 3 && (!strcmp(av[2], "--help") || !strcmp(av[2], "-h"))) {
		fputs("usage: detrun debug LOG [GDB ARGS...]\n\n"
		      "Replays LOG under gdb, forwards and back (reverse-continue, reverse-step,\n"
		      "watchpoints, checkpoint/restart N, run). GDB ARGS go to gdb as they are\n"
		      "(e.g. -batch -x FILE). The replay runs on a private view of the recording's\n"
		      "starting files: your files are left as they are.\n",
		      stdout);
		exit(0);
	}
	if (*argc < 3 || av[2][0] == '-') {
		fprintf(stderr,
			"detrun: debug takes a LOG (usage: detrun debug LOG [GDB ARGS...])\n");
		exit(125);
	}
	check_gdb();
	const char *program = recorded_program(av[2]);
	session.mode = MODE_LIVE;
	start_gdb(program, listen_pair(), *argc - 3, av + 3);
	static char *replay[4];
	replay[0] = av[0];
	replay[1] = "replay";
	replay[2] = av[2];
	*argv = replay;
	*argc = 3;
}

/* --gdb-handoff=FD: this is gdb's remote pipe command (see exec_gdb). */
static void take_handoff(int argc, char **argv)
{
	if (argc == 2 && !strncmp(argv[1], "--gdb-handoff=", 14))
		listen_hand_over(atoi(argv[1] + 14));
}

bool debugger_init(int *argc, char ***argv)
{
	take_handoff(*argc, *argv);
	/* What this run was asked, kept for a scan that must start earlier (travel.c). */
	char *resume = *argc > 1 && !strncmp((*argv)[1], "--gdb-resume=", 13) ? (*argv)[1] : NULL;
	char *job = resume && *argc > 2 && !strncmp((*argv)[2], "--gdb-step=", 11) ? (*argv)[2]
										   : "";
	take_resume(argc, *argv);
	stepback_take_arg(argc, *argv);
	if (resume)
		travel_set_origin(resume, job, 0);
	take_debug(argc, argv);
	take_gdb_option(argc, *argv);
	if (session.mode == MODE_OFF)
		return false;
	travel_save_invocation(*argc, *argv, environ);
	server_start(&session);
	return true;
}
