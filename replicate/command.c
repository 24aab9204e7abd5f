/* `detrun replicate`: options, joining a group as its leader or a follower, --status. */
#include "replicate/replicate.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder/fingerprint.h"
#include "recorder/header_options.h"
#include "shim/shim.h"
#include "engine/launch.h"
#include "engine/tracer.h"

extern char **environ;

#define DEFAULT_LEASE_MS 15000 /* JetStream's own elections stall appends 4-10 s */

static const char help[] =
	"usage: detrun replicate --cluster URLS --group NAME [--node ID] [--lease-ms N]\n"
	"                        [--] PROGRAM [ARGS...]\n"
	"       detrun replicate --status --cluster URLS --group NAME\n"
	"\n"
	"Runs PROGRAM on this node as a replica of group NAME, kept identical to the others by\n"
	"the same outside inputs at the same logical times, through the NATS JetStream cluster\n"
	"URLS (comma-separated nats://host:port). The first replica of a new group leads: it\n"
	"serves clients and appends every input to the stream DETRUN_NAME before any output\n"
	"that depends on it leaves the node. The others follow: they replay the stream live,\n"
	"send nothing to clients, and check that what they would send matches. When the\n"
	"leader's lease (a key of the bucket DETRUN_LEASE_NAME) lapses, a follower that has\n"
	"every input takes it and goes live: the program's listening sockets listen here, with\n"
	"all the state built so far; connections from before fail at that logical time on\n"
	"every replica, and clients reconnect. A replica started later catches up from the\n"
	"stream's first input.\n"
	"\n"
	"  --cluster URLS   the NATS servers (JetStream enabled)\n"
	"  --group NAME     the group (letters, digits, '-', '_'); its stream and bucket are\n"
	"                   created by the first replica\n"
	"  --node ID        this replica's name, unique in the group: a second replica with\n"
	"                   the name of a live one is refused (default: HOST-PID)\n"
	"  --lease-ms N     the lease's time to live, fixed when the group is created\n"
	"                   (default 15000: longer than a JetStream election)\n"
	"  --status         who leads, each replica's logical time and lag, the stream's end\n"
	"\n"
	"exit status: the program's, or 125 for detrun's own failures (cluster unreachable, a\n"
	"replica with another program or arguments than the leader, a divergence, a lost\n"
	"lease).\n";

struct rep_args {
	const char *cluster, *group, *node;
	int64_t lease_ms;
	bool lease_given, status;
	int first; /* PROGRAM's index */
};

static int arg_error(const char *what, const char *arg)
{
	fprintf(stderr, "detrun: replicate: ");
	fprintf(stderr, what, arg);
	fprintf(stderr, " (try 'detrun replicate --help')\n");
	return 125;
}

/* -1: go on; else the exit code. */
static int parse(int argc, char **argv, struct rep_args *a)
{
	static const struct option longopts[] = { { "cluster", required_argument, NULL, 'c' },
						  { "group", required_argument, NULL, 'g' },
						  { "node", required_argument, NULL, 'n' },
						  { "lease-ms", required_argument, NULL, 'l' },
						  { "status", no_argument, NULL, 's' },
						  { "help", no_argument, NULL, 'h' },
						  { 0 } };
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->cluster = optarg;
			break;
		case 'g':
			a->group = optarg;
			break;
		case 'n':
			a->node = optarg;
			break;
		case 's':
			a->status = true;
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		case 'l': {
			char *end;
			a->lease_ms = strtoll(optarg, &end, 10);
			a->lease_given = true;
			if (*end || a->lease_ms < 1000 || a->lease_ms > 3600000)
				return arg_error("--lease-ms '%s': expected 1000..3600000", optarg);
			break;
		}
		default:
			return arg_error("unknown option or missing value: '%s'", argv[optind - 1]);
		}
	}
	a->first = optind;
	if (!a->cluster)
		return arg_error("%s", "--cluster URLS is needed");
	if (!a->group || !rep_name_valid(a->group))
		return arg_error("bad or missing group name '%s' (letters, digits, '-', '_')",
				 a->group ? a->group : "");
	if (!rep_name_valid(a->node))
		return arg_error("bad node name '%s' (letters, digits, '-', '_')", a->node);
	if (!a->status && a->first >= argc)
		return arg_error("%s", "no program given");
	return -1;
}

/* The signals from outside a follower ignored (replica.c), by name. */
static void print_ignored(unsigned long long mask)
{
	const char *sep = "; ignored from outside: ";
	for (int sig = 1; sig <= 64; sig++)
		if (mask & (1ULL << (sig - 1))) {
			const char *name = sigabbrev_np(sig);
			if (name)
				printf("%sSIG%s", sep, name);
			else
				printf("%ssignal %d", sep, sig);
			sep = ", ";
		}
}

/* One replica's row: its progress key as the bucket has it. A read that fails (the
 * bucket's stream electing its leader) is tried again; a row that still cannot be read is
 * listed as such, never left out. */
static void status_row(struct rep_link *l, const char *node, const char *holder, int64_t last)
{
	char key[96];
	snprintf(key, sizeof(key), "node.%s", node);
	kvEntry *e = NULL;
	natsStatus st = NATS_OK;
	for (int tries = 0; tries < 5; tries++) {
		if (tries)
			usleep(500 * 1000);
		if ((st = kvStore_Get(&e, l->kv, key)) == NATS_OK || st == NATS_NOT_FOUND)
			break;
	}
	if (st == NATS_NOT_FOUND) /* deleted between the listing and the read */
		return;
	if (st != NATS_OK) {
		printf("replica %s: progress cannot be read now (%s)\n", node,
		       natsStatus_GetText(st));
		return;
	}
	char role[16] = "?";
	unsigned long long t = 0, seq = 0, ignored = 0;
	sscanf(kvEntry_ValueString(e), "%15s %llu %llu %llx", role, &t, &seq, &ignored);
	/* A leader that died leaves its row until the bucket's TTL removes it: only the
	 * lease's holder leads. A leader's sequence is its own last append, so it has no
	 * lag to show. */
	bool leads = !strcmp(role, "leader");
	printf("replica %s: %s, logical time %llu, stream sequence %llu", node,
	       leads && strcmp(node, holder) ? "leader no longer (the lease is not its)" : role, t,
	       seq);
	if (!leads)
		printf(", lag %lld", (long long)last - (long long)seq);
	print_ignored(ignored);
	putchar('\n');
	kvEntry_Destroy(e);
}

/* Status reads need only the cluster's quorum, but while a server is down a stream whose
 * leader it was elects another (4-10 s on loopback, each read timing out after 5 s
 * meanwhile): the reads are tried again until STATUS_WAIT_S seconds have passed. */
#define STATUS_WAIT_S 30

static bool status_waited(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - start->tv_sec >= STATUS_WAIT_S)
		return true;
	sleep(1);
	return false;
}

static int status(struct rep_link *l)
{
	char holder[64];
	uint64_t epoch;
	int64_t last = -1;
	int held = -1;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((last = rep_last_seq(l)) < 0 && !status_waited(&start))
		;
	while (last >= 0 && (held = rep_lease_holder(l, holder, sizeof(holder), &epoch)) &&
	       !status_waited(&start))
		;
	if (last < 0 || held) {
		fprintf(stderr, "detrun: replicate: %s\n",
			last < 0 ? l->why : "cannot read the lease");
		return 125;
	}
	printf("group %s: stream %s, last sequence %" PRId64 ", lease %" PRId64 " ms\n", l->group,
	       l->stream, last, l->ttl_ms);
	if (holder[0])
		printf("leader: %s (epoch %" PRIu64 ")\n", holder, epoch);
	else
		printf("leader: none (the lease has lapsed)\n");
	char **nodes = NULL;
	int count = 0, listed = -1;
	while ((listed = rep_progress_nodes(l, &nodes, &count)) && !status_waited(&start))
		;
	if (listed) {
		printf("replicas: cannot be listed now (%s)\n", l->why);
		return 0;
	}
	for (int i = 0; i < count; i++) {
		status_row(l, nodes[i], holder, last);
		free(nodes[i]);
	}
	free(nodes);
	return 0;
}

struct leader_start {
	struct rep_link *l;
	uint64_t epoch;
	struct input_sink *sink;
};

static struct input_sink *open_stream(const Detrun__Log__Header *h, void *arg)
{
	struct leader_start *ls = arg;
	ls->sink = rep_sink_create(ls->l, ls->epoch, 0);
	if (!ls->sink || rep_sink_header(ls->sink, h)) {
		fprintf(stderr, "detrun: replicate: cannot append to %s: %s\n", ls->l->stream,
			ls->l->why);
		return NULL;
	}
	return ls->sink;
}

static int lead(struct rep_link *l, uint64_t epoch, char **argv, const char *path,
		const struct tracer_options *opt)
{
	static struct leader_start ls;
	ls = (struct leader_start){ .l = l, .epoch = epoch };
	char program[PATH_MAX];
	if (!realpath(path, program))
		snprintf(program, sizeof(program), "%s", path);
	struct record_start rs = { argv, program, path, opt, NULL, 0 };
	if (record_shim_start_sink(open_stream, &ls, &rs))
		return 125;
	rep_replica_lead(l, ls.sink);
	if (rep_lease_keep(l))
		return 125;
	hold_outside_signals(); /* a SIGTERM right after the line below is the group's */
	fprintf(stderr, "detrun: replicate: node %s leads group %s (epoch %" PRIu64 ")\n", l->node,
		l->group, epoch);
	return -1;
}

/* The group's Header (stream message 1), waiting up to the lease TTL for a leader that
 * has the lease but has not appended it yet. */
static LogRecord *group_header(struct rep_link *l)
{
	for (int64_t waited = 0; rep_last_seq(l) < 1; waited += 100) {
		if (waited >= l->ttl_ms) {
			snprintf(l->why, sizeof(l->why),
				 "group %s has a leader but no input stream "
				 "after %" PRId64 " ms",
				 l->group, l->ttl_ms);
			return NULL;
		}
		usleep(100 * 1000);
	}
	natsMsg *m = rep_get(l, 1);
	uint64_t time;
	int kind;
	const uint8_t *body;
	size_t len;
	LogRecord *rec = NULL;
	if (m &&
	    !rep_unframe((const uint8_t *)natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m),
			 &time, &kind, &body, &len) &&
	    kind == REP_RECORD)
		rec = detrun__log__record__unpack(NULL, len, body);
	natsMsg_Destroy(m);
	if (m && (!rec || rec->kind_case != DETRUN__LOG__RECORD__KIND_HEADER))
		snprintf(l->why, sizeof(l->why), "stream %s does not start with a detrun header",
			 l->stream);
	return rec && rec->kind_case == DETRUN__LOG__RECORD__KIND_HEADER ? rec : NULL;
}

/* A follower must run what the leader runs: the same program, arguments and options. */
static int same_as_leader(struct rep_link *l, const Detrun__Log__Header *h, char **argv,
			  const char *path, const struct tracer_options *o)
{
	uint64_t hash = 0, size = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		fingerprint_fd(fd, &hash, &size);
		close(fd);
	}
	if (hash != h->program_hash || size != h->program_size)
		return snprintf(l->why, sizeof(l->why),
				"%s is another program than the leader's "
				"%s (%" PRIu64 " bytes, hash %016" PRIx64 "; the leader's: %" PRIu64
				" bytes, hash %016" PRIx64 ")",
				path, h->program, size, hash, h->program_size, h->program_hash),
		       -1;
	size_t n = 0;
	while (argv[n])
		n++;
	bool same = n == h->n_argv;
	for (size_t i = 0; same && i < n; i++)
		same = !strcmp(argv[i], h->argv[i]);
	if (!same)
		return snprintf(l->why, sizeof(l->why),
				"the arguments differ from the leader's "
				"(argument %zu)",
				n),
		       -1;
	if (!header_options_equal(h, o))
		return snprintf(l->why, sizeof(l->why),
				"detrun's options differ from the "
				"leader's"),
		       -1;
	return 0;
}

/* The environment is the leader's: the program sees the same. libnats' threads run by
 * now and read the environment (getenv, and the time zone through timegm), so the old
 * array is never freed (clearenv and putenv would free or move it under them): the new
 * one takes its place in one store. */
static void use_leaders_environment(const Detrun__Log__Header *h)
{
	char **env = calloc(h->n_env + 1, sizeof(char *));
	if (!env)
		return;
	for (size_t i = 0; i < h->n_env; i++)
		if (!(env[i] = strdup(h->env[i])))
			return;
	environ = env;
}

static int follow(struct rep_link *l, char **argv, const char *path,
		  const struct tracer_options *opt)
{
	LogRecord *rec = group_header(l);
	if (!rec || same_as_leader(l, rec->header, argv, path, opt)) {
		fprintf(stderr, "detrun: replicate: %s\n", l->why);
		return 125;
	}
	/* The group's starting files, whatever this replica left when it died (files.c). */
	if (rep_starting_files(l)) {
		fprintf(stderr, "detrun: replicate: %s\n", l->why);
		detrun__log__record__free_unpacked(rec, NULL);
		return 125;
	}
	use_leaders_environment(rec->header);
	struct input_source *src = rep_source_create(l);
	if (!src) {
		fprintf(stderr, "detrun: replicate: %s\n", l->why);
		return 125;
	}
	char holder[64] = "";
	uint64_t epoch = 0;
	rep_lease_holder(l, holder, sizeof(holder), &epoch);
	hold_outside_signals();
	fprintf(stderr, "detrun: replicate: node %s follows group %s (leader %s)\n", l->node,
		l->group, holder[0] ? holder : "none yet");
	detrun__log__record__free_unpacked(rec, NULL);
	replay_shim_start_source(src);
	rep_replica_follow(l, src);
	return -1;
}

/* A replicated server reads no terminal: standard input is /dev/null on every replica. */
static void quiet_stdin(void)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null >= 0 && null != 0) {
		dup2(null, 0);
		close(null);
	}
}

static int join(struct rep_link *l, const struct rep_args *a, char **argv, const char *path,
		const struct tracer_options *opt)
{
	if (rep_open_group(l, a->lease_ms, true)) {
		fprintf(stderr, "detrun: replicate: %s\n", l->why);
		return 125;
	}
	if (a->lease_given && l->ttl_ms != a->lease_ms) {
		fprintf(stderr,
			"detrun: replicate: group %s has a lease of %" PRId64 " ms, not %" PRId64
			" (it is fixed when the group is made)\n",
			l->group, l->ttl_ms, a->lease_ms);
		return 125;
	}
	int64_t last = rep_last_seq(l);
	uint64_t epoch;
	if (last < 0) {
		fprintf(stderr, "detrun: replicate: %s\n", l->why);
		return 125;
	}
	int claimed = rep_node_claim(l);
	if (claimed) {
		fprintf(stderr, "detrun: replicate: %s\n", l->why);
		return 125;
	}
	rep_progress_start(l); /* from here on the name is seen taken */
	quiet_stdin();
	int taken = last == 0 ? rep_lease_take(l, &epoch) : 1;
	if (taken < 0) {
		fprintf(stderr, "detrun: replicate: %s\n", l->why);
		return 125;
	}
	return taken == 0 ? lead(l, epoch, argv, path, opt) : follow(l, argv, path, opt);
}

/* The host's name and detrun's pid: replicas on one host need names of their own (two
 * with one name would share one consumer of the stream), and a node name has letters,
 * digits, '-' and '_' only. */
static void default_node_name(char *node, size_t len)
{
	char host[40] = "node";
	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = 0;
	for (char *p = host; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			*p = '-';
	snprintf(node, len, "%s-%d", host, (int)getpid());
}

int replicate_command(int argc, char **argv, struct tracer_options *opt, char *path,
		      size_t path_len, char ***prog_argv)
{
	char node[64];
	default_node_name(node, sizeof(node));
	struct rep_args a = { .node = node, .lease_ms = DEFAULT_LEASE_MS };
	int r = parse(argc, argv, &a);
	if (r >= 0)
		return r;
	static struct rep_link l;
	if (rep_connect(&l, a.cluster, a.group, a.node)) {
		fprintf(stderr, "detrun: replicate: %s\n", l.why);
		return 125;
	}
	if (a.status)
		return rep_open_group(&l, 0, false)
			       ? (fprintf(stderr, "detrun: replicate: %s\n", l.why), 125)
			       : status(&l);
	int err = resolve_program(argv[a.first], path, path_len);
	if (err) {
		fprintf(stderr, "detrun: %s: %s\n", argv[a.first], strerror(-err));
		return err == -ENOENT ? 127 : 126;
	}
	*prog_argv = &argv[a.first];
	return join(&l, &a, &argv[a.first], path, opt);
}
