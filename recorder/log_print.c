#include "recorder/log_print.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "recorder/file_image.h"
#include "recorder/log.h"
#include "syscalls/syscall_table.h"

static size_t result_bytes(const Detrun__Log__Result *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n_out; i++)
		n += r->out[i].len;
	return n;
}

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), 0 if there is none. */
static int utf8_length(const unsigned char *s)
{
	int n = 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
	if (s[0] == 0xe0)
		lo = 0xa0; /* overlong */
	else if (s[0] == 0xf0)
		lo = 0x90; /* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f; /* a surrogate */
	else if (s[0] == 0xf4)
		hi = 0x8f; /* past U+10FFFF */
	if (n == 0 || s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* Paths and arguments are bytes. Well-formed UTF-8 passes as it is; any other byte B is
 * written \udcBB, a lone low surrogate as Python's "surrogateescape" decodes it, so the
 * output stays JSON and keeps every byte (`s.encode('utf-8', 'surrogateescape')` gives the
 * bytes back); control characters and DEL are escaped too. */
static void json_string(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	putchar('"');
	while (*s) {
		int n = *s >= 0x80 ? utf8_length(s) : 1;
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if (*s < 0x20 || *s == 0x7f)
			printf("\\u%04x", *s);
		else if (n == 0)
			printf("\\udc%02x", *s);
		else
			fwrite(s, 1, (size_t)n, stdout);
		s += n ? n : 1;
	}
	putchar('"');
}

static void print_header_text(const struct log *log)
{
	const Detrun__Log__Header *h = log->header;
	printf("log format %u, recorded by detrun %s in %s\n", h->format_version, h->detrun_version,
	       h->cwd);
	printf("program %s (%" PRIu64 " bytes, hash %016" PRIx64 "):", h->program, h->program_size,
	       h->program_hash);
	for (size_t i = 0; i < h->n_argv; i++)
		printf(" %s", h->argv[i]);
	if (*h->exec_path)
		printf("\nstarted as %s", h->exec_path);
	printf("\nseed %" PRId64 ", epoch %" PRId64 ", quantum %d%s, cpus %d, jobs %d, "
	       "namespaces %s, %zu environment variables, outside descriptors:",
	       h->seed, h->epoch, h->quantum, h->keep_turn ? " (kept at waits over at once)" : "",
	       h->cpus, h->jobs ? h->jobs : 1, h->namespaces ? "yes" : "no", h->n_env);
	for (size_t i = 0; i < h->n_outside_fds; i++)
		printf(" %d", h->outside_fds[i]);
	printf("%s\n", h->n_outside_fds ? "" : " none");
	if (h->ignored_signals) {
		printf("signals ignored at start:");
		for (int sig = 1; sig <= 64; sig++)
			if (h->ignored_signals & (1ULL << (sig - 1)))
				printf(" %d", sig);
		printf("\n");
	}
}

/* Output records print the byte offset their write starts at (log.proto, Output). */
static struct log_output_offsets output_offsets;

static const char *image_kind_name(uint32_t kind)
{
	static const char *const names[] = { "absent", "file", "directory", "symlink", "other" };
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

static void print_record_text(const LogRecord *r, uint64_t time)
{
	char task[16] = "-";
	if (r->task)
		snprintf(task, sizeof(task), "%u", r->task);
	printf("t=%-10" PRIu64 " task %-4s %-8s", time, task, log_kind_name(r));
	switch (r->kind_case) {
	case DETRUN__LOG__RECORD__KIND_RESULT:
		printf(" %s = %" PRId64 ", %zu bytes in\n", syscall_name(r->result->nr),
		       r->result->ret, result_bytes(r->result));
		break;
	case DETRUN__LOG__RECORD__KIND_READY:
		printf(" at look %u\n", r->ready->look);
		break;
	case DETRUN__LOG__RECORD__KIND_ADVANCE:
		printf(" virtual clock was %" PRId64 " ns, after look %u\n", r->advance->clock_ns,
		       r->advance->look);
		break;
	case DETRUN__LOG__RECORD__KIND_SIGNAL:
		printf(" %d (%s) after look %u\n", r->signal->signo, strsignal(r->signal->signo),
		       r->signal->look);
		break;
	case DETRUN__LOG__RECORD__KIND_FILE:
		printf(" %s, %" PRIu64 " %s, hash %016" PRIx64 "\n", r->file->path, r->file->size,
		       log_file_unit(r->file->path), r->file->hash);
		break;
	case DETRUN__LOG__RECORD__KIND_DIGEST:
		printf(" %016" PRIx64 "\n", r->digest->value);
		break;
	case DETRUN__LOG__RECORD__KIND_END:
		printf(" exit code %d after %" PRIu64 " events\n", r->end->exit_code,
		       r->end->events);
		break;
	case DETRUN__LOG__RECORD__KIND_IMAGE:
		printf(" %s, before: %s", r->image->path, image_kind_name(r->image->kind));
		if (r->image->kind == FILE_IMAGE_REGULAR)
			printf(" of %" PRIu64 " bytes, part at %" PRIu64 " (%zu bytes)",
			       r->image->size, r->image->offset, r->image->data.len);
		if (r->image->kind != FILE_IMAGE_ABSENT)
			printf(", mode %04o", r->image->mode);
		putchar('\n');
		break;
	case DETRUN__LOG__RECORD__KIND_OUTPUT:
		printf(" fd %d, %" PRIu64 " bytes at byte %" PRIu64 ", digest %08x\n",
		       r->output->fd, r->output->len,
		       log_output_offset(&output_offsets, r->output->fd, r->output->len),
		       r->output->digest);
		break;
	default:
		putchar('\n');
	}
}

static void print_record_json(const LogRecord *r, uint64_t time)
{
	printf("{\"t\":%" PRIu64 ",\"task\":%u,\"kind\":\"%s\"", time, r->task, log_kind_name(r));
	switch (r->kind_case) {
	case DETRUN__LOG__RECORD__KIND_RESULT:
		printf(",\"syscall\":\"%s\",\"ret\":%" PRId64 ",\"bytes\":%zu",
		       syscall_name(r->result->nr), r->result->ret, result_bytes(r->result));
		break;
	case DETRUN__LOG__RECORD__KIND_READY:
		printf(",\"look\":%u", r->ready->look);
		break;
	case DETRUN__LOG__RECORD__KIND_ADVANCE:
		printf(",\"clock_ns\":%" PRId64 ",\"look\":%u", r->advance->clock_ns,
		       r->advance->look);
		break;
	case DETRUN__LOG__RECORD__KIND_SIGNAL:
		printf(",\"signal\":%d,\"look\":%u", r->signal->signo, r->signal->look);
		break;
	case DETRUN__LOG__RECORD__KIND_FILE:
		printf(",\"path\":");
		json_string(r->file->path);
		printf(",\"size\":%" PRIu64 ",\"hash\":\"%016" PRIx64 "\"", r->file->size,
		       r->file->hash);
		break;
	case DETRUN__LOG__RECORD__KIND_DIGEST:
		printf(",\"digest\":\"%016" PRIx64 "\"", r->digest->value);
		break;
	case DETRUN__LOG__RECORD__KIND_END:
		printf(",\"exit_code\":%d,\"events\":%" PRIu64, r->end->exit_code, r->end->events);
		break;
	case DETRUN__LOG__RECORD__KIND_IMAGE:
		printf(",\"path\":");
		json_string(r->image->path);
		printf(",\"before\":\"%s\",\"mode\":%u,\"size\":%" PRIu64 ",\"offset\":%" PRIu64
		       ",\"bytes\":%zu",
		       image_kind_name(r->image->kind), r->image->mode, r->image->size,
		       r->image->offset, r->image->data.len);
		break;
	case DETRUN__LOG__RECORD__KIND_OUTPUT:
		printf(",\"fd\":%d,\"bytes\":%" PRIu64 ",\"offset\":%" PRIu64
		       ",\"digest\":\"%08x\"",
		       r->output->fd, r->output->len,
		       log_output_offset(&output_offsets, r->output->fd, r->output->len),
		       r->output->digest);
		break;
	default:
		break;
	}
	printf("}\n");
}

static void print_header_json(const struct log *log)
{
	const Detrun__Log__Header *h = log->header;
	printf("{\"t\":0,\"task\":0,\"kind\":\"header\",\"format_version\":%u,\"program\":",
	       h->format_version);
	json_string(h->program);
	printf(",\"exec_path\":");
	json_string(h->exec_path);
	printf(",\"argv\":[");
	for (size_t i = 0; i < h->n_argv; i++) {
		printf(i ? "," : "");
		json_string(h->argv[i]);
	}
	printf("],\"cwd\":");
	json_string(h->cwd);
	printf(",\"seed\":%" PRId64 ",\"epoch\":%" PRId64 ",\"jobs\":%d,\"complete\":%s}\n",
	       h->seed, h->epoch, h->jobs ? h->jobs : 1, log->complete ? "true" : "false");
}

static void print_stats(const char *path, const struct log *log)
{
	size_t kinds[16] = { 0 };
	uint64_t in_bytes = 0, data_bytes = 0, results = 0, data_calls = 0, last = 0, out_bytes = 0;
	uint64_t image_bytes = 0;
	for (size_t i = 1; i < log->n; i++) {
		const LogRecord *r = log->records[i];
		kinds[r->kind_case < 16 ? r->kind_case : 0]++;
		last = log->times[i];
		if (r->kind_case == DETRUN__LOG__RECORD__KIND_OUTPUT)
			out_bytes += r->output->len;
		if (r->kind_case == DETRUN__LOG__RECORD__KIND_IMAGE)
			image_bytes += r->image->data.len;
		if (r->kind_case != DETRUN__LOG__RECORD__KIND_RESULT)
			continue;
		results++;
		size_t b = result_bytes(r->result);
		in_bytes += b;
		if (syscall_reads_data(syscall_lookup((long)r->result->nr))) {
			data_bytes += b;
			data_calls++;
		}
	}
	printf("log %s: %zu bytes, %zu records, %s\n", path, log->file_size, log->n,
	       log->complete ? "complete" : "cut short (no end record)");
	printf("logical time: %" PRIu64 " events\n", last);
	printf("records: %zu result, %zu ready, %zu advance, %zu signal, %zu file, %zu digest, "
	       "%zu output, %zu end\n",
	       kinds[DETRUN__LOG__RECORD__KIND_RESULT], kinds[DETRUN__LOG__RECORD__KIND_READY],
	       kinds[DETRUN__LOG__RECORD__KIND_ADVANCE], kinds[DETRUN__LOG__RECORD__KIND_SIGNAL],
	       kinds[DETRUN__LOG__RECORD__KIND_FILE], kinds[DETRUN__LOG__RECORD__KIND_DIGEST],
	       kinds[DETRUN__LOG__RECORD__KIND_OUTPUT], kinds[DETRUN__LOG__RECORD__KIND_END]);
	printf("outside input: %" PRIu64 " bytes in %" PRIu64 " results, of which %" PRIu64
	       " bytes of data in %" PRIu64 " reads\n",
	       in_bytes, results, data_bytes, data_calls);
	if (in_bytes)
		printf("log bytes per byte of outside input: %.3f\n",
		       (double)log->file_size / (double)in_bytes);
	if (data_bytes)
		printf("log bytes per byte of data read: %.3f\n",
		       (double)log->file_size / (double)data_bytes);
	printf("output checked: %" PRIu64 " bytes in %zu writes\n", out_bytes,
	       kinds[DETRUN__LOG__RECORD__KIND_OUTPUT]);
	if (kinds[DETRUN__LOG__RECORD__KIND_IMAGE])
		printf("before-images of changed files: %zu records, %" PRIu64
		       " bytes of content\n",
		       kinds[DETRUN__LOG__RECORD__KIND_IMAGE], image_bytes);
}

int log_print(const char *path, enum log_print_mode mode)
{
	struct log log;
	char err[512];
	if (log_load(path, &log, err, sizeof(err))) {
		fprintf(stderr, "detrun: %s\n", err);
		return 125;
	}
	if (mode == LOG_PRINT_STATS) {
		print_stats(path, &log);
	} else {
		if (mode == LOG_PRINT_JSON)
			print_header_json(&log);
		else
			print_header_text(&log);
		for (size_t i = 1; i < log.n; i++)
			(mode == LOG_PRINT_JSON ? print_record_json
						: print_record_text)(log.records[i], log.times[i]);
		if (!log.complete && mode == LOG_PRINT_TEXT)
			printf("(the recording was cut short: no end record)\n");
	}
	log_free(&log);
	return 0;
}
