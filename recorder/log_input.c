/* The log file as an input sink (record) and a loaded log as an input source (replay). */
#include "recorder/input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct file_sink {
	struct input_sink ops;
	struct log_writer *w;
};

static int file_append(struct input_sink *s, uint64_t time, LogRecord *rec)
{
	return log_append(((struct file_sink *)s)->w, time, rec);
}

static int file_flush(struct input_sink *s)
{
	return log_flush(((struct file_sink *)s)->w);
}

static int file_close(struct input_sink *s)
{
	struct file_sink *f = (struct file_sink *)s;
	int err = log_close(f->w);
	free(f);
	return err;
}

struct input_sink *log_sink_create(const char *path, const Detrun__Log__Header *header)
{
	struct file_sink *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->w = log_create(path, header);
	if (!f->w) {
		int saved = errno;
		free(f);
		errno = saved;
		return NULL;
	}
	f->ops = (struct input_sink){ .name = path,
				      .append = file_append,
				      .flush = file_flush,
				      .close = file_close };
	return &f->ops;
}

struct file_source {
	struct input_source ops;
	const struct log *log;
	size_t next; /* records[0] is the header */
};

static const LogRecord *file_head(struct input_source *s, uint64_t *time)
{
	struct file_source *f = (struct file_source *)s;
	if (f->next >= f->log->n)
		return NULL;
	*time = f->log->times[f->next];
	return f->log->records[f->next];
}

static void file_consume(struct input_source *s)
{
	((struct file_source *)s)->next++;
}

static const LogRecord *file_next_of_task(struct input_source *s, int vtid, uint64_t *time)
{
	struct file_source *f = (struct file_source *)s;
	for (size_t i = f->next; i < f->log->n; i++)
		if ((int)f->log->records[i]->task == vtid) {
			*time = f->log->times[i];
			return f->log->records[i];
		}
	return NULL;
}

static void file_where(struct input_source *s, char *buf, size_t len)
{
	struct file_source *f = (struct file_source *)s;
	snprintf(buf, len, "log offset %zu",
		 f->next < f->log->n ? f->log->offsets[f->next] : f->log->file_size);
}

static bool file_complete(struct input_source *s)
{
	return ((struct file_source *)s)->log->complete;
}

struct input_source *log_source(const struct log *log)
{
	struct file_source *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->ops = (struct input_source){ .head = file_head,
					.consume = file_consume,
					.next_of_task = file_next_of_task,
					.where = file_where,
					.complete = file_complete };
	f->log = log;
	f->next = 1;
	return &f->ops;
}
