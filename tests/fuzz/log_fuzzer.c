/*
 * libFuzzer target for the record-log reader (recorder/log.c, format: proto/log.proto).
 *
 * log_parse must take any bytes at all and either refuse them with a one-line message or
 * hand back a log whose every record is what replay and `detrun log` rely on; nothing may
 * crash, read out of bounds, leak or hang. On success every field a consumer uses is read
 * (times, offsets, kinds, result output bytes, header strings) so that a dangling or short
 * buffer shows up under ASan, and the invariants record_well_formed promises are checked.
 *
 * Built two ways (tests/fuzz/CMakeLists.txt):
 *   - log_fuzzer: clang -fsanitize=fuzzer,address,undefined -DLOG_FUZZER_CUSTOM_MUTATOR.
 *     Every block carries a CRC-32, so a plain byte mutation almost never gets past the
 *     checksum; the custom mutator below mutates inside one record or one block and then
 *     recomputes the lengths and checksums (and sometimes leaves them broken on purpose).
 *   - log_corpus_replay: corpus_main.c + this file with the normal compiler, no mutator:
 *     the corpus replayed as a regression test.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Everything read is folded in here so the reads cannot be optimized away. */
static volatile uint64_t sink;

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "log_fuzzer: invariant broken: %s\n", what);
		abort();
	}
}

static uint64_t touch_string(const char *s)
{
	check(s != NULL, "string field is NULL");
	size_t n = strlen(s);
	return n + (n ? (unsigned char)s[0] + (unsigned char)s[n - 1] : 0);
}

static uint64_t touch_bytes(const ProtobufCBinaryData *b)
{
	if (!b->len)
		return 0;
	check(b->data != NULL, "bytes field with a length but no data");
	uint64_t h = b->len;
	h += b->data[0];
	h += b->data[b->len / 2];
	h += b->data[b->len - 1];
	return h;
}

static uint64_t touch_header(const Detrun__Log__Header *h)
{
	uint64_t s = h->format_version;
	check(h->format_version >= LOG_FORMAT_OLDEST && h->format_version <= LOG_FORMAT_VERSION,
	      "accepted another format version");
	check(h->n_argv > 0 && h->argv != NULL, "header without argv");
	check(h->program != NULL && h->program[0] != '\0', "header without program");
	s += touch_string(h->detrun_version);
	for (size_t i = 0; i < h->n_argv; i++)
		s += touch_string(h->argv[i]);
	s += touch_string(h->program) + touch_string(h->exec_path);
	s += h->program_hash + h->program_size;
	check(h->n_env == 0 || h->env != NULL, "env count without env");
	for (size_t i = 0; i < h->n_env; i++)
		s += touch_string(h->env[i]);
	s += touch_string(h->cwd);
	s += (uint64_t)h->seed + (uint64_t)h->epoch + (uint64_t)h->quantum + (uint64_t)h->cpus;
	s += (uint64_t)h->namespaces + (uint64_t)h->keep_vdso + (uint64_t)h->spin_budget_ms;
	s += (uint64_t)h->real_clock;
	check(h->n_outside_fds == 0 || h->outside_fds != NULL, "outside_fds count without fds");
	for (size_t i = 0; i < h->n_outside_fds; i++)
		s += (uint64_t)h->outside_fds[i];
	return s;
}

static uint64_t touch_record(const LogRecord *r)
{
	uint64_t s = r->dt + r->task;
	s += touch_string(log_kind_name(r));
	switch (r->kind_case) {
	case DETRUN__LOG__RECORD__KIND_HEADER:
		check(false, "a header record after the first record");
		break;
	case DETRUN__LOG__RECORD__KIND_RESULT:
		check(r->result != NULL, "result record without its message");
		check(r->task > 0, "result record without a task");
		check(r->result->nr < 1024, "result record with a syscall number out of range");
		s += r->result->nr + (uint64_t)r->result->ret + r->result->sent_digest;
		check(r->result->n_out == 0 || r->result->out != NULL, "out count without out");
		for (size_t i = 0; i < r->result->n_out; i++)
			s += touch_bytes(&r->result->out[i]);
		break;
	case DETRUN__LOG__RECORD__KIND_READY:
		check(r->ready != NULL, "ready record without its message");
		check(r->task > 0, "ready record without a task");
		break;
	case DETRUN__LOG__RECORD__KIND_ADVANCE:
		check(r->advance != NULL, "advance record without its message");
		s += (uint64_t)r->advance->clock_ns;
		break;
	case DETRUN__LOG__RECORD__KIND_SIGNAL:
		check(r->signal != NULL, "signal record without its message");
		check(r->signal->signo > 0 && r->signal->signo < 65, "signal number out of range");
		s += (uint64_t)r->signal->signo;
		break;
	case DETRUN__LOG__RECORD__KIND_FILE:
		check(r->file != NULL, "file record without its message");
		check(r->task > 0, "file record without a task");
		s += touch_string(r->file->path) + r->file->size + r->file->hash;
		break;
	case DETRUN__LOG__RECORD__KIND_DIGEST:
		check(r->digest != NULL, "digest record without its message");
		s += r->digest->value;
		break;
	case DETRUN__LOG__RECORD__KIND_OUTPUT:
		check(r->output != NULL, "output record without its message");
		check(r->task > 0, "output record without a task");
		check(r->output->fd >= 0 && r->output->len > 0, "output record of nothing");
		s += (uint64_t)r->output->fd + r->output->len + r->output->digest;
		break;
	case DETRUN__LOG__RECORD__KIND_END:
		check(r->end != NULL, "end record without its message");
		s += (uint64_t)r->end->exit_code + r->end->events;
		break;
	default:
		check(false, "accepted a record of no known kind");
	}
	return s;
}

static bool log_is_empty(const struct log *log)
{
	return !log->header && !log->records && !log->times && !log->offsets && !log->n &&
	       !log->file_size && !log->complete;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct log log;
	char err[256];
	memset(err, 0x5a, sizeof(err));
	int r = log_parse(data, size, &log, err, sizeof(err));
	if (r != 0) {
		check(r == -1, "log_parse returned neither 0 nor -1");
		size_t n = strnlen(err, sizeof(err));
		check(n < sizeof(err), "error message not NUL-terminated");
		check(n > 0, "empty error message");
		check(strchr(err, '\n') == NULL, "error message of more than one line");
		check(log_is_empty(&log), "a refused log was not freed and cleared");
		return 0;
	}

	/* An accepted log: the header first, then records replay can use, in order. */
	check(log.n >= 1 && log.records && log.times && log.offsets,
	      "accepted log without records");
	check(log.file_size == size, "file_size is not the input size");
	check(log.records[0]->kind_case == DETRUN__LOG__RECORD__KIND_HEADER,
	      "first record is not the header");
	check(log.header == log.records[0]->header, "header does not point into records[0]");
	uint64_t s = touch_header(log.header) + log.records[0]->dt + log.records[0]->task;
	uint64_t time = log.records[0]->dt;
	check(log.times[0] == time, "times[0] is not the header's dt");
	for (size_t i = 0; i < log.n; i++) {
		check(log.records[i] != NULL, "NULL record");
		check(log.offsets[i] >= LOG_MAGIC_LEN && log.offsets[i] + 8 < size,
		      "record offset outside the file");
		check(i == 0 || log.offsets[i] >= log.offsets[i - 1],
		      "record offsets go backwards");
		if (i == 0)
			continue;
		time += log.records[i]->dt; /* wraps like the reader's sum */
		check(log.times[i] == time, "times[i] is not the running sum of dt");
		s += touch_record(log.records[i]) + log.times[i] + log.offsets[i];
		check(log.records[i]->kind_case != DETRUN__LOG__RECORD__KIND_END || i == log.n - 1,
		      "records after the end record");
	}
	check(log.complete == (log.n > 1 &&
			       log.records[log.n - 1]->kind_case == DETRUN__LOG__RECORD__KIND_END),
	      "complete does not say whether the log ends with an end record");
	sink += s;

	log_free(&log);
	check(log_is_empty(&log), "log_free did not clear the log");
	return 0;
}

#ifdef LOG_FUZZER_CUSTOM_MUTATOR
/* ---- structure-aware mutation (libFuzzer only) ----------------------------------------- */

#include <zlib.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? (uint32_t)(rng_state % n) : 0;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void set_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static size_t varint_put(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

static size_t varint_get(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < 10 && p + i < end; i++) {
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80))
			return i + 1;
	}
	return 0;
}

#define MAX_BLOCKS 64
struct span {
	size_t off, len;
};

/* The blocks whose framing is intact (the checksum may be wrong), from the start. */
static size_t find_blocks(const uint8_t *data, size_t size, struct span *blocks)
{
	size_t n = 0, off = LOG_MAGIC_LEN;
	while (n < MAX_BLOCKS && off + 8 <= size) {
		uint32_t len = le32(data + off);
		if (len == 0 || len > LOG_BLOCK_MAX || size - off - 8 < len)
			break;
		blocks[n++] = (struct span){ off, len };
		off += 8 + len;
	}
	return n;
}

/* Recomputes the checksum of every block whose framing is intact. */
static void fix_checksums(uint8_t *data, size_t size)
{
	struct span b[MAX_BLOCKS];
	size_t n = find_blocks(data, size, b);
	for (size_t i = 0; i < n; i++)
		set_le32(data + b[i].off + 4,
			 (uint32_t)crc32(0L, data + b[i].off + 8, (uInt)b[i].len));
}

/* Replaces data[at, at+old_len) by a mutation of it, moving the tail; returns the new size
 * or 0 if it would not fit. *new_len is the mutated region's length. */
static size_t mutate_region(uint8_t *data, size_t size, size_t max_size, size_t at, size_t old_len,
			    size_t *new_len)
{
	size_t tail = size - at - old_len;
	size_t room = max_size - size + old_len;
	if (room == 0)
		return 0;
	uint8_t *saved = malloc(tail + 1);
	if (!saved)
		return 0;
	memcpy(saved, data + at + old_len, tail);
	size_t n = old_len;
	if (n == 0)
		data[at] = (uint8_t)rnd(256), n = 1; /* LLVMFuzzerMutate wants a non-empty input */
	n = LLVMFuzzerMutate(data + at, n, room);
	if (at + n + tail > max_size)
		n = max_size - at - tail;
	memcpy(data + at + n, saved, tail);
	free(saved);
	*new_len = n;
	return at + n + tail;
}

/* Mutates the body of one record of one block, then fixes its varint length, the block
 * length and the block checksum. 0 if the input has no such record. */
static size_t mutate_record(uint8_t *data, size_t size, size_t max_size)
{
	struct span b[MAX_BLOCKS];
	size_t nb = find_blocks(data, size, b);
	if (!nb)
		return 0;
	struct span blk = b[rnd((uint32_t)nb)];
	uint8_t *p = data + blk.off + 8, *end = p + blk.len;
	struct span recs[256];
	size_t nr = 0;
	while (p < end && nr < 256) {
		uint64_t rlen;
		size_t used = varint_get(p, end, &rlen);
		if (!used || rlen > (uint64_t)(end - p) - used)
			break;
		recs[nr++] = (struct span){ (size_t)(p - data), used + (size_t)rlen };
		p += used + rlen;
	}
	if (!nr)
		return 0;
	struct span rec = recs[rnd((uint32_t)nr)];
	uint64_t rlen;
	size_t used = varint_get(data + rec.off, data + rec.off + rec.len, &rlen);
	/* The body, mutated, with room for the varint to grow by up to 2 bytes. */
	if (size + 2 > max_size)
		return 0;
	size_t body_len;
	size_t sz = mutate_region(data, size, max_size - 2, rec.off + used, (size_t)rlen,
				  &body_len);
	if (!sz)
		return 0;
	uint8_t hdr[10];
	size_t hn = varint_put(hdr, body_len);
	if (hn != used) {
		if (sz - used + hn > max_size)
			return 0;
		memmove(data + rec.off + hn, data + rec.off + used, sz - rec.off - used);
		sz = sz - used + hn;
	}
	memcpy(data + rec.off, hdr, hn);
	size_t new_block = blk.len - rec.len + hn + body_len;
	if (new_block == 0 || new_block > LOG_BLOCK_MAX)
		return sz; /* framing broken: still a useful input */
	set_le32(data + blk.off, (uint32_t)new_block);
	set_le32(data + blk.off + 4, (uint32_t)crc32(0L, data + blk.off + 8, (uInt)new_block));
	return sz;
}

/* Mutates the payload of one block as a whole (records may be split, merged, inserted),
 * then fixes that block's length and checksum. */
static size_t mutate_block(uint8_t *data, size_t size, size_t max_size)
{
	struct span b[MAX_BLOCKS];
	size_t nb = find_blocks(data, size, b);
	if (!nb)
		return 0;
	struct span blk = b[rnd((uint32_t)nb)];
	size_t n;
	size_t sz = mutate_region(data, size, max_size, blk.off + 8, blk.len, &n);
	if (!sz)
		return 0;
	if (n == 0 || n > LOG_BLOCK_MAX)
		return sz;
	set_le32(data + blk.off, (uint32_t)n);
	set_le32(data + blk.off + 4, (uint32_t)crc32(0L, data + blk.off + 8, (uInt)n));
	return sz;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	rng_state = (uint64_t)seed * 0x9e3779b97f4a7c15ULL + 1;
	uint32_t mode = rnd(16);
	size_t r = 0;
	if (mode < 8)
		r = mutate_record(data, size, max_size);
	else if (mode < 12)
		r = mutate_block(data, size, max_size);
	if (r)
		return r;
	/* Plain mutation of the whole input: framing, magic, block headers. Usually the
	 * checksums are recomputed afterwards, so the change is seen past them. */
	if (size == 0) {
		if (max_size == 0)
			return 0;
		data[0] = 0;
		size = 1;
	}
	size = LLVMFuzzerMutate(data, size, max_size);
	if (mode != 15) {
		if (size >= LOG_MAGIC_LEN && rnd(4))
			memcpy(data, LOG_MAGIC, LOG_MAGIC_LEN);
		fix_checksums(data, size);
	}
	return size;
}
#endif
