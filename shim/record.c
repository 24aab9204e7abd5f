/* The record shim: every external call runs, and what came in — results, the bytes the
 * calls produced, when waits ended, outside signals — goes to the log with its logical
 * time. Bytes sent outside are not logged (replay recomputes them), only a digest. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/options.h"
#include "recorder/file_image.h"
#include "recorder/fingerprint.h"
#include "recorder/header_options.h"
#include "recorder/input.h"
#include "recorder/log.h"
#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "scheduler/vclock.h"
#include "shim/shim.h"

#define DIGEST_EVERY 1024 /* events between digests: a divergence is caught within this */

static struct input_sink *sink;
static char record_cwd[4096]; /* image paths in it are logged relative (proto/log.proto) */

static const char *sink_error(struct input_sink *s, int err)
{
	const char *why = s->why ? s->why(s, err) : NULL;
	return why ? why : strerror(-err);
}

static void append(uint64_t time, int vtid, LogRecord *rec)
{
	rec->task = (uint32_t)vtid;
	int err = sink->append(sink, time, rec);
	if (err)
		shim_abort(NULL, "cannot write the log %s: %s", sink->name, sink_error(sink, err));
}

static void record_monitor(const struct shim_call *c)
{
	Detrun__Log__Result result = DETRUN__LOG__RESULT__INIT;
	result.nr = (uint32_t)c->nr;
	result.ret = c->ret;
	ProtobufCBinaryData *out = calloc(c->n_out + 1, sizeof(*out));
	if (!out)
		abort();
	for (size_t i = 0; i < c->n_out; i++)
		out[i] = (ProtobufCBinaryData){ c->out[i].len, c->out[i].bytes };
	/* Trailing empty regions carry nothing: replay treats missing ones as empty. */
	size_t n = c->n_out;
	while (n && !out[n - 1].len)
		n--;
	result.n_out = n;
	result.out = out;
	result.sent_digest = c->sent_len ? c->sent_digest : 0;
	LogRecord rec = DETRUN__LOG__RECORD__INIT;
	rec.kind_case = DETRUN__LOG__RECORD__KIND_RESULT;
	rec.result = &result;
	append(c->time, c->vtid, &rec);
	free(out);
}

static bool record_ready(struct task *t, uint64_t time, bool native)
{
	if (native) {
		Detrun__Log__Ready ready = DETRUN__LOG__READY__INIT;
		ready.look = sched_look();
		LogRecord rec = DETRUN__LOG__RECORD__INIT;
		rec.kind_case = DETRUN__LOG__RECORD__KIND_READY;
		rec.ready = &ready;
		append(time, sched_of(t)->vtid, &rec);
	}
	return native;
}

/* The group is idle: what is logged so far goes to disk before waiting, so a recording
 * that is killed while its server waits for clients keeps everything. */
static int record_wait_outside(uint64_t time, struct pollfd *fds, int nfds, int timeout_ms,
			       int (*real_wait)(struct pollfd *, int, int))
{
	int err = sink->flush(sink);
	if (err)
		shim_abort(NULL, "cannot write the log %s: %s", sink->name, sink_error(sink, err));
	int64_t clock = vclock_now();
	int r = real_wait(fds, nfds, timeout_ms);
	if (r == 0 && timeout_ms > 0) {
		Detrun__Log__Advance advance = DETRUN__LOG__ADVANCE__INIT;
		advance.clock_ns = clock;
		advance.look = sched_look();
		LogRecord rec = DETRUN__LOG__RECORD__INIT;
		rec.kind_case = DETRUN__LOG__RECORD__KIND_ADVANCE;
		rec.advance = &advance;
		append(time, 0, &rec);
	}
	return r;
}

static void record_signals(uint64_t time, const int *pending, int n, void (*deliver)(int))
{
	for (int i = 0; i < n; i++) {
		Detrun__Log__Signal sig = DETRUN__LOG__SIGNAL__INIT;
		sig.signo = pending[i];
		sig.look = sched_look();
		LogRecord rec = DETRUN__LOG__RECORD__INIT;
		rec.kind_case = DETRUN__LOG__RECORD__KIND_SIGNAL;
		rec.signal = &sig;
		append(time, 0, &rec);
		deliver(pending[i]);
	}
}

static void record_file(struct task *t, uint64_t time, const char *path, uint64_t size,
			uint64_t hash)
{
	Detrun__Log__FileRead file = DETRUN__LOG__FILE_READ__INIT;
	file.path = (char *)path;
	file.size = size;
	file.hash = hash;
	LogRecord rec = DETRUN__LOG__RECORD__INIT;
	rec.kind_case = DETRUN__LOG__RECORD__KIND_FILE;
	rec.file = &file;
	append(time, sched_of(t)->vtid, &rec);
}

static void record_output(struct task *t, uint64_t time, int fd, const uint8_t *bytes, size_t len)
{
	Detrun__Log__Output out = DETRUN__LOG__OUTPUT__INIT;
	out.fd = fd;
	out.len = len;
	out.digest = fnv32(FNV32_INIT, bytes, len);
	LogRecord rec = DETRUN__LOG__RECORD__INIT;
	rec.kind_case = DETRUN__LOG__RECORD__KIND_OUTPUT;
	rec.output = &out;
	append(time, sched_of(t)->vtid, &rec);
}

struct image_append {
	uint64_t time;
	int vtid;
};

static int append_image(void *arg, Detrun__Log__FileImage *image)
{
	const struct image_append *a = arg;
	LogRecord rec = DETRUN__LOG__RECORD__INIT;
	rec.kind_case = DETRUN__LOG__RECORD__KIND_IMAGE;
	rec.image = image;
	append(a->time, a->vtid, &rec);
	return 0;
}

/* The first change of a path: its before-image goes to the log, in parts for a large file
 * (each at most FILE_IMAGE_PART bytes, one log block or less). Costs a copy of the file
 * into the log, once per path and run. */
static void record_file_changing(struct task *t, uint64_t time, const char *path, int dirfd,
				 const char *name)
{
	struct image_append a = { time, sched_of(t)->vtid };
	size_t l = strlen(record_cwd);
	const char *logged = path;
	if (l > 1 && !strncmp(path, record_cwd, l) && path[l] == '/')
		logged = path + l + 1;
	int err = file_image_capture(dirfd, name, logged, append_image, &a);
	if (err)
		shim_abort(t, "cannot keep the before-image of %s: %s", path, strerror(-err));
}

static void record_event(struct task *t, uint64_t time, long nr)
{
	uint64_t digest = shim_digest_event(time, sched_of(t)->vtid, nr);
	if (time % DIGEST_EVERY)
		return;
	Detrun__Log__Digest d = DETRUN__LOG__DIGEST__INIT;
	d.value = digest;
	LogRecord rec = DETRUN__LOG__RECORD__INIT;
	rec.kind_case = DETRUN__LOG__RECORD__KIND_DIGEST;
	rec.digest = &d;
	append(time, 0, &rec);
}

static int record_finish(uint64_t time, int code)
{
	Detrun__Log__End end = DETRUN__LOG__END__INIT;
	end.exit_code = code;
	end.events = time;
	LogRecord rec = DETRUN__LOG__RECORD__INIT;
	rec.kind_case = DETRUN__LOG__RECORD__KIND_END;
	rec.end = &end;
	append(time, 0, &rec);
	/* Flushed first, so that a failure can still be asked about (close frees the sink). */
	char why[512] = "";
	int err = sink->flush(sink);
	if (err)
		snprintf(why, sizeof(why), "cannot write the log %s: %s", sink->name,
			 sink_error(sink, err));
	char name[256];
	snprintf(name, sizeof(name), "%s", sink->name);
	int closed = sink->close(sink);
	sink = NULL;
	if (!err && closed)
		snprintf(why, sizeof(why), "cannot write the log %s: %s", name, strerror(-closed));
	if (err || closed) {
		fprintf(stderr, "detrun: %s\n", why);
		return 125;
	}
	return code;
}

static const struct shim_ops record_shim = {
	.name = "record",
	.monitor = record_monitor,
	.ready = record_ready,
	.wait_outside = record_wait_outside,
	.signals = record_signals,
	.file_opened = record_file,
	.file_changing = record_file_changing,
	.output = record_output,
	.event = record_event,
	.finish = record_finish,
};

/* However detrun exits (an error, a second signal from outside), what was recorded goes
 * to disk: the log stays readable, cut short. */
static void flush_at_exit(void)
{
	if (sink)
		sink->flush(sink);
}

/* Signals detrun itself was started with ignored: the program inherits them (detrun
 * changes its own dispositions only after the program is started). */
static uint64_t ignored_at_start(void)
{
	uint64_t mask = 0;
	for (int sig = 1; sig <= 64; sig++) {
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			mask |= 1ULL << (sig - 1);
	}
	return mask;
}

/* The descriptors 0-2 as the program gets them, and standard input's file if it is one. */
static void header_std_fds(Detrun__Log__Header *h, uint32_t *kinds, uint32_t *flags,
			   char *stdin_file)
{
	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		kinds[fd] = fstat(fd, &st) == 0 ? (uint32_t)(st.st_mode & S_IFMT) : 0;
		int fl = fcntl(fd, F_GETFL);
		flags[fd] = fl < 0 ? 0 : (uint32_t)fl;
	}
	int tty = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
	h->controlling_terminal = tty >= 0;
	if (tty >= 0)
		close(tty);
	h->n_std_kinds = h->n_std_flags = 3;
	h->std_kinds = kinds;
	h->std_flags = flags;
	if (kinds[0] == S_IFREG && realpath("/proc/self/fd/0", stdin_file) &&
	    fingerprint_fd(0, &h->stdin_hash, &(uint64_t){ 0 }) == 0) {
		h->stdin_file = stdin_file;
		h->stdin_offset = lseek(0, 0, SEEK_CUR);
	}
}

static struct input_sink *open_log_file(const Detrun__Log__Header *h, void *path)
{
	struct input_sink *s = log_sink_create(path, h);
	if (!s)
		fprintf(stderr, "detrun: cannot create the log %s: %s\n", (char *)path,
			strerror(errno));
	return s;
}

int record_shim_start(const char *path, const struct record_start *rs)
{
	return record_shim_start_sink(open_log_file, (void *)path, rs);
}

int record_shim_start_sink(struct input_sink *(*open_sink)(const Detrun__Log__Header *, void *),
			   void *arg, const struct record_start *rs)
{
	extern char **environ;
	const struct tracer_options *opt = rs->opt;
	char **argv = rs->argv;
	const char *program = rs->program;
	Detrun__Log__Header h = DETRUN__LOG__HEADER__INIT;
	h.format_version = LOG_FORMAT_VERSION;
	h.detrun_version = DETRUN_VERSION;
	for (h.n_argv = 0; argv[h.n_argv]; h.n_argv++)
		;
	h.argv = argv;
	h.program = (char *)program;
	h.exec_path = (char *)rs->exec_path;
	int fd = open(program, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		fingerprint_fd(fd, &h.program_hash, &h.program_size);
		close(fd);
	}
	for (h.n_env = 0; environ[h.n_env]; h.n_env++)
		;
	h.env = environ;
	char cwd[4096];
	h.cwd = getcwd(cwd, sizeof(cwd)) ? cwd : "/";
	header_options_to(&h, opt);
	uint32_t kinds[3], flags[3];
	char stdin_file[4096];
	header_std_fds(&h, kinds, flags, stdin_file);
	h.ignored_signals = ignored_at_start();
	h.n_outside_fds = (size_t)rs->n_outside;
	h.outside_fds = (int32_t *)rs->outside_fds;
	sink = open_sink(&h, arg);
	if (!sink)
		return -1;
	atexit(flush_at_exit);
	snprintf(record_cwd, sizeof(record_cwd), "%s", h.cwd);
	shim_set(&record_shim);
	return 0;
}

/* Recording goes on from where a replay stands (a follower taking over): no header, the
 * sink continues an existing stream. */
void record_shim_continue(struct input_sink *s)
{
	sink = s;
	if (!getcwd(record_cwd, sizeof(record_cwd)))
		record_cwd[0] = 0;
	shim_set(&record_shim);
}
