/* The replay shim: no external call runs. Results, readiness, clock jumps and outside
 * signals come from the log, in the order the recording met them; each is matched against
 * what the replay meets (logical time, task, syscall), and the first mismatch ends the
 * run with both sides described — a replay never continues past a divergence. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/file_image.h"
#include "recorder/fingerprint.h"
#include "recorder/input.h"
#include "recorder/log.h"
#include "scheduler/scheduler.h"
#include "scheduler/task.h"
#include "scheduler/vclock.h"
#include "shim/shim.h"
#include "syscalls/syscall_table.h"

static struct input_source *source;
static uint64_t head_at;    /* the head record's logical time */
static bool looks_logged;   /* format 3: outside input carries the look it came at */
static bool outputs_logged; /* format 4: every write to the group's output is logged */
static struct log_output_offsets output_offsets;
static bool images_in_place;   /* before-images go back on the files at their first change */
static char own_cwd[PATH_MAX]; /* where relative image paths lie (proto/log.proto) */

static const LogRecord *head(void)
{
	return source->head(source, &head_at);
}

static uint64_t head_time(void)
{
	return head_at;
}

static void consume(void)
{
	source->consume(source);
}

/* "result of read for task 3 at t=120" */
static const char *describe(const LogRecord *r, uint64_t time)
{
	static char text[256];
	if (!r)
		return source->complete(source) ? "nothing more"
						: "the end of a recording that was cut short";
	char what[96];
	snprintf(what, sizeof(what), "%s", log_kind_name(r));
	if (r->kind_case == DETRUN__LOG__RECORD__KIND_RESULT)
		snprintf(what, sizeof(what), "result of %s", syscall_name(r->result->nr));
	else if (r->kind_case == DETRUN__LOG__RECORD__KIND_FILE)
		snprintf(what, sizeof(what), "open of %s", r->file->path);
	else if (r->kind_case == DETRUN__LOG__RECORD__KIND_SIGNAL)
		snprintf(what, sizeof(what), "outside signal %d", r->signal->signo);
	else if (r->kind_case == DETRUN__LOG__RECORD__KIND_IMAGE)
		snprintf(what, sizeof(what), "the first change of %s", r->image->path);
	else if (r->kind_case == DETRUN__LOG__RECORD__KIND_OUTPUT)
		snprintf(what, sizeof(what), "a write of %" PRIu64 " bytes to descriptor %d",
			 r->output->len, r->output->fd);
	if (r->task)
		snprintf(text, sizeof(text), "%s for task %u at t=%" PRIu64, what, r->task, time);
	else
		snprintf(text, sizeof(text), "%s at t=%" PRIu64, what, time);
	return text;
}

static __attribute__((noreturn)) void diverged(struct task *t, const char *met)
{
	const LogRecord *r = head();
	char where[64];
	source->where(source, where, sizeof(where));
	shim_abort(t, "replay diverged: the replay met %s, the recording has %s next (%s)", met,
		   describe(r, r ? head_time() : 0), where);
}

/* The head record, if it is of `kind`, at `time`, for task `vtid`; NULL otherwise. */
static const LogRecord *match(int kind, uint64_t time, int vtid)
{
	const LogRecord *r = head();
	if (!r || (int)r->kind_case != kind || head_time() != time || (int)r->task != vtid)
		return NULL;
	return r;
}

/* The look (scheduler.h) at which the recording met r: a scheduler's look for a task to
 * run, of which one logical time can hold several. */
static uint32_t look_of(const LogRecord *r)
{
	switch (r->kind_case) {
	case DETRUN__LOG__RECORD__KIND_READY:
		return r->ready->look;
	case DETRUN__LOG__RECORD__KIND_ADVANCE:
		return r->advance->look;
	case DETRUN__LOG__RECORD__KIND_SIGNAL:
		return r->signal->look;
	default:
		return 0;
	}
}

static bool at_look(const LogRecord *r)
{
	return r && (!looks_logged || look_of(r) == sched_look());
}

/* The recording met outside input later at this logical time, after more looks: the
 * scheduler must look again rather than wait. */
static bool later_look_now(uint64_t time)
{
	const LogRecord *r = head();
	return looks_logged && r && head_time() == time && look_of(r) >= sched_look() &&
	       (r->kind_case == DETRUN__LOG__RECORD__KIND_READY ||
		r->kind_case == DETRUN__LOG__RECORD__KIND_ADVANCE ||
		r->kind_case == DETRUN__LOG__RECORD__KIND_SIGNAL);
}

static bool replay_control(struct shim_call *c)
{
	const LogRecord *r = match(DETRUN__LOG__RECORD__KIND_RESULT, c->time, c->vtid);
	if (!r && c->signal_waits && c->signal_waits(c->task)) {
		c->interrupted = true; /* its result comes with the restart, or none (EINTR) */
		return true;
	}
	if (!r || r->result->nr != (uint32_t)c->nr) {
		char met[128];
		snprintf(met, sizeof(met), "%s(fd %d) by task %d at t=%" PRIu64,
			 syscall_name(c->nr), c->fd, c->vtid, c->time);
		diverged(c->task, met);
	}
	const Detrun__Log__Result *res = r->result;
	if (res->n_out > c->n_out)
		shim_abort(c->task,
			   "replay diverged at t=%" PRIu64 ": %s recorded %zu output "
			   "regions, the replayed call has %zu",
			   c->time, syscall_name(c->nr), res->n_out, c->n_out);
	for (size_t i = 0; i < res->n_out; i++) {
		if (res->out[i].len > c->out[i].max)
			shim_abort(c->task,
				   "replay diverged at t=%" PRIu64 ": %s recorded %zu "
				   "bytes where the replayed call has room for %llu",
				   c->time, syscall_name(c->nr), res->out[i].len,
				   (unsigned long long)c->out[i].max);
		c->out[i].len = res->out[i].len;
		c->out[i].bytes = res->out[i].data;
	}
	c->ret = res->ret;
	c->sent_digest = res->sent_digest;
	consume();
	return true;
}

static bool replay_ready(struct task *t, uint64_t time, bool native)
{
	if (!at_look(match(DETRUN__LOG__RECORD__KIND_READY, time, sched_of(t)->vtid)))
		return false;
	consume();
	return true;
}

static int replay_wait_outside(uint64_t time, struct pollfd *fds, int nfds, int timeout_ms,
			       int (*real_wait)(struct pollfd *, int, int))
{
	if (timeout_ms == 0)
		return 0;
	const LogRecord *r = match(DETRUN__LOG__RECORD__KIND_ADVANCE, time, 0);
	if (!at_look(r)) {
		if (later_look_now(time))
			return 1;
		char met[96];
		snprintf(met, sizeof(met), "a wait for outside input at t=%" PRIu64, time);
		diverged(NULL, met);
	}
	if (r->advance->clock_ns != vclock_now())
		shim_abort(NULL,
			   "replay diverged at t=%" PRIu64 ": the virtual clock reads %lld ns, "
			   "the recording had %lld ns",
			   time, (long long)vclock_now(), (long long)r->advance->clock_ns);
	consume();
	return 0;
}

static void replay_signals(uint64_t time, const int *pending, int n, void (*deliver)(int))
{
	if (n)
		shim_abort(NULL, "signal %d from outside: replay stopped at t=%" PRIu64, pending[0],
			   time);
	const LogRecord *r;
	/* A signal the recording passed on after some looks waits for as many here. */
	while ((r = match(DETRUN__LOG__RECORD__KIND_SIGNAL, time, 0)) &&
	       (!looks_logged || r->signal->look <= sched_look())) {
		consume();
		deliver(r->signal->signo);
	}
}

static bool replay_signals_due(uint64_t time)
{
	return match(DETRUN__LOG__RECORD__KIND_SIGNAL, time, 0) != NULL;
}

static void replay_file(struct task *t, uint64_t time, const char *path, uint64_t size,
			uint64_t hash)
{
	const LogRecord *r = match(DETRUN__LOG__RECORD__KIND_FILE, time, sched_of(t)->vtid);
	if (!r) {
		char met[4200];
		snprintf(met, sizeof(met), "an open of %s by task %d at t=%" PRIu64, path,
			 sched_of(t)->vtid, time);
		diverged(t, met);
	}
	if (strcmp(r->file->path, path) || r->file->size != size || r->file->hash != hash)
		shim_abort(t,
			   "replay diverged at t=%" PRIu64 ": %s differs from the recording "
			   "(recorded %s, %llu %s, hash %016llx; now %llu %s, hash %016llx); "
			   "restore the files the recording started with",
			   time, path, r->file->path, (unsigned long long)r->file->size,
			   log_file_unit(r->file->path), (unsigned long long)r->file->hash,
			   (unsigned long long)size, log_file_unit(path), (unsigned long long)hash);
	consume();
}

/* The head, if it is an image record of this change: of `path`, or of what it held. */
static const LogRecord *image_of_change(uint64_t time, int vtid, const char *path)
{
	const LogRecord *r = match(DETRUN__LOG__RECORD__KIND_IMAGE, time, vtid);
	size_t len = strlen(path);
	if (!r || strncmp(r->image->path, path, len) ||
	    (r->image->path[len] && r->image->path[len] != '/'))
		return NULL;
	return r;
}

/* The image records the recording took at this change (the path's, then those of what a
 * directory held), gathered and put back in place under dirfd: `prefix` bytes of each
 * path name dirfd. */
static void restore_images(struct task *t, uint64_t time, int vtid, const char *path, int dirfd,
			   size_t prefix)
{
	const LogRecord *r;
	struct file_image img = { 0 };
	while ((r = image_of_change(time, vtid, path))) {
		if (img.path && !file_image_continues(&img, r->image)) {
			int err = file_image_restore(dirfd, img.path + prefix, &img);
			if (err)
				shim_abort(t, "cannot put back the starting state of %s: %s",
					   img.path, strerror(-err));
			file_image_free(&img);
		}
		if (strlen(r->image->path) <= prefix || file_image_add(&img, r->image))
			shim_abort(t, "replay: malformed before-image of %s in the log",
				   r->image->path);
		consume();
	}
	int err = img.path ? file_image_restore(dirfd, img.path + prefix, &img) : 0;
	if (err)
		shim_abort(t, "cannot put back the starting state of %s: %s", img.path,
			   strerror(-err));
	file_image_free(&img);
}

/* The recording took the path's before-image here. A replay on a view of the files has
 * it there already; one in place puts it back now, before the call changes the path. */
static void replay_file_changing(struct task *t, uint64_t time, const char *path, int dirfd,
				 const char *name)
{
	int vtid = sched_of(t)->vtid;
	const LogRecord *r = match(DETRUN__LOG__RECORD__KIND_IMAGE, time, vtid);
	char recorded[PATH_MAX], full[2 * PATH_MAX];
	if (r)
		snprintf(recorded, sizeof(recorded), "%s", r->image->path);
	if (!r || strcmp(file_image_path(recorded, own_cwd, full, sizeof(full)), path)) {
		char met[4200];
		snprintf(met, sizeof(met), "the first change of %s by task %d at t=%" PRIu64, path,
			 vtid, time);
		diverged(t, met);
	}
	if (images_in_place) {
		restore_images(t, time, vtid, recorded, dirfd, strlen(recorded) - strlen(name));
		return;
	}
	while (image_of_change(time, vtid, recorded))
		consume();
}

static const char *output_name(int fd)
{
	return fd == 1 ? " (standard output)" : fd == 2 ? " (standard error)" : "";
}

/* The replay met a write to the group's output that the recording does not have there:
 * its task's next record is `r` at `at` (NULL: none), or, after the write ran, the head. */
static __attribute__((noreturn)) void unrecorded_output(struct task *t, uint64_t time, int fd,
							uint64_t len, const LogRecord *r,
							uint64_t at)
{
	int vtid = sched_of(t)->vtid;
	char met[160];
	snprintf(met, sizeof(met),
		 "a write of %" PRIu64 " bytes to descriptor %d%s at byte %" PRIu64
		 " by task %d at t=%" PRIu64,
		 len, fd, output_name(fd), log_output_offset(&output_offsets, fd, 0), vtid, time);
	if (r == head())
		diverged(t, met);
	shim_abort(t, "replay diverged: the replay met %s, the recording has %s next for task %d",
		   met, describe(r, at), vtid);
}

static __attribute__((noreturn)) void other_output(struct task *t, uint64_t time, int fd,
						   const char *wrote, uint64_t len, uint32_t digest,
						   const Detrun__Log__Output *o)
{
	shim_abort(t,
		   "replay diverged at t=%" PRIu64 ": task %d %s other output to descriptor %d%s "
		   "at byte %" PRIu64 " (%" PRIu64 " bytes, digest %08x) than the recording "
		   "(%" PRIu64 " bytes to descriptor %d, digest %08x)",
		   time, sched_of(t)->vtid, wrote, fd, output_name(fd),
		   log_output_offset(&output_offsets, fd, 0), len, digest, o->len, o->fd,
		   o->digest);
}

/* Before the replay's write to the group's output runs: what it asks to write must begin
 * with the recording's bytes (their length and digest), or it never runs and the replay
 * stops here, so nothing the recording did not write reaches the user. The write's Output
 * record was logged at its exit, which other tasks' events may precede: it is the task's
 * next record. A recorded write that failed left none (it wrote nothing): a write here
 * that can would show bytes the recording never showed. One that does not fit where
 * nobody sees it (a device other than a terminal) runs all the same, for the exit to
 * check: the recording's may have failed there (ENOSPC from /dev/full) and this one fail
 * alike. The length actually written is left to replay_output, after the call: the
 * kernel may write fewer bytes than asked. */
static uint64_t replay_output_entry(struct task *t, uint64_t time, const struct shim_write *w)
{
	if (!outputs_logged || w->asked == 0 || !source->next_of_task)
		return 0; /* a live source cannot look ahead: the exit checks it */
	uint64_t at;
	const LogRecord *r = source->next_of_task(source, sched_of(t)->vtid, &at);
	size_t got;
	if (!r || r->kind_case != DETRUN__LOG__RECORD__KIND_OUTPUT) {
		free(w->read(t, 1, &got));
		if (got && w->seen(t, w->fd)) /* an unreadable buffer: the kernel refuses it */
			unrecorded_output(t, time, w->fd, w->asked, r, at);
		return 0;
	}
	const Detrun__Log__Output *o = r->output;
	uint64_t n = o->len < w->asked ? o->len : w->asked;
	uint8_t *bytes = w->read(t, n, &got);
	uint32_t digest = fnv32(FNV32_INIT, bytes, got);
	free(bytes);
	if (o->fd == w->fd && o->len <= w->asked && got == n && o->digest == digest)
		return o->len;
	if (w->seen(t, w->fd))
		other_output(t, time, w->fd, "would write", w->asked, digest, o);
	return 0;
}

/* The replay's write to the group's output ran, checked at its entry (replay_output_entry).
 * What only the kernel decided is checked here, after the fact: how many bytes it wrote
 * (a short write), and the whole of a sendmmsg (no entry check: its messages' lengths come
 * from the kernel). They must be the recording's, or the replay stops right after it.
 * bytes NULL: they are the ones found right at the entry. */
static void replay_output(struct task *t, uint64_t time, int fd, const uint8_t *bytes, size_t len)
{
	if (!outputs_logged)
		return;
	const LogRecord *r = match(DETRUN__LOG__RECORD__KIND_OUTPUT, time, sched_of(t)->vtid);
	if (!r)
		unrecorded_output(t, time, fd, len, head(), head_time());
	uint32_t digest = bytes ? fnv32(FNV32_INIT, bytes, len) : r->output->digest;
	if (r->output->fd != fd || r->output->len != len || r->output->digest != digest)
		other_output(t, time, fd, "wrote", len, digest, r->output);
	log_output_offset(&output_offsets, fd, len);
	consume();
}

static void replay_event(struct task *t, uint64_t time, long nr)
{
	uint64_t digest = shim_digest_event(time, sched_of(t)->vtid, nr);
	const LogRecord *r = head();
	if (r && head_time() < time) {
		char met[96];
		snprintf(met, sizeof(met), "%s in task %d at t=%" PRIu64,
			 nr >= 0 ? syscall_name(nr) : "a signal", sched_of(t)->vtid, time);
		diverged(t, met);
	}
	r = match(DETRUN__LOG__RECORD__KIND_DIGEST, time, 0);
	if (!r)
		return;
	if (r->digest->value != digest)
		shim_abort(t,
			   "replay diverged by t=%" PRIu64 ": the events since the last digest "
			   "differ from the recording (digest %016llx, recorded %016llx)",
			   time, (unsigned long long)digest, (unsigned long long)r->digest->value);
	consume();
}

static int replay_finish(uint64_t time, int code)
{
	const LogRecord *r = head();
	if (r && r->kind_case != DETRUN__LOG__RECORD__KIND_END) {
		fprintf(stderr,
			"detrun: replay diverged: the group exited at t=%" PRIu64 ", the "
			"recording goes on with %s\n",
			time, describe(r, head_time()));
		return 125;
	}
	if (!r) {
		fprintf(stderr,
			"detrun: warning: the recording was cut short at t=%" PRIu64 "; "
			"replay ran to its end\n",
			time);
		return code;
	}
	if (r->end->exit_code != code || head_time() != time) {
		fprintf(stderr,
			"detrun: replay diverged: exit code %d at t=%" PRIu64 ", the "
			"recording ended with %d at t=%" PRIu64 "\n",
			code, time, r->end->exit_code, head_time());
		return 125;
	}
	return code;
}

static const struct shim_ops replay_shim = {
	.name = "replay",
	.control = replay_control,
	.ready = replay_ready,
	.decides_readiness = true,
	.wait_outside = replay_wait_outside,
	.signals = replay_signals,
	.signals_due = replay_signals_due,
	.file_opened = replay_file,
	.file_changing = replay_file_changing,
	.output_entry = replay_output_entry,
	.output = replay_output,
	.event = replay_event,
	.finish = replay_finish,
};

int replay_shim_start(const struct log *log)
{
	struct input_source *s = log_source(log);
	if (!s) {
		fprintf(stderr, "detrun: out of memory\n");
		return -1;
	}
	int err = replay_shim_start_source(s);
	images_in_place = false; /* the launch presents them (engine/file_view.h) */
	looks_logged = log->header->format_version >= 3;
	outputs_logged = log->header->format_version >= 4;
	return err;
}

/* A live source (a replica's stream) carries records of this detrun's own format. */
int replay_shim_start_source(struct input_source *s)
{
	source = s;
	if (!getcwd(own_cwd, sizeof(own_cwd)))
		snprintf(own_cwd, sizeof(own_cwd), "/");
	/* A replica runs on its own files: each goes back to the group's starting state at
	 * the first change, whatever a replica that died here left (a rejoin). */
	images_in_place = true;
	looks_logged = true;
	outputs_logged = true;
	shim_set(&replay_shim);
	return 0;
}
