/* The follower's input source: a durable pull consumer on the group's stream, read from
 * its second message on (the first is the Header) and fed to the replay shim as the
 * leader appends (a batch of records one by one). When nothing comes, the lease is looked at: while someone holds it the
 * follower waits; once it has lapsed and this replica has every record the stream holds,
 * it takes the lease and goes live (replica.c) — the point where it stands in the timeline
 * is the same on every replica, since all consumed the same records before. A record the
 * leader appended in parts (larger than one message) reaches the replay shim only whole.
 *
 * The consumer's messages are asked for and taken here, one at a time from an inbox of
 * this replica's, not with libnats' natsSubscription_Fetch. In libnats 3.4 that call writes
 * past its array of messages when the subscription already holds more than half a batch as
 * it starts (what a pull request of an earlier fetch delivered after that fetch gave up: the
 * server holds a request a little longer than the client waits for it), and more come
 * before it ends. Followers died of that heap corruption ('double free or corruption
 * (!prev)' when the array was freed) under load, typically when appends resumed after they
 * had waited, as at a takeover. A message that comes after its request ended is simply the
 * next in the inbox here. */
#include "replicate/replicate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scheduler/scheduler.h"
#include "shim/shim.h"
#include "engine/tracer.h"

#define FETCH_BATCH 256       /* messages one pull request asks for */
#define FETCH_EXPIRES_MS 1000 /* how long the server holds one (then asked again) */
#define STALLED_MS 5000       /* records there, none delivered: the consumer is made again */
#define FETCH_WAIT_MS 200     /* nothing came for this long: the lease is looked at */

struct js_source {
	struct input_source ops;
	struct rep_link *l;
	natsSubscription *sub; /* on `inbox`, where the consumer delivers what is asked */
	natsInbox *inbox;
	char next_subject[256]; /* where a pull request goes */
	natsMsg *msg;           /* the message taken from the inbox, not yet handled */
	int asked;              /* messages the last pull request may still deliver ... */
	int64_t asked_until_ms; /* ... until then (monotonic) */
	char ack[256];          /* the reply subject of the last message taken: acks all */
	LogRecord *head;        /* the head, unpacked */
	bool head_last;         /* the last record of its message */
	/* The entries of a batch (in j->msg) not yet taken, and its stream sequence: the
	 * replica has consumed that sequence once it consumed the batch's last record. */
	const uint8_t *batch, *batch_end;
	uint64_t batch_seq;
	LogRecord *used; /* the record consumed last: its bytes are still being copied */
	uint64_t head_time, head_seq;
	uint64_t last_seq; /* stream sequence of the last record consumed */
	bool took_over;
	uint64_t epoch;
	uint64_t lease_rev;      /* the lease's revision when last seen changing ... */
	int64_t lease_seen_ms;   /* ... and when (monotonic) */
	int64_t got_ms;          /* when the consumer last delivered (monotonic) */
	uint64_t stream_end;     /* the stream's last sequence when last seen moving ... */
	int64_t stream_moved_ms; /* ... and when (monotonic) */
	/* The parts of a record too large for one message, gathered until the last. */
	uint8_t *parts;
	size_t parts_len;
	uint32_t parts_next, parts_count; /* parts_next 0: none gathered */
	uint64_t parts_first;             /* the stream sequence of part 0 */
};

static natsStatus subscribe(struct js_source *j);
static void drop_msg(struct js_source *j);
static int64_t now_ms(void);

/* Asked from outside to end while waiting for the stream (the leader is idle, or the
 * cluster does not answer): the signal would reach the group only with the next record,
 * so the replica stops here, where the replay would have stopped at that record. */
static void stop_if_asked(struct js_source *j)
{
	int sig = outside_end_requested();
	if (sig)
		shim_abort(NULL,
			   "replicate: %s from outside while waiting for the next input of "
			   "stream %s (after sequence %llu, t=%llu): the group is killed",
			   strsignal(sig), j->l->stream, (unsigned long long)j->last_seq,
			   (unsigned long long)sched_now());
}

/* Ends the consumer's subscription. The server may still be delivering to it (what is
 * left of the last pull request, its expiry notice), and libnats 3.4's read loop takes a
 * subscription from the connection's table without holding a reference to it: one freed
 * at that moment is written to afterwards (the message appended to its list), which
 * corrupts the heap. So it is unsubscribed first, then a round trip to the server
 * (a flush: the read loop handles its answer only after any message that found the
 * subscription in the table), and only then freed. */
static void unsubscribe(struct js_source *j)
{
	natsSubscription_Unsubscribe(j->sub);
	while (natsConnection_FlushTimeout(j->l->nc, 1000) != NATS_OK) {
		stop_if_asked(j);
		usleep(100 * 1000); /* reconnecting: its new read loop starts after the old ended */
	}
	natsSubscription_Destroy(j->sub);
	j->sub = NULL;
	natsInbox_Destroy(j->inbox);
	j->inbox = NULL;
}

/* Starts the consumer over at the record after the last one consumed. */
static void resubscribe(struct js_source *j)
{
	drop_msg(j);
	unsubscribe(j);
	while (subscribe(j) != NATS_OK) {
		stop_if_asked(j);
		usleep(100 * 1000);
	}
}

static void drop_msg(struct js_source *j)
{
	natsMsg_Destroy(j->msg);
	j->msg = NULL;
}

/* Asks the consumer for the next FETCH_BATCH messages, held by the server up to
 * FETCH_EXPIRES_MS, after acknowledging every message taken so far (the consumer holds back
 * once too many wait for an acknowledgement). */
static natsStatus ask(struct js_source *j)
{
	if (j->ack[0] && natsConnection_PublishString(j->l->nc, j->ack, "+ACK") == NATS_OK)
		j->ack[0] = 0;
	char req[96];
	snprintf(req, sizeof(req), "{\"batch\":%d,\"expires\":%lld}", FETCH_BATCH,
		 (long long)FETCH_EXPIRES_MS * 1000000LL);
	natsStatus s = natsConnection_PublishRequestString(j->l->nc, j->next_subject, j->inbox,
							   req);
	if (s == NATS_OK) {
		j->asked = FETCH_BATCH;
		/* The server's 408 normally says it expired; this is for one lost (a server
		 * restarted, the consumer's leader moved). */
		j->asked_until_ms = now_ms() + FETCH_EXPIRES_MS + FETCH_WAIT_MS;
	}
	return s;
}

/* A status from the server about a pull request (no data, a Status header): 100 is an idle
 * heartbeat; 408 says a request expired, 404 and 409 that it ended otherwise. */
static bool status_of(natsMsg *m, const char **status)
{
	*status = NULL;
	return natsMsg_GetDataLength(m) == 0 && natsMsgHeader_Get(m, "Status", status) == NATS_OK &&
	       *status;
}

/* Takes the next message into j->msg: NATS_OK, NATS_TIMEOUT when none came within
 * FETCH_WAIT_MS, or an error (the cluster is electing or reconnecting). A new request is
 * sent once the last one has delivered its batch, ended or expired; messages of a request
 * that ended are welcome whenever they come. */
static natsStatus next_msg(struct js_source *j)
{
	for (;;) {
		if (j->asked <= 0 || now_ms() >= j->asked_until_ms) {
			natsStatus s = ask(j);
			if (s != NATS_OK)
				return s;
		}
		natsMsg *m = NULL;
		natsStatus s = natsSubscription_NextMsg(&m, j->sub, FETCH_WAIT_MS);
		if (s != NATS_OK)
			return s;
		const char *status;
		if (status_of(m, &status)) {
			bool heartbeat = !strncmp(status, "100", 3);
			bool expired = !strncmp(status, "408", 3);
			natsMsg_Destroy(m);
			if (heartbeat)
				continue;
			j->asked = 0;
			if (expired)
				continue;
			return NATS_ERR; /* 409: the consumer changed (its leader, or deleted) */
		}
		j->asked--;
		j->got_ms = now_ms();
		if (natsMsg_GetReply(m))
			snprintf(j->ack, sizeof(j->ack), "%s", natsMsg_GetReply(m));
		j->msg = m;
		return NATS_OK;
	}
}

static uint64_t stream_seq(natsMsg *m)
{
	jsMsgMetaData *meta = NULL;
	if (natsMsg_GetMetaData(&meta, m) != NATS_OK)
		return 0;
	uint64_t seq = meta->Sequence.Stream;
	jsMsgMetaData_Destroy(meta);
	return seq;
}

static _Noreturn void not_ours(struct js_source *j, uint64_t seq)
{
	shim_abort(NULL, "replicate: message %llu of %s is not a detrun record",
		   (unsigned long long)seq, j->l->stream);
}

/* The parts of a record whose last part never came: its leader stopped between parts
 * (the next message is a new leader's go-live mark, or this replica takes over at the
 * stream's end). Its program may have read the record, but sent nothing that depends on
 * it (sends wait for every append's acknowledgement), so no replica acts on it. */
static void drop_torn(struct js_source *j)
{
	if (!j->parts_next)
		return;
	fprintf(stderr,
		"detrun: replicate: dropped a torn record (parts 1-%u of %u, stream sequences "
		"%llu-%llu): its leader stopped before appending the rest, and sent nothing "
		"that depends on it\n",
		j->parts_next, j->parts_count, (unsigned long long)j->parts_first,
		(unsigned long long)(j->parts_first + j->parts_next - 1));
	j->parts_len = 0;
	j->parts_next = 0;
}

/* Gathers part `body` of message SEQ: true once the record is whole (in j->parts). */
static bool gather(struct js_source *j, uint64_t seq, const uint8_t *body, size_t len)
{
	uint32_t index, count;
	const uint8_t *slice;
	size_t n;
	if (rep_unframe_part(body, len, &index, &count, &slice, &n) || count < 2 ||
	    index != j->parts_next || (index && count != j->parts_count))
		shim_abort(NULL,
			   "replicate: message %llu of %s is a part out of place (part %u of "
			   "%u after %u of %u)",
			   (unsigned long long)seq, j->l->stream, index + 1, count, j->parts_next,
			   j->parts_count);
	uint8_t *grown = realloc(j->parts, j->parts_len + n);
	if (!grown)
		shim_abort(NULL, "replicate: out of memory gathering a record of %u parts", count);
	memcpy(grown + j->parts_len, slice, n);
	j->parts = grown;
	j->parts_len += n;
	if (!index)
		j->parts_first = seq;
	j->parts_count = count;
	j->parts_next = index + 1;
	return j->parts_next == count;
}

/* The message taken, framed: false when it was consumed here (a go-live mark, which
 * changes nothing on a follower, or a part of a record not yet whole). */
static bool framed(struct js_source *j, uint64_t seq, uint64_t *time, const uint8_t **body,
		   size_t *len)
{
	natsMsg *m = j->msg;
	int kind;
	if (rep_unframe((const uint8_t *)natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m), time,
			&kind, body, len))
		not_ours(j, seq);
	if (kind != REP_RECORD && kind != REP_GOLIVE && kind != REP_PART && kind != REP_BATCH)
		not_ours(j, seq);
	if (kind == REP_PART && gather(j, seq, *body, *len)) {
		*body = j->parts;
		*len = j->parts_len;
		return true;
	}
	if (kind == REP_GOLIVE) {
		drop_torn(j);
		rep_replica_saw_golive(*time, *body, *len, seq);
	} else if (j->parts_next && kind != REP_PART)
		shim_abort(NULL,
			   "replicate: message %llu of %s comes between the parts of a record",
			   (unsigned long long)seq, j->l->stream);
	if (kind == REP_RECORD)
		return true;
	if (kind == REP_BATCH && *len) {
		j->batch = *body; /* taken one by one, from the message kept meanwhile */
		j->batch_end = *body + *len;
		j->batch_seq = seq;
		return false;
	}
	j->last_seq = seq;
	drop_msg(j);
	return false;
}

/* The next record of the batch at the head; the message goes once its last is taken. */
static void next_in_batch(struct js_source *j)
{
	uint64_t time;
	const uint8_t *rec;
	size_t len;
	if (rep_batch_next(&j->batch, j->batch_end, &time, &rec, &len))
		not_ours(j, j->batch_seq);
	j->head = detrun__log__record__unpack(NULL, len, rec);
	if (!j->head || j->head->kind_case == DETRUN__LOG__RECORD__KIND_HEADER)
		not_ours(j, j->batch_seq);
	j->head_time = time;
	j->head_seq = j->batch_seq;
	j->head_last = j->batch == j->batch_end;
	if (j->head_last) {
		j->batch = NULL;
		drop_msg(j);
	}
}

/* Unpacks the message taken: true for a record now at the head, false for one consumed
 * here (see framed). */
static bool unpack(struct js_source *j)
{
	uint64_t time, seq = stream_seq(j->msg);
	const uint8_t *body;
	size_t len;
	if (seq && seq <= j->last_seq) {
		drop_msg(j); /* delivered again after a stream leader changed: consumed already */
		return false;
	}
	if (seq > j->last_seq + 1) {
		resubscribe(j); /* a gap: ask again from the first missing record */
		return false;
	}
	if (!framed(j, seq, &time, &body, &len))
		return false;
	j->head = detrun__log__record__unpack(NULL, len, body);
	j->parts_len = 0; /* unpacking copied what it needs */
	j->parts_next = 0;
	drop_msg(j);
	if (!j->head || j->head->kind_case == DETRUN__LOG__RECORD__KIND_HEADER)
		not_ours(j, seq);
	j->head_time = time;
	j->head_seq = seq;
	j->head_last = true;
	return true;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The stream holds records after the last consumed, yet the consumer has delivered nothing
 * for STALLED_MS: after servers were killed and restarted, nats-server 2.9 left a consumer
 * that took pull requests and never delivered again (the replica waited with a lag of
 * 2,021 for as long as it ran). It is made again from the record after the last. */
static void restart_if_stalled(struct js_source *j, int64_t last)
{
	if (last < 0 || (uint64_t)last <= j->last_seq || now_ms() - j->got_ms < STALLED_MS)
		return;
	fprintf(stderr,
		"detrun: replicate: node %s: the stream holds sequences %llu-%lld, but its consumer "
		"delivered nothing for %d s: made again\n",
		j->l->node, (unsigned long long)j->last_seq + 1, (long long)last,
		STALLED_MS / 1000);
	resubscribe(j);
}

/* Nothing came: goes live if the lease lapsed and the stream holds nothing more. The
 * lease counts as lapsed only when this replica has also seen no renewal for a whole TTL
 * itself: while the bucket's stream elects a leader, a read can wrongly find no entry. */
static void maybe_take_over(struct js_source *j)
{
	uint64_t rev = 0, epoch;
	int held = rep_lease_revision(j->l, &rev);
	/* Only a newer revision is a renewal: after a server of the cluster was killed, reads
	 * can alternate between copies that number the entry differently, and taking each
	 * change for a renewal put the takeover off by up to a TTL. */
	if (held == 0 && rev > j->lease_rev) {
		j->lease_rev = rev;
		j->lease_seen_ms = now_ms();
	}
	if (!j->lease_seen_ms)
		j->lease_seen_ms = now_ms();
	/* The stream's end moving is a leader appending, alive whatever the lease's copies
	 * say: on nats-server 2.9 they can disagree after a quorum loss, and a follower that
	 * found no entry took over from a leader serving a client. */
	int64_t last = rep_last_seq(j->l);
	if (last >= 0 && ((uint64_t)last != j->stream_end || !j->stream_moved_ms)) {
		j->stream_end = (uint64_t)last;
		j->stream_moved_ms = now_ms();
	}
	restart_if_stalled(j, last);
	if (held != 1 || now_ms() - j->lease_seen_ms < j->l->ttl_ms ||
	    now_ms() - j->stream_moved_ms < j->l->ttl_ms)
		return;
	if (last < 0 || (uint64_t)last != j->last_seq)
		return; /* records still to come: drain first */
	if (rep_lease_take(j->l, &epoch))
		return; /* another follower was quicker */
	drop_torn(j);
	j->epoch = epoch;
	j->took_over = true;
}

static const LogRecord *src_head(struct input_source *s, uint64_t *time)
{
	struct js_source *j = (struct js_source *)s;
	while (!j->head && !j->took_over) {
		if (j->batch) {
			next_in_batch(j);
			break;
		}
		if (j->msg) {
			if (!unpack(j))
				continue;
			break;
		}
		natsStatus st = next_msg(j);
		if (st == NATS_TIMEOUT) {
			/* waiting: --status shows every record this replica has (lag 0) */
			rep_progress_set(false, 0, j->last_seq);
			maybe_take_over(j);
		} else if (st != NATS_OK)
			usleep(100 * 1000); /* the cluster is electing or reconnecting: again */
		if (st != NATS_OK)
			stop_if_asked(j);
	}
	if (!j->head)
		return NULL;
	*time = j->head_time;
	return j->head;
}

static void src_consume(struct input_source *s)
{
	struct js_source *j = (struct js_source *)s;
	if (!j->head)
		return;
	if (j->used)
		detrun__log__record__free_unpacked(j->used, NULL);
	j->used = j->head;
	j->head = NULL;
	if (j->head_last)
		j->last_seq = j->head_seq;
}

static void src_where(struct input_source *s, char *buf, size_t len)
{
	struct js_source *j = (struct js_source *)s;
	snprintf(buf, len, "stream %s sequence %llu", j->l->stream,
		 (unsigned long long)(j->head ? j->head_seq : j->last_seq + 1));
}

static bool src_complete(struct input_source *s)
{
	return false;
}

static natsStatus subscribe(struct js_source *j)
{
	char durable[96];
	snprintf(durable, sizeof(durable), "replica_%s", j->l->node);
	jsErrCode jerr = 0;
	js_DeleteConsumer(j->l->js, j->l->stream, durable, NULL, &jerr); /* start over */
	jsConsumerConfig cc;
	jsConsumerConfig_Init(&cc);
	cc.Durable = durable;
	cc.FilterSubject = j->l->subject;
	cc.DeliverPolicy = js_DeliverByStartSequence;
	cc.OptStartSeq = j->last_seq + 1;
	cc.AckPolicy = js_AckAll;
	cc.AckWait = 3600LL * 1000000000LL;
	jsConsumerInfo *ci = NULL;
	natsStatus s = js_AddConsumer(&ci, j->l->js, j->l->stream, &cc, NULL, &jerr);
	jsConsumerInfo_Destroy(ci);
	snprintf(j->next_subject, sizeof(j->next_subject), "$JS.API.CONSUMER.MSG.NEXT.%s.%s",
		 j->l->stream, durable);
	j->asked = 0; /* the new consumer has been asked nothing */
	j->got_ms = now_ms();
	j->ack[0] = 0;
	if (s == NATS_OK)
		s = natsInbox_Create(&j->inbox);
	sigset_t saved;
	rep_signals_block(&saved);
	if (s == NATS_OK)
		s = natsConnection_SubscribeSync(&j->sub, j->l->nc, j->inbox);
	rep_signals_restore(&saved);
	if (s != NATS_OK) {
		natsInbox_Destroy(j->inbox);
		j->inbox = NULL;
	}
	return s;
}

struct input_source *rep_source_create(struct rep_link *l)
{
	struct js_source *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->ops = (struct input_source){ .head = src_head,
					.consume = src_consume,
					.where = src_where,
					.complete = src_complete };
	j->l = l;
	j->last_seq = 1;
	natsStatus s = subscribe(j);
	if (s != NATS_OK) {
		snprintf(l->why, sizeof(l->why), "cannot follow stream %s: %s", l->stream,
			 natsStatus_GetText(s));
		free(j);
		return NULL;
	}
	return &j->ops;
}

uint64_t rep_source_seq(struct input_source *s)
{
	return ((struct js_source *)s)->last_seq;
}

bool rep_source_took_over(struct input_source *s, uint64_t *epoch, uint64_t *last_seq)
{
	struct js_source *j = (struct js_source *)s;
	*epoch = j->epoch;
	*last_seq = j->last_seq;
	return j->took_over;
}

void rep_source_follow_again(struct input_source *s)
{
	struct js_source *j = (struct js_source *)s;
	j->took_over = false;
	j->lease_seen_ms = now_ms();
}

bool rep_source_wait(struct input_source *s)
{
	uint64_t time;
	return src_head(s, &time) != NULL;
}
