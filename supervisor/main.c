/* detrun — run a program as a deterministic process group. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "supervisor/launch.h"
#include "supervisor/report.h"
#include "supervisor/tracer.h"

#define DETRUN_VERSION "0.1.0"

static const char usage[] =
	"usage: detrun [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Runs PROGRAM, with every thread and process it starts, as a deterministic process\n"
	"group: the same inputs give the same outputs, byte for byte, on every run.\n"
	"\n"
	"options:\n"
	"  -t, --trace            print every event (logical time, task, syscall) to stderr\n"
	"  -o, --trace-file FILE  write the --trace lines to FILE instead (implies --trace)\n"
	"  -q, --quantum N        events a task may run before the next task's turn (default 1)\n"
	"  -s, --seed N           seed of the random numbers the group sees (default 0)\n"
	"  -e, --epoch SECONDS    wall-clock time at start, in seconds since 1970\n"
	"                         (default 1893456000, 2030-01-01: later than the files\n"
	"                         a run starts with, so none looks newer than \"now\")\n"
	"      --spin-budget MS   run time without an event before the spin detector looks\n"
	"                         at a task (default 10)\n"
	"      --cpus N           CPUs the program sees: sysconf, sched_getaffinity,\n"
	"                         /proc/cpuinfo, /sys/devices/system/cpu (default 1)\n"
	"      --no-namespaces    do not create PID, mount and UTS namespaces: pids, the\n"
	"                         hostname and the CPU count files are then the host's\n"
	"      --keep-vdso        leave the vDSO in place: faster clock reads, but they\n"
	"                         bypass the virtual clock and are not deterministic\n"
	"  -h, --help             show this help\n"
	"  -V, --version          show the version\n"
	"\n"
	"Exit status: PROGRAM's exit status, 128+N if it was killed by signal N, 127 if it\n"
	"cannot be found, 126 if it cannot be executed, 125 for detrun's own errors.\n";

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

int main(int argc, char **argv)
{
	struct tracer_options opt = {
		.quantum = 1,
		.spin_budget_ms = 10,
		.seed = 0,
		.epoch = 1893456000,
		.cpus = 1,
		.namespaces = true,
	};
	enum { OPT_SPIN_BUDGET = 1000, OPT_KEEP_VDSO, OPT_CPUS, OPT_NO_NAMESPACES };
	static const struct option longopts[] = {
		{ "trace", no_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 't' },
		{ "trace-file", required_argument, NULL, 'o' },
		{ "quantum", required_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 's' },
		{ "epoch", required_argument, NULL, 'e' },
		{ "spin-budget", required_argument, NULL, OPT_SPIN_BUDGET },
		{ "keep-vdso", no_argument, NULL, OPT_KEEP_VDSO },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "no-namespaces", no_argument, NULL, OPT_NO_NAMESPACES },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	report_trace_out = stderr;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+to:q:s:e:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			report_trace = true;
			break;
		case 'o':
			report_trace = true;
			report_trace_out = fopen(optarg, "we");
			if (!report_trace_out) {
				fprintf(stderr, "detrun: cannot open %s: %s\n", optarg, strerror(errno));
				return 125;
			}
			setvbuf(report_trace_out, NULL, _IOFBF, 1 << 16);
			break;
		case 'q':
			opt.quantum = (int)parse_number("--quantum", optarg, 1, 1000000);
			break;
		case 's':
			opt.seed = (uint64_t)parse_number("--seed", optarg, LONG_MIN, LONG_MAX);
			break;
		case 'e':
			opt.epoch = parse_number("--epoch", optarg, 0, 1L << 40);
			break;
		case OPT_SPIN_BUDGET:
			opt.spin_budget_ms = (int)parse_number("--spin-budget", optarg, 1, 60000);
			break;
		case OPT_KEEP_VDSO:
			opt.keep_vdso = true;
			break;
		case OPT_CPUS:
			opt.cpus = (int)parse_number("--cpus", optarg, 1, 64);
			break;
		case OPT_NO_NAMESPACES:
			opt.namespaces = false;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("detrun %s\n", DETRUN_VERSION);
			return 0;
		default:
			if (optopt)
				fprintf(stderr, "detrun: option -%c %s (try 'detrun --help')\n", optopt,
					strchr("oqse", optopt) ? "needs a value" : "is unknown");
			else
				fprintf(stderr, "detrun: unknown option '%s' (try 'detrun --help')\n",
					argv[optind - 1]);
			return 125;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "detrun: no program given (usage: detrun [OPTIONS] -- PROGRAM "
				"[ARGS...])\n");
		return 125;
	}
	char **prog_argv = &argv[optind];
	char path[PATH_MAX];
	int err = resolve_program(prog_argv[0], path, sizeof(path));
	if (err) {
		fprintf(stderr, "detrun: %s: %s\n", prog_argv[0],
			err == -ENOENT ? (strchr(prog_argv[0], '/') ? "no such file"
								   : "command not found")
				       : strerror(-err));
		return err == -ENOENT ? 127 : 126;
	}
	/* Orphans of the group are re-parented to detrun, so none escapes its tracing. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int status = tracer_run(path, prog_argv, &opt);
	if (report_trace_out && report_trace_out != stderr)
		fclose(report_trace_out);
	return status;
}
