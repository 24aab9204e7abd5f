/*
 * detrun's link to a NATS JetStream cluster for one replication group.
 *
 * A group NAME has: the stream DETRUN_NAME (subject detrun.NAME.in, 3 replicas, file
 * storage) holding the leader's input records in order — the Header first, then every
 * record with its logical time; and the key-value bucket DETRUN_LEASE_NAME holding the
 * leader lease (key "leader") and each live replica's progress (key "node.ID"). The
 * bucket's TTL is the lease TTL: a leader that stops renewing loses the lease after it.
 *
 * A message's payload is 8 bytes of logical time (little-endian), 1 byte of kind, then
 * the kind's bytes: a serialized log Record (REP_RECORD), or a go-live mark (REP_GOLIVE:
 * 8 bytes of epoch and the node's name) that a new leader appends before anything else,
 * or a part of a record too large for one message (REP_PART: 4 bytes of index and 4 of
 * count, little-endian, then the index-th slice of the serialized Record; the parts take
 * consecutive stream sequences, and a record is whole only with its last part), or
 * several records appended together (REP_BATCH: entries of 8 bytes of logical time, 4 of
 * length and a serialized Record each, in timeline order; the frame's time is the first's).
 * A batch is one stream sequence: acknowledged, or not stored, as a whole.
 *
 * libnats starts threads of its own; they are created with every signal blocked so that
 * the signals detrun relies on (SIGCHLD, SIGALRM, outside signals) reach its main thread.
 */
#ifndef DETRUN_REPLICATE_LINK_H
#define DETRUN_REPLICATE_LINK_H

#include <nats/nats.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

enum {
	REP_RECORD = 0,
	REP_GOLIVE = 1,
	REP_PART = 2,
	REP_BATCH = 3
};
#define REP_FRAME_LEN 9  /* time and kind */
#define REP_PART_LEN 8   /* a part's index and count */
#define REP_ENTRY_LEN 12 /* a batch entry's time and length */
#define REP_STREAM_REPLICAS 3

struct rep_link {
	natsConnection *nc;
	jsCtx *js;
	kvStore *kv;
	char group[64], node[64];
	char stream[96], subject[96], bucket[96];
	int64_t ttl_ms; /* the lease TTL (the bucket's) */
	char why[256];  /* the last failure, one line */
};

/* Is NAME usable as a group or node name (letters, digits, '-' and '_')? */
bool rep_name_valid(const char *name);
/* Connects to the comma-separated URLS. 0, or -1 with l->why set. */
int rep_connect(struct rep_link *l, const char *urls, const char *group, const char *node);
/* Creates the group's stream and bucket if missing (ttl_ms for a new bucket), or finds
 * them (create false: -1 when the group does not exist). */
int rep_open_group(struct rep_link *l, int64_t ttl_ms, bool create);
/* The stream's last sequence (0: empty), or -1 with l->why set. */
int64_t rep_last_seq(struct rep_link *l);
/* Message seq of the stream (caller destroys it), NULL with l->why set. */
natsMsg *rep_get(struct rep_link *l, uint64_t seq);
void rep_close(struct rep_link *l);
/* The publish-error handler of the leader's sink (sink.c), set on the context. */
void rep_sink_handlers(jsOptions *o, struct rep_link *l);

/* Payload framing (see above). */
int rep_frame(uint64_t time, int kind, const void *body, size_t len, uint8_t **out,
	      size_t *out_len);
/* A REP_PART message: part INDEX of COUNT holding SLICE. */
int rep_frame_part(uint64_t time, uint32_t index, uint32_t count, const void *slice, size_t len,
		   uint8_t **out, size_t *out_len);
/* Writes a batch entry at AT (room for REP_ENTRY_LEN + len; REC NULL: the record is
 * there already): its length. */
int rep_batch_add(uint8_t *at, uint64_t time, const void *rec, size_t len);
/* The entry at *at of a batch ending at END, and *at moved past it: 0, 1 at the end, -1
 * for a malformed entry. */
int rep_batch_next(const uint8_t **at, const uint8_t *end, uint64_t *time, const uint8_t **rec,
		   size_t *len);
/* The REP_PART body's index and count and slice, or -1 if too short. */
int rep_unframe_part(const uint8_t *body, size_t len, uint32_t *index, uint32_t *count,
		     const uint8_t **slice, size_t *slice_len);
/* How many bytes of a record one part carries: the max_payload of the server this link
 * is connected to (it tells each client), less headers and framing. */
size_t rep_part_room(struct rep_link *l);
/* 0 and the parts, or -1 for a payload too short to be one of ours. */
int rep_unframe(const uint8_t *data, size_t len, uint64_t *time, int *kind, const uint8_t **body,
		size_t *body_len);

/* Blocks every signal in this thread (saving the old mask), for creating libnats threads. */
void rep_signals_block(sigset_t *saved);
void rep_signals_restore(const sigset_t *saved);

/* "stream sequence 12", "status text (jetstream error 10071)" helpers */
const char *rep_status_text(natsStatus s, jsErrCode jerr, char *buf, size_t len);

#endif
