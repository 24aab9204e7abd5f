/* detrun — run a program as a deterministic process group; record, replay, inspect logs. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/replay_stdio.h"
#include "debugger/debugger.h"
#include "recorder/file_image.h"
#include "recorder/fingerprint.h"
#include "recorder/header_options.h"
#include "recorder/log.h"
#include "recorder/log_print.h"
#include "shim/shim.h"
#include "engine/file_view.h"
#include "engine/launch.h"
#include "vkernel/report.h"
#include "handlers/sys_common.h"
#include "handlers/binding.h"
#include "handlers/sys_external.h"
#include "replicate/replicate.h"
#include "engine/tracer.h"

static const char usage[] =
	"usage: detrun [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"       detrun record -o LOG [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"       detrun replay [--trace] [--trace-file FILE] [--in-place] LOG\n"
	"       detrun replicate --cluster URLS --group NAME [--node ID] [--] PROGRAM [ARGS...]\n"
	"       detrun log [--json | --stats] LOG\n"
	"       detrun debug LOG [GDB ARGS...]\n"
	"\n"
	"Runs PROGRAM, with every thread and process it starts, as a deterministic process\n"
	"group: the same inputs give the same outputs, byte for byte, on every run.\n"
	"\n"
	"  record   run PROGRAM and write what reached it from outside (network, terminal,\n"
	"           pipes from outside, signals sent to detrun) with its logical time to LOG\n"
	"  replay   run the recorded program again, offline, feeding it LOG instead of the\n"
	"           outside: same output, same files, same exit status; stops at the first\n"
	"           difference and says where. The group starts from the recording's\n"
	"           starting files (the before-images in LOG of the files it changed), on a\n"
	"           private view that is thrown away: your files are left as they are.\n"
	"           --in-place: put those files back for real instead and replay on them,\n"
	"           so they end as the recording left them\n"
	"  log      list LOG: logical time, task, syscall, bytes (--json: one JSON object a\n"
	"           line; --stats: totals and log bytes per byte of outside input)\n"
	"  debug    replay LOG under gdb, which talks to detrun through a pipe (nothing\n"
	"           listens)\n"
	"\n"
	"options (run and record):\n"
	"  -t, --trace            print every event (logical time, task, syscall) to stderr\n"
	"      --trace-file FILE  write the --trace lines to FILE instead (implies --trace);\n"
	"                         in a plain run -o FILE means the same (replay: --trace-file)\n"
	"  -q, --quantum N        events a task may run before the next task's turn (default\n"
	"                         64; a call whose wait is over at once does not end it)\n"
	"  -s, --seed N           seed of the random numbers the group sees (default 0)\n"
	"  -e, --epoch SECONDS    wall-clock time at start, in seconds since 1970\n"
	"                         (default 1893456000, 2030-01-01: later than the files\n"
	"                         a run starts with, so none looks newer than \"now\")\n"
	"      --spin-budget MS   run time without an event before the spin detector looks\n"
	"                         at a task (default 10)\n"
	"      --cpus N           CPUs the program sees: sysconf, sched_getaffinity,\n"
	"                         /proc/cpuinfo, /sys/devices/system/cpu (default 1)\n"
	"  -j, --jobs N           processes that run at once, 1..64 (default: DETRUN_JOBS\n"
	"                         from the environment, else 1: one task at a time);\n"
	"                         a replay runs with the recording's; above 1, idle CPUs\n"
	"                         poll while the group runs (DETRUN_IDLE_POLL=0: they sleep)\n"
	"      --page-owner       with --jobs above 1, processes that share anonymous or memfd\n"
	"                         memory run apart, pages moving between them at ordered\n"
	"                         faults (default: they run as one; DETRUN_PAGE_OWNER=1);\n"
	"                         opt-in until the whole test suite has run with it\n"
	"      --no-namespaces    do not create PID, mount and UTS namespaces: pids, the\n"
	"                         hostname and /proc are then the host's, and the virtual\n"
	"                         /proc files and /sys absent (detrun refuses the opens\n"
	"                         of other processes' /proc/PID files, which the kernel\n"
	"                         would allow as for any program of the user)\n"
	"      --clock MODE       virtual (default): every clock follows the logical timeline;\n"
	"                         real: wall-clock reads (CLOCK_REALTIME, gettimeofday, time)\n"
	"                         give the real time, as outside input that record logs\n"
	"      --keep-vdso        leave the kernel's vDSO in place of detrun's: clock reads\n"
	"                         then read the host's clock and are not deterministic\n"
	"      --shim COMMAND     route every external call to the shim program COMMAND (run\n"
	"                         with sh -c; protocol: proto/shim.proto) — not with record\n"
	"      --shim-mode MODE   monitor (default: calls run, the shim sees results) or\n"
	"                         control (the shim decides each call's result)\n"
	"      --gdb[=WHERE]      serve gdb (run and replay), stopped at the program's first\n"
	"                         event: on a unix socket in a new private directory\n"
	"                         (default), unix:PATH, or tcp:PORT (127.0.0.1; any local\n"
	"                         user can connect, a warning says so); a peer of another\n"
	"                         uid is refused\n"
	"  -h, --help             show this help\n"
	"  -V, --version          show the version\n"
	"\n"
	"The run ends when every process of the group has. When PROGRAM itself has exited and\n"
	"what it left behind can never run again (blocked for ever), detrun ends those tasks,\n"
	"names them on stderr and exits with PROGRAM's status. PROGRAM runs in a process group\n"
	"of its own (in the terminal's foreground when detrun is); signals sent to detrun are\n"
	"passed on to it, and a second request to end (SIGINT, SIGTERM, ...) kills the group.\n"
	"\n"
	"Exit status: PROGRAM's exit status, 128+N if it was killed by signal N, 127 if it\n"
	"cannot be found, 126 if it cannot be executed, 125 for detrun's own errors (a bad\n"
	"option, an unreadable or corrupt log, a replay that diverged).\n";

static __attribute__((noreturn)) void usage_error(const char *fmt, const char *what)
{
	fprintf(stderr, "detrun: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, " (try 'detrun --help')\n");
	exit(125);
}

static long parse_number(const char *opt, const char *text, long min, long max)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 0);
	if (errno || *end || end == text || v < min || v > max) {
		fprintf(stderr, "detrun: invalid value for %s: '%s' (expected %ld..%ld)\n", opt,
			text, min, max);
		exit(125);
	}
	return v;
}

/* An option that takes one of two words: false for `first`, true for `second`. */
static bool parse_choice(const char *opt, const char *text, const char *first, const char *second)
{
	if (strcmp(text, first) && strcmp(text, second)) {
		fprintf(stderr, "detrun: %s is %s or %s, not '%s' (try 'detrun --help')\n", opt,
			first, second, text);
		exit(125);
	}
	return !strcmp(text, second);
}

static void open_trace_file(const char *path)
{
	if (!path)
		return;
	report_trace = true;
	report_trace_out = fopen(path, "we");
	if (!report_trace_out) {
		fprintf(stderr, "detrun: cannot open %s: %s\n", path, strerror(errno));
		exit(125);
	}
	setvbuf(report_trace_out, NULL, _IOFBF, 1 << 16);
}

enum {
	OPT_SPIN_BUDGET = 1000,
	OPT_CLOCK,
	OPT_KEEP_VDSO,
	OPT_PAGE_OWNER,
	OPT_CPUS,
	OPT_NO_NAMESPACES,
	OPT_TRACE_FILE,
	OPT_SHIM,
	OPT_SHIM_MODE,
	OPT_JSON,
	OPT_STATS,
	OPT_IN_PLACE
};

struct command_line {
	struct tracer_options opt;
	const char *log_path; /* record: -o */
	const char *shim;     /* --shim */
	bool shim_control;
	bool json, stats;       /* log */
	bool in_place;          /* replay --in-place */
	const char *run_option; /* the first option that shapes a run (replay takes the log's) */
	const char *trace_path; /* --trace-file: opened once the command line is known good */
};

/* Options of every subcommand; `record` gives -o its own meaning, and commands that read
 * a log refuse it (a trace file there could overwrite the log). Returns optind. */
static const struct option longopts[] = {
	{ "trace", no_argument, NULL, 't' },
	{ "verbose", no_argument, NULL, 't' },
	{ "trace-file", required_argument, NULL, OPT_TRACE_FILE },
	{ "output", required_argument, NULL, 'o' },
	{ "quantum", required_argument, NULL, 'q' },
	{ "seed", required_argument, NULL, 's' },
	{ "epoch", required_argument, NULL, 'e' },
	{ "spin-budget", required_argument, NULL, OPT_SPIN_BUDGET },
	{ "clock", required_argument, NULL, OPT_CLOCK },
	{ "keep-vdso", no_argument, NULL, OPT_KEEP_VDSO },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "jobs", required_argument, NULL, 'j' },
	{ "page-owner", no_argument, NULL, OPT_PAGE_OWNER },
	{ "no-namespaces", no_argument, NULL, OPT_NO_NAMESPACES },
	{ "shim", required_argument, NULL, OPT_SHIM },
	{ "shim-mode", required_argument, NULL, OPT_SHIM_MODE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "in-place", no_argument, NULL, OPT_IN_PLACE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 },
};

/* An option that shapes the run itself (a replay takes these from its log). False: c is
 * not one of them. */
static bool apply_run_option(int c, struct command_line *cl)
{
	struct tracer_options *opt = &cl->opt;
	switch (c) {
	case 'q':
		opt->quantum = (int)parse_number("--quantum", optarg, 1, 1000000);
		return true;
	case 's':
		opt->seed = (uint64_t)parse_number("--seed", optarg, LONG_MIN, LONG_MAX);
		return true;
	case 'e':
		opt->epoch = parse_number("--epoch", optarg, 0, 1L << 40);
		return true;
	case OPT_SPIN_BUDGET:
		opt->spin_budget_ms = (int)parse_number("--spin-budget", optarg, 1, 60000);
		return true;
	case OPT_CLOCK:
		opt->real_clock = parse_choice("--clock", optarg, "virtual", "real");
		return true;
	case OPT_KEEP_VDSO:
		opt->keep_vdso = true;
		return true;
	case OPT_CPUS:
		opt->cpus = (int)parse_number("--cpus", optarg, 1, 64);
		return true;
	case 'j':
		opt->jobs = (int)parse_number("--jobs", optarg, 1, 64);
		return true;
	case OPT_PAGE_OWNER:
		opt->page_owner = true;
		return true;
	case OPT_NO_NAMESPACES:
		opt->namespaces = false;
		return true;
	case OPT_SHIM:
		cl->shim = optarg;
		return true;
	case OPT_SHIM_MODE:
		cl->shim_control = parse_choice("--shim-mode", optarg, "monitor", "control");
		return true;
	default:
		return false;
	}
}

static __attribute__((noreturn)) void unknown_option(char **argv)
{
	if (optopt) {
		char o[3] = { '-', (char)optopt, 0 };
		usage_error(strchr("oqsej", optopt) ? "option %s needs a value"
						    : "option %s is unknown",
			    o);
	}
	usage_error("unknown option '%s'", argv[optind - 1]);
}

/* Where the output goes, what is shown, help and version. */
static void apply_other_option(int c, bool record, bool reads_log, struct command_line *cl,
			       char **argv)
{
	switch (c) {
	case 't':
		report_trace = true;
		break;
	case 'o':
		if (record)
			cl->log_path = optarg;
		else if (reads_log)
			usage_error("%s", "-o is not an option of replay or log (the trace goes to "
					  "--trace-file FILE)");
		else
			cl->trace_path = optarg;
		break;
	case OPT_TRACE_FILE:
		cl->trace_path = optarg;
		break;
	case OPT_JSON:
		cl->json = true;
		break;
	case OPT_STATS:
		cl->stats = true;
		break;
	case OPT_IN_PLACE:
		cl->in_place = true;
		break;
	case 'h':
		fputs(usage, stdout);
		exit(0);
	case 'V':
		printf("detrun %s\n", DETRUN_VERSION);
		exit(0);
	default:
		unknown_option(argv);
	}
}

static int parse_options(int argc, char **argv, bool record, bool reads_log,
			 struct command_line *cl)
{
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+to:q:s:e:j:hV", longopts, NULL)) != -1) {
		bool shapes_run = strchr("qsej", c) || (c >= OPT_SPIN_BUDGET &&
							c <= OPT_SHIM_MODE && c != OPT_TRACE_FILE);
		for (const struct option *o = longopts; shapes_run && !cl->run_option && o->name;
		     o++)
			if (o->val == c)
				cl->run_option = o->name;
		if (!apply_run_option(c, cl))
			apply_other_option(c, record, reads_log, cl, argv);
	}
	return optind;
}

/* PROGRAM resolved like execvp, or exit 127/126 with a one-line reason. */
static void resolve_or_exit(const char *prog, char *path, size_t size)
{
	int err = resolve_program(prog, path, size);
	if (!err)
		return;
	fprintf(stderr, "detrun: %s: %s\n", prog,
		err == -ENOENT ? (strchr(prog, '/') ? "no such file" : "command not found")
			       : strerror(-err));
	exit(err == -ENOENT ? 127 : 126);
}

static int run_group(const char *path, char **argv, const struct tracer_options *opt)
{
	/* Orphans of the group are re-parented to detrun, so none escapes its tracing. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int status = tracer_run(path, argv, opt);
	if (report_trace_out && report_trace_out != stderr)
		fclose(report_trace_out);
	return status;
}

/* Standard descriptors that are channels to the outside: reading them is outside input. */
static int find_outside_fds(int *fds)
{
	int n = 0;
	for (int fd = 0; fd <= 2; fd++) {
		if (outside_channel(fd)) {
			fds[n++] = fd;
			external_register(fd);
		}
	}
	return n;
}

/* Standard output and error, whatever they are, and the channels from outside: what the
 * program writes there is its output, which record digests and replay checks. */
static void register_outputs(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if ((fd > 0 && fcntl(fd, F_GETFD) >= 0) || external_object(fd))
			external_register_output(fd);
}

static int cmd_run(int argc, char **argv, struct command_line *cl)
{
	int first = parse_options(argc, argv, false, false, cl);
	if (first >= argc)
		usage_error("%s",
			    "no program given (usage: detrun [OPTIONS] -- PROGRAM [ARGS...])");
	if (cl->shim_control && !cl->shim)
		usage_error("%s", "--shim-mode needs --shim COMMAND");
	char path[PATH_MAX];
	resolve_or_exit(argv[first], path, sizeof(path));
	open_trace_file(cl->trace_path);
	if (cl->shim) {
		int outside[3];
		find_outside_fds(outside);
		if (program_shim_start(cl->shim, cl->shim_control, &argv[first]))
			return 125;
	}
	return run_group(path, &argv[first], &cl->opt);
}

static int cmd_record(int argc, char **argv, struct command_line *cl)
{
	int first = parse_options(argc, argv, true, false, cl);
	if (!cl->log_path)
		usage_error("%s", "record needs -o LOG");
	if (cl->shim)
		usage_error("%s", "--shim cannot be combined with record");
	if (first >= argc)
		usage_error("%s", "no program given (usage: detrun record -o LOG -- PROGRAM ...)");
	char path[PATH_MAX];
	resolve_or_exit(argv[first], path, sizeof(path));
	open_trace_file(cl->trace_path);
	int outside[3];
	int n = find_outside_fds(outside);
	register_outputs();
	char program[PATH_MAX];
	if (!realpath(path, program)) /* replay may start from elsewhere */
		snprintf(program, sizeof(program), "%s", path);
	struct record_start rs = { &argv[first], program, path, &cl->opt, outside, n };
	if (record_shim_start(cl->log_path, &rs))
		return 125;
	hold_outside_signals(); /* the log exists: a signal from now on is logged in it */
	return run_group(path, &argv[first], &cl->opt);
}

/* The path replay gives to execve: the recorded string, from the recorded working
 * directory, so that AT_EXECFN, and with it everything the initial stack holds, is the
 * recording's. A log before format 4 kept only the absolute path. */
static const char *recorded_exec_path(const Detrun__Log__Header *h)
{
	if (h->format_version >= 4 && *h->exec_path)
		return h->exec_path;
	fprintf(stderr,
		"detrun: warning: a log of format %u keeps neither the path the program was "
		"started by nor digests of its output: it starts as %s, its output unchecked\n",
		h->format_version, h->program);
	return h->program;
}

/* The replayed program must be the recorded one, byte for byte. */
static void check_program(const Detrun__Log__Header *h, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t hash = 0, size = 0;
	if (fd < 0) {
		fprintf(stderr, "detrun: cannot replay: %s (in %s): %s\n", path, h->cwd,
			strerror(errno));
		exit(125);
	}
	fingerprint_fd(fd, &hash, &size);
	close(fd);
	if (hash != h->program_hash || size != h->program_size) {
		fprintf(stderr,
			"detrun: cannot replay: %s differs from the recorded program "
			"(%llu bytes, hash %016llx; recorded %llu bytes, hash %016llx)\n",
			path, (unsigned long long)size, (unsigned long long)hash,
			(unsigned long long)h->program_size, (unsigned long long)h->program_hash);
		exit(125);
	}
}

/* The program starts with the signals ignored that were ignored when it was recorded (a
 * background job ignores SIGINT and SIGQUIT, nohup SIGHUP), and no others: it looks at
 * them (a Python program installs no SIGINT handler when SIGINT is ignored). */
static void replay_ignored_signals(const Detrun__Log__Header *h)
{
	if (h->format_version < 2) {
		fprintf(stderr,
			"detrun: warning: a log of format %u does not say which signals "
			"were ignored at start; the program starts with this shell's\n",
			h->format_version);
		return;
	}
	for (int sig = 1; sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) < 0)
			continue; /* the C library's own signals */
		bool want = h->ignored_signals & (1ULL << (sig - 1));
		if (want && sa.sa_handler != SIG_IGN)
			signal(sig, SIG_IGN);
		else if (!want && sa.sa_handler == SIG_IGN)
			signal(sig, SIG_DFL);
	}
}

/* The group meets the files the recording started with: the before-images the recording
 * kept of every path it changed, on a private view (engine/file_view.h), or with
 * --in-place put back on the real files before the program starts. */
static int present_starting_files(const struct log *log, bool in_place)
{
	static struct file_images imgs;
	if (file_images_of_log(log, log->header->cwd, &imgs))
		die("out of memory");
	if (!in_place) {
		file_view_set(&imgs);
		return 0;
	}
	char err[PATH_MAX + 128] = "";
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || file_images_restore(root, &imgs, err, sizeof(err))) {
		fprintf(stderr, "detrun: cannot put back the recording's starting files: %s\n",
			root < 0 ? strerror(errno) : err);
		return -1;
	}
	close(root);
	return 0;
}

static int cmd_replay(int argc, char **argv, struct command_line *cl)
{
	int first = parse_options(argc, argv, false, true, cl);
	if (cl->run_option)
		usage_error("replay runs with the recording's options; --%s cannot change them",
			    cl->run_option);
	if (first != argc - 1)
		usage_error("%s", "replay takes one LOG (usage: detrun replay [--trace] LOG)");
	static struct log log;
	char err[512];
	if (log_load(argv[first], &log, err, sizeof(err))) {
		fprintf(stderr, "detrun: %s\n", err);
		return 125;
	}
	const Detrun__Log__Header *h = log.header;
	struct stat trace_st, log_st;
	if (cl->trace_path && stat(cl->trace_path, &trace_st) == 0 &&
	    stat(argv[first], &log_st) == 0 && trace_st.st_dev == log_st.st_dev &&
	    trace_st.st_ino == log_st.st_ino)
		usage_error("--trace-file %s is the log being replayed", cl->trace_path);
	open_trace_file(cl->trace_path);
	if (chdir(h->cwd) < 0) {
		fprintf(stderr, "detrun: cannot replay: the recording ran in %s: %s\n", h->cwd,
			strerror(errno));
		return 125;
	}
	const char *path = recorded_exec_path(h);
	check_program(h, path);
	clearenv();
	for (size_t i = 0; i < h->n_env; i++)
		putenv(h->env[i]);
	if (h->quantum < 1 || h->cpus < 1 || h->cpus > 64 || h->spin_budget_ms < 1 ||
	    h->spin_budget_ms > 60000 || h->jobs < 0 || h->jobs > 64) {
		fprintf(stderr,
			"detrun: %s: corrupt header: options out of range (quantum %d, cpus "
			"%d, spin budget %d ms, jobs %d)\n",
			argv[first], h->quantum, h->cpus, h->spin_budget_ms, h->jobs);
		return 125;
	}
	struct tracer_options *opt = &cl->opt;
	header_options_from(h, opt);
	replay_stdio_setup(h);
	register_outputs();
	replay_ignored_signals(h);
	replay_shim_start(&log);
	if (present_starting_files(&log, cl->in_place))
		return 125;
	char **argv_copy = calloc(h->n_argv + 1, sizeof(char *));
	if (!argv_copy)
		die("out of memory");
	memcpy(argv_copy, h->argv, h->n_argv * sizeof(char *));
	return run_group(path, argv_copy, opt);
}

/* Options and the cluster are replicate/'s business; the run itself is the same. */
static int cmd_replicate(int argc, char **argv, struct command_line *cl)
{
	char path[PATH_MAX];
	char **prog_argv;
	int code = replicate_command(argc, argv, &cl->opt, path, sizeof(path), &prog_argv);
	return code >= 0 ? code : run_group(path, prog_argv, &cl->opt);
}

static int cmd_log(int argc, char **argv, struct command_line *cl)
{
	int first = parse_options(argc, argv, false, true, cl);
	if (first != argc - 1)
		usage_error("%s", "log takes one LOG (usage: detrun log [--json | --stats] LOG)");
	if (cl->json && cl->stats)
		usage_error("%s", "--json and --stats do not go together");
	if (cl->run_option)
		usage_error("log only reads a log: --%s is for running a program", cl->run_option);
	return log_print(argv[first], cl->json    ? LOG_PRINT_JSON
				      : cl->stats ? LOG_PRINT_STATS
						  : LOG_PRINT_TEXT);
}

int main(int argc, char **argv)
{
	struct command_line cl = {
		.opt = {
			.quantum = 64,
			.spin_budget_ms = 10,
			.seed = 0,
			.epoch = 1893456000,
			.cpus = 1,
			.jobs = 1,
			.namespaces = true,
			.page_owner = false,
			.page_merge = 1024,
			.own_vdso = true,
			.keep_turn = true,
		},
	};
	report_trace_out = stderr;
	/* Parallel mode's shared memory (engine/page_share.h): DETRUN_PAGE_OWNER=1 sets
	 * --page-owner's default, DETRUN_PAGE_MERGE=N merges an object's sharers after N page
	 * moves. */
	const char *owner = getenv("DETRUN_PAGE_OWNER"), *merge = getenv("DETRUN_PAGE_MERGE");
	if (owner && *owner)
		cl.opt.page_owner = parse_number("DETRUN_PAGE_OWNER", owner, 0, 1) != 0;
	if (merge && *merge)
		cl.opt.page_merge = (int)parse_number("DETRUN_PAGE_MERGE", merge, 0, 1 << 30);
	/* The composition root: the engine runs the handlers' table, installed here. */
	tracer_set_handler_ops(&handler_ops);
	bool debugging = debugger_init(&argc, &argv);
	/* DETRUN_JOBS sets the default, as MAKEFLAGS does for make: a whole test suite can run
	 * in parallel mode. Not the debugger's: `debug` runs with the recording's, `--gdb` with its
	 * own --jobs. */
	const char *jobs = getenv("DETRUN_JOBS");
	if (jobs && *jobs && !debugging)
		cl.opt.jobs = (int)parse_number("DETRUN_JOBS", jobs, 1, 64);
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv, struct command_line *cl);
	} commands[] = { { "record", cmd_record },
			 { "replay", cmd_replay },
			 { "log", cmd_log },
			 { "replicate", cmd_replicate } };
	for (size_t i = 0; argc > 1 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1, &cl);
	return cmd_run(argc, argv, &cl);
}
