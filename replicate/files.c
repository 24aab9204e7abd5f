/* A replica's files when it starts (replicate.h): the group's starting file state.
 *
 * A replica that comes back (killed, restarted) replays the group from its first input on
 * its own files, which hold what its program wrote before it died: replayed on top of
 * them, an append-only file doubles, and a file the program reads at start (redis's
 * dump.rdb) is not what the leader's program read. So before the program starts, every
 * before-image the stream holds so far (recorder/file_image.h) goes back on the replica's
 * files (paths relative to the leader's working directory taken in the replica's); the
 * images the leader records later are put back at the group's first change of each path
 * (shim/replay.c). A snapshot would spare the replay; there are none yet. */
#include "replicate/replicate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/file_image.h"

/* Keeps serialized record REC if it is an image. */
static void keep_image(const uint8_t *rec, size_t len, LogRecord ***out, size_t *n, size_t *cap)
{
	LogRecord *r = detrun__log__record__unpack(NULL, len, rec);
	if (r && r->kind_case != DETRUN__LOG__RECORD__KIND_IMAGE) {
		detrun__log__record__free_unpacked(r, NULL);
		return;
	}
	if (!r)
		return;
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		LogRecord **more = realloc(*out, *cap * sizeof(*more));
		if (!more)
			abort();
		*out = more;
	}
	(*out)[(*n)++] = r;
}

/* The image records among the stream's messages 2..last, alone or in batches (a record
 * sent in parts is not one: images come in parts of at most FILE_IMAGE_PART bytes, below
 * one message). */
static int stream_images(struct rep_link *l, LogRecord ***out, size_t *n)
{
	int64_t last = rep_last_seq(l);
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	for (int64_t seq = 2; seq <= last; seq++) {
		natsMsg *m = rep_get(l, (uint64_t)seq);
		if (!m)
			return -1;
		uint64_t time;
		int kind;
		const uint8_t *body, *rec;
		size_t len, rec_len;
		if (rep_unframe((const uint8_t *)natsMsg_GetData(m),
				(size_t)natsMsg_GetDataLength(m), &time, &kind, &body, &len) == 0) {
			if (kind == REP_RECORD)
				keep_image(body, len, out, n, &cap);
			for (const uint8_t *at = body;
			     kind == REP_BATCH &&
			     !rep_batch_next(&at, body + len, &time, &rec, &rec_len);)
				keep_image(rec, rec_len, out, n, &cap);
		}
		natsMsg_Destroy(m);
	}
	return 0;
}

int rep_starting_files(struct rep_link *l)
{
	LogRecord **recs;
	size_t n;
	if (stream_images(l, &recs, &n))
		return -1;
	char cwd[PATH_MAX], err_text[PATH_MAX + 64];
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/");
	struct file_images imgs;
	int err = file_images_gather((const LogRecord *const *)recs, n, cwd, &imgs);
	int root = err ? -1 : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!err && (root < 0 || file_images_restore(root, &imgs, err_text, sizeof(err_text))))
		err = -1, snprintf(l->why, sizeof(l->why),
				   "cannot put back the group's starting files: %.150s",
				   root < 0 ? strerror(errno) : err_text);
	if (root >= 0)
		close(root);
	file_images_free(&imgs);
	for (size_t i = 0; i < n; i++)
		detrun__log__record__free_unpacked(recs[i], NULL);
	free(recs);
	return err;
}
