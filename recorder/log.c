#include "recorder/log.h"
#include "common/write_all.h"
#include "recorder/file_image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- writing ------------------------------------------------------------------------- */

struct log_writer {
	int fd;
	uint8_t *block; /* payload being filled, after room for the 8-byte block header */
	size_t used;    /* payload bytes */
	uint64_t last_time;
};

static size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

static void put_le32(uint8_t *out, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		out[i] = (uint8_t)(v >> (8 * i));
}

int log_flush(struct log_writer *w)
{
	if (!w->used)
		return 0;
	uint8_t *start = w->block;
	put_le32(start, (uint32_t)w->used);
	put_le32(start + 4, (uint32_t)crc32(0L, start + 8, (uInt)w->used));
	int err = write_all(w->fd, start, w->used + 8);
	w->used = 0;
	return err;
}

/* A record too large for the shared block is written in a block of its own. */
static int write_alone(struct log_writer *w, const LogRecord *rec, size_t size)
{
	int err = log_flush(w);
	uint8_t *block = err ? NULL : malloc(size + 18);
	if (err || !block)
		return err ? err : -ENOMEM;
	size_t n = put_varint(block + 8, size);
	detrun__log__record__pack(rec, block + 8 + n);
	put_le32(block, (uint32_t)(n + size));
	put_le32(block + 4, (uint32_t)crc32(0L, block + 8, (uInt)(n + size)));
	err = write_all(w->fd, block, n + size + 8);
	free(block);
	return err;
}

static int append_packed(struct log_writer *w, const LogRecord *rec)
{
	size_t size = detrun__log__record__get_packed_size(rec);
	if (size + 10 > LOG_RECORD_MAX)
		return -EMSGSIZE;
	if (size + 10 > LOG_BLOCK_MAX)
		return write_alone(w, rec, size);
	if (w->used + size + 10 > LOG_BLOCK_MAX) {
		int err = log_flush(w);
		if (err)
			return err;
	}
	uint8_t *p = w->block + 8 + w->used;
	size_t n = put_varint(p, size);
	detrun__log__record__pack(rec, p + n);
	w->used += n + size;
	return 0;
}

struct log_writer *log_create(const char *path, const Detrun__Log__Header *header)
{
	struct log_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->block = malloc(LOG_BLOCK_MAX + 8);
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!w->block || w->fd < 0)
		goto fail;
	if (write_all(w->fd, LOG_MAGIC, LOG_MAGIC_LEN))
		goto fail;
	LogRecord rec = DETRUN__LOG__RECORD__INIT;
	rec.kind_case = DETRUN__LOG__RECORD__KIND_HEADER;
	rec.header = (Detrun__Log__Header *)header;
	if (append_packed(w, &rec) || log_flush(w))
		goto fail;
	return w;
fail:;
	int saved = errno;
	if (w->fd >= 0)
		close(w->fd);
	free(w->block);
	free(w);
	errno = saved ? saved : EIO;
	return NULL;
}

int log_append(struct log_writer *w, uint64_t time, LogRecord *rec)
{
	rec->dt = time - w->last_time;
	w->last_time = time;
	return append_packed(w, rec);
}

int log_close(struct log_writer *w)
{
	int err = log_flush(w);
	if (close(w->fd) < 0 && !err)
		err = -errno;
	free(w->block);
	free(w);
	return err;
}

/* ---- reading ------------------------------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Frees what was parsed so far and says why the log is refused. */
static int reject(struct log *log, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	log_free(log);
	return -1;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A varint of at most 10 bytes within [p, end): bytes used, 0 if malformed or cut. */
static size_t get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < 10 && p + i < end; i++) {
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80))
			return i + 1;
	}
	return 0;
}

/* Appends a parsed record; the arrays double as they fill, so a log of many tiny records
 * loads in linear time. */
static int add_record(struct log *log, size_t *cap, LogRecord *rec, uint64_t time, size_t offset)
{
	if (log->n == *cap) {
		size_t n = *cap ? 2 * *cap : 256;
		LogRecord **r = realloc(log->records, n * sizeof(*r));
		if (r)
			log->records = r;
		uint64_t *t = r ? realloc(log->times, n * sizeof(*t)) : NULL;
		if (t)
			log->times = t;
		size_t *o = t ? realloc(log->offsets, n * sizeof(*o)) : NULL;
		if (!o)
			return -1;
		log->offsets = o;
		*cap = n;
	}
	log->records[log->n] = rec;
	log->times[log->n] = time;
	log->offsets[log->n] = offset;
	log->n++;
	return 0;
}

/* What every record kind must carry to be usable by replay. */
static bool record_well_formed(const LogRecord *rec, bool first)
{
	if (first != (rec->kind_case == DETRUN__LOG__RECORD__KIND_HEADER))
		return false;
	switch (rec->kind_case) {
	case DETRUN__LOG__RECORD__KIND_HEADER:
		return rec->header->n_argv > 0 && rec->header->program && *rec->header->program;
	case DETRUN__LOG__RECORD__KIND_RESULT:
		return rec->task > 0 && rec->result->nr < 1024;
	case DETRUN__LOG__RECORD__KIND_READY:
	case DETRUN__LOG__RECORD__KIND_FILE:
		return rec->task > 0;
	case DETRUN__LOG__RECORD__KIND_OUTPUT:
		return rec->task > 0 && rec->output->fd >= 0 && rec->output->len > 0;
	case DETRUN__LOG__RECORD__KIND_IMAGE:
		return rec->task > 0 && rec->image->path && rec->image->path[0] &&
		       rec->image->kind <= FILE_IMAGE_OTHER &&
		       rec->image->offset + rec->image->data.len >= rec->image->offset &&
		       (rec->image->kind != FILE_IMAGE_REGULAR ||
			rec->image->offset + rec->image->data.len <= rec->image->size);
	case DETRUN__LOG__RECORD__KIND_SIGNAL:
		return rec->signal->signo > 0 && rec->signal->signo < 65;
	case DETRUN__LOG__RECORD__KIND_ADVANCE:
	case DETRUN__LOG__RECORD__KIND_DIGEST:
	case DETRUN__LOG__RECORD__KIND_END:
		return true;
	default:
		return false;
	}
}

/* Where parsing stands: the logical time reached and whether the end record was seen. */
struct parse_state {
	size_t cap;
	uint64_t time;
	bool ended;
};

/* What is wrong with a record read where parsing stands, or NULL. */
static const char *record_problem(const LogRecord *rec, bool first, const struct parse_state *st)
{
	if (!rec || !record_well_formed(rec, first) || st->ended)
		return st->ended ? "records after the end record" : "malformed record";
	if (st->time + rec->dt < st->time)
		return "logical time overflows";
	return NULL;
}

/* The records of the block at `off`, whose payload is [p, end). */
static int parse_block(const uint8_t *buf, const uint8_t *p, const uint8_t *end, size_t off,
		       struct parse_state *st, struct log *log, char *err, size_t errlen)
{
	while (p < end) {
		uint64_t rlen;
		size_t used = get_varint(p, end, &rlen);
		size_t roff = (size_t)(p - buf);
		if (!used || rlen > (uint64_t)(end - p - (ptrdiff_t)used))
			return reject(log, err, errlen,
				      "corrupt at offset %zu: record length runs "
				      "past its block",
				      roff);
		LogRecord *rec = detrun__log__record__unpack(NULL, rlen, p + used);
		const char *wrong = record_problem(rec, log->n == 0, st);
		if (wrong) {
			if (rec)
				detrun__log__record__free_unpacked(rec, NULL);
			return reject(log, err, errlen, "corrupt at offset %zu: %s", roff, wrong);
		}
		st->time += rec->dt;
		if (add_record(log, &st->cap, rec, st->time, off)) {
			detrun__log__record__free_unpacked(rec, NULL);
			return reject(log, err, errlen, "out of memory");
		}
		st->ended = rec->kind_case == DETRUN__LOG__RECORD__KIND_END;
		p += used + rlen;
	}
	return 0;
}

/* The block at `off`: its header checked, its records parsed; its size through *size. */
static int parse_block_at(const uint8_t *buf, size_t len, size_t off, uint32_t *size,
			  struct parse_state *st, struct log *log, char *err, size_t errlen)
{
	if (len - off < 8)
		return reject(log, err, errlen,
			      "truncated at offset %zu: block header cut short "
			      "(%zu of 8 bytes)",
			      off, len - off);
	*size = get_le32(buf + off);
	uint32_t crc = get_le32(buf + off + 4);
	if (*size == 0 || *size > LOG_RECORD_MAX + 10)
		return reject(log, err, errlen,
			      "corrupt at offset %zu: block length %u is out of "
			      "range",
			      off, *size);
	if (len - off - 8 < *size)
		return reject(log, err, errlen,
			      "truncated at offset %zu: block of %u bytes, only "
			      "%zu present",
			      off, *size, len - off - 8);
	const uint8_t *p = buf + off + 8;
	if ((uint32_t)crc32(0L, p, *size) != crc)
		return reject(log, err, errlen, "corrupt at offset %zu: block checksum mismatch",
			      off);
	return parse_block(buf, p, p + *size, off, st, log, err, errlen);
}

int log_parse(const uint8_t *buf, size_t len, struct log *log, char *err, size_t errlen)
{
	memset(log, 0, sizeof(*log));
	log->file_size = len;
	if (len == 0)
		return reject(log, err, errlen, "empty file: not a detrun log");
	if (len < LOG_MAGIC_LEN || memcmp(buf, LOG_MAGIC, LOG_MAGIC_LEN))
		return reject(log, err, errlen, "not a detrun log (no DETRUNLG magic at offset 0)");
	size_t off = LOG_MAGIC_LEN;
	struct parse_state st = { 0 };
	while (off < len) {
		uint32_t size = 0;
		if (parse_block_at(buf, len, off, &size, &st, log, err, errlen))
			return -1;
		off += 8 + size;
	}
	if (log->n == 0)
		return reject(log, err, errlen, "truncated at offset %zu: no header", off);
	log->header = log->records[0]->header;
	if (log->header->format_version < LOG_FORMAT_OLDEST ||
	    log->header->format_version > LOG_FORMAT_VERSION)
		return reject(log, err, errlen,
			      "log format version %u, this detrun reads versions "
			      "%d to %d",
			      log->header->format_version, LOG_FORMAT_OLDEST, LOG_FORMAT_VERSION);
	log->complete = st.ended;
	return 0;
}

int log_load(const char *path, struct log *log, char *err, size_t errlen)
{
	memset(log, 0, sizeof(*log));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return fail(err, errlen, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errlen, "%s: not a regular file", path);
	}
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf)
		return fail(err, errlen, "%s: out of memory", path);
	char why[200];
	int r = log_parse(buf, got, log, why, sizeof(why));
	free(buf);
	if (r)
		fail(err, errlen, "%s: %s", path, why);
	return r;
}

void log_free(struct log *log)
{
	for (size_t i = 0; i < log->n; i++)
		detrun__log__record__free_unpacked(log->records[i], NULL);
	free(log->records);
	free(log->times);
	free(log->offsets);
	memset(log, 0, sizeof(*log));
}

const char *log_file_unit(const char *path)
{
	size_t len = strlen(path);
	return len && path[len - 1] == '/' ? "entries" : "bytes";
}

const char *log_kind_name(const LogRecord *rec)
{
	switch (rec->kind_case) {
	case DETRUN__LOG__RECORD__KIND_HEADER:
		return "header";
	case DETRUN__LOG__RECORD__KIND_RESULT:
		return "result";
	case DETRUN__LOG__RECORD__KIND_READY:
		return "ready";
	case DETRUN__LOG__RECORD__KIND_ADVANCE:
		return "advance";
	case DETRUN__LOG__RECORD__KIND_SIGNAL:
		return "signal";
	case DETRUN__LOG__RECORD__KIND_FILE:
		return "file";
	case DETRUN__LOG__RECORD__KIND_DIGEST:
		return "digest";
	case DETRUN__LOG__RECORD__KIND_END:
		return "end";
	case DETRUN__LOG__RECORD__KIND_OUTPUT:
		return "output";
	case DETRUN__LOG__RECORD__KIND_IMAGE:
		return "image";
	default:
		return "unknown";
	}
}

uint64_t log_output_offset(struct log_output_offsets *o, int fd, uint64_t len)
{
	size_t i = 0;
	while (i < o->n && o->fds[i].fd != fd)
		i++;
	if (i == o->n) {
		void *more = realloc(o->fds, (o->n + 1) * sizeof(*o->fds));
		if (!more)
			abort();
		o->fds = more;
		o->fds[o->n++] = (struct log_output_fd){ fd, 0 };
	}
	uint64_t at = o->fds[i].bytes;
	o->fds[i].bytes += len;
	return at;
}
