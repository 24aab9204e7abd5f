/* The leader's input sink: every record is published to the group's stream with a
 * message id (epoch, stream sequence it is meant to take) and the expected last sequence,
 * so a deposed leader can never append (the sequence moved on) and a retried append is
 * never stored twice (the id is remembered); a record larger than the server's messages
 * goes in parts, each fenced the same way. Publishes are asynchronous and pipelined: the
 * group goes on computing while they are in flight. Every acknowledgement is counted
 * (`rep_sink_acked`: the stream holds every sequence up to it), and the leader's held
 * replies leave by that count (outputs.c, output commit); `sync` waits until the stream
 * acknowledged all of them, before a call that lets something out and is not held. An
 * acknowledgement never changes what the group computes, only when its replies leave. */
#include "replicate/replicate.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim/shim.h"
#include "engine/tracer.h"

/* After each slice unacknowledged publishes are sent again, and a request to end from
 * outside is looked at. */
#define SYNC_SLICE_MS 1000
#define RETRY_MS 100        /* a publish failed for a while: tried again after this */
#define SYNC_LIMIT_MS 60000 /* the cluster lost for this long: the leader gives up */
#define BATCH_US 1000       /* a batch open this long is committed at the next event */

struct js_sink {
	struct input_sink ops;
	struct rep_link *l;
	uint64_t epoch;
	uint64_t last_seq; /* the sequence the previous publish takes */
	bool closing;      /* the run ends: flush waits for the acknowledgements too */
	/* Records appended since the last commit, as REP_BATCH entries: published as one
	 * message (group commit) when the group waits for the outside, before a sync, when
	 * full, or BATCH_US after its first record. */
	uint8_t *batch;
	size_t batch_len, batch_cap;
	int batch_n;
	uint64_t batch_time; /* the first record's */
	int64_t batch_us;    /* when it was appended (CLOCK_MONOTONIC) */
	int why_err;         /* the failure l->why describes (sink_sync's), 0 for none */
	natsStatus refusal;  /* libnats' answer to the publish that failed (commit's why) */
};

/* Which sequences the stream acknowledged: all up to `acked`, and those past it whose
 * acknowledgement came early (after an election, copies sent again are answered out of
 * order) as bits of a ring. At most MaxPending (4096) publishes are in flight, so the
 * ring of twice that never wraps onto a sequence still waiting. Written by libnats'
 * thread, read by the leader's and the output flusher's. */
#define ACK_RING 8192
static pthread_mutex_t ack_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t ack_early[ACK_RING];
static _Atomic uint64_t acked;
/* When the count last moved (or a publish found nothing in flight), CLOCK_MONOTONIC ms:
 * the idle leader sends unacknowledged publishes again after a slice of no progress and
 * stops after SYNC_LIMIT_MS (rep_sink_check). */
static _Atomic int64_t progress_ms, resent_ms;
static void (*on_acked)(void);

static int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The stream holds `seq` (acknowledged, or found there after a refusal). */
static void mark_acked(uint64_t seq)
{
	pthread_mutex_lock(&ack_lock);
	uint64_t a = atomic_load(&acked), was = a;
	if (seq > a && seq - a < ACK_RING) {
		ack_early[seq % ACK_RING] = 1;
		while (ack_early[(a + 1) % ACK_RING]) {
			ack_early[(a + 1) % ACK_RING] = 0;
			a++;
		}
		atomic_store(&acked, a);
	}
	pthread_mutex_unlock(&ack_lock);
	if (a != was) {
		atomic_store(&progress_ms, now_ms());
		if (on_acked)
			on_acked();
	}
}

/* The stream sequence a message of ours was meant to take (its expected last + 1). */
static uint64_t seq_of(natsMsg *m)
{
	const char *expected = NULL;
	if (!m || natsMsgHeader_Get(m, "Nats-Expected-Last-Sequence", &expected) != NATS_OK)
		return 0;
	return strtoull(expected, NULL, 10) + 1;
}

/* A publish was refused: another node leads. Set by libnats' thread once refused_why is
 * written (the first refusal alone writes it), read by the leader's. */
static atomic_int refused;
static atomic_flag refusing = ATOMIC_FLAG_INIT;
static bool abandoned; /* the leader stopped waiting for acknowledgements */
static char refused_why[160];

/* What the stream holds at the sequence a refused message M was meant to take. */
enum held_at {
	HOLDS_M,
	HOLDS_NOTHING_YET,
	HOLDS_ANOTHER
};

/* A message refused for a wrong last sequence is not always another leader's doing. Its
 * first copy may be stored already: it reached a stream leader that died before answering,
 * the copy sent again met the new leader, and nats-server checks the expected sequence
 * before its duplicate window. Or the stream has not reached it yet: messages sent again
 * after an election can arrive out of order. Only another message at its sequence — an
 * id not its own — deposes this leader. */
static enum held_at stream_holds(jsCtx *js, const struct rep_link *l, natsMsg *m)
{
	const char *id = NULL, *expected = NULL;
	if (natsMsgHeader_Get(m, "Nats-Msg-Id", &id) != NATS_OK ||
	    natsMsgHeader_Get(m, "Nats-Expected-Last-Sequence", &expected) != NATS_OK)
		return HOLDS_ANOTHER;
	uint64_t seq = strtoull(expected, NULL, 10) + 1;
	natsMsg *there = NULL;
	for (int tries = 0; !there && tries < 50; tries++) {
		jsErrCode jerr = 0;
		if (js_GetMsg(&there, js, l->stream, seq, NULL, &jerr) == NATS_OK)
			break;
		if (jerr == JSNoMessageFoundErr)
			return HOLDS_NOTHING_YET;
		usleep(100 * 1000); /* the stream is electing its leader */
	}
	if (!there)
		return HOLDS_NOTHING_YET; /* sent again; sync's limit applies */
	const char *there_id = NULL;
	bool same = natsMsgHeader_Get(there, "Nats-Msg-Id", &there_id) == NATS_OK &&
		    !strcmp(there_id, id);
	natsMsg_Destroy(there);
	return same ? HOLDS_M : HOLDS_ANOTHER;
}

/* A publish that failed for a while only: no room for another unacknowledged one (a burst
 * of inputs the stream has not caught up with), or the connection to the server broke
 * under the write (the server was killed) or is being made again (its buffer full). The
 * message has its id and expected sequence, so sending it again stores it at most once. */
static bool for_a_while(natsStatus s)
{
	return s == NATS_TIMEOUT || s == NATS_IO_ERROR || s == NATS_INSUFFICIENT_BUFFER ||
	       s == NATS_CONNECTION_DISCONNECTED || s == NATS_STALE_CONNECTION ||
	       s == NATS_NO_SERVER;
}

/* Messages of ours whose sending again failed for a while (see for_a_while): libnats gave
 * them back, so they are kept here and sent at the next slice, never dropped (a dropped
 * one would be a gap that stops this leader). Kept by libnats' thread too (send_again). */
static natsMsgList unsent;
static pthread_mutex_t unsent_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep_unsent(natsMsg **m)
{
	pthread_mutex_lock(&unsent_lock);
	if (unsent.Count % 64 == 0) {
		natsMsg **more = realloc(unsent.Msgs, (size_t)(unsent.Count + 64) * sizeof(*more));
		if (more)
			unsent.Msgs = more;
		else /* left to its owner's natsMsg_Destroy: a gap, which stops this leader */
			m = NULL;
	}
	if (m) {
		unsent.Msgs[unsent.Count++] = *m;
		*m = NULL;
	}
	pthread_mutex_unlock(&unsent_lock);
}

static int unsent_count(void)
{
	pthread_mutex_lock(&unsent_lock);
	int n = unsent.Count;
	pthread_mutex_unlock(&unsent_lock);
	return n;
}

/* Sends *M again: true when libnats took it or it was kept to send later (*M is NULL). */
static bool send_again_or_keep(jsCtx *js, natsMsg **m)
{
	natsStatus s = js_PublishMsgAsync(js, m, NULL);
	if (s != NATS_OK && for_a_while(s))
		keep_unsent(m);
	return *m == NULL;
}

static bool send_again(jsCtx *js, jsPubAckErr *pae)
{
	usleep(50 * 1000);
	return send_again_or_keep(js, &pae->Msg);
}

/* An append the stream refused (another leader appended: the expected sequence is not the
 * last) deposes this leader. No answer at all (a stream electing its leader) is not a
 * refusal: the message is sent again, with its id and expected sequence. */
static void on_refused(jsCtx *js, jsPubAckErr *pae, void *closure)
{
	enum held_at at = HOLDS_ANOTHER;
	if (!pae->ErrCode && (pae->Err == NATS_NO_RESPONDERS || pae->Err == NATS_TIMEOUT))
		at = HOLDS_NOTHING_YET; /* no answer at all */
	else if (pae->ErrCode == JSStreamWrongLastSequenceErr)
		at = stream_holds(js, closure, pae->Msg);
	if (at == HOLDS_M)
		mark_acked(seq_of(pae->Msg));
	if (at == HOLDS_M || (at == HOLDS_NOTHING_YET && send_again(js, pae)))
		return;
	if (atomic_flag_test_and_set(&refusing))
		return;
	snprintf(refused_why, sizeof(refused_why), "%s",
		 pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
	atomic_store(&refused, 1);
}

/* Every answer to a publish: an acknowledgement counts its sequence; an error is
 * on_refused's (the message is ours to destroy unless it was sent again). */
static void on_answer(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
	if (pa) {
		mark_acked(pa->Sequence); /* the stream's first message carries no expected one */
	} else if (pae) {
		pae->Msg = msg;
		on_refused(js, pae, closure);
		msg = pae->Msg; /* NULL when sent again */
	}
	natsMsg_Destroy(msg);
}

/* Asked from outside to end while the stream does not answer: the program cannot go on
 * (its next output waits for the acknowledgements), so the group is killed now rather than
 * after SYNC_LIMIT_MS. Nothing it sent depends on the unacknowledged inputs; a follower
 * takes over once the cluster answers again. */
static void stop_if_asked(int waited_ms)
{
	int sig = outside_end_requested();
	if (!sig)
		return;
	abandoned = true; /* a flush at exit does not wait again */
	shim_abort(NULL,
		   "replicate: %s from outside while the stream had not acknowledged appends "
		   "for %d s: the group is killed",
		   strsignal(sig), waited_ms / 1000);
}

/* One message, taking stream sequence last_seq + 1 under the message id ID. A publish that
 * fails for a while is tried again a slice at a time, as sync waits. */
static int publish_msg(struct js_sink *k, const char *id, const uint8_t *data, size_t len)
{
	jsPubOptions po;
	jsPubOptions_Init(&po);
	po.MsgId = id;
	po.ExpectLastSeq = k->last_seq;
	natsMsg *m = NULL;
	natsStatus s = natsMsg_Create(&m, k->l->subject, NULL, (const char *)data, (int)len);
	for (int waited = 0; s == NATS_OK;) {
		s = js_PublishMsgAsync(k->l->js, &m, &po);
		if (!for_a_while(s) || waited >= SYNC_LIMIT_MS)
			break;
		if (s != NATS_TIMEOUT) /* a timeout waited its slice in libnats already */
			usleep(RETRY_MS * 1000);
		waited += s == NATS_TIMEOUT ? SYNC_SLICE_MS : RETRY_MS;
		stop_if_asked(waited);
		s = NATS_OK;
	}
	natsMsg_Destroy(m); /* NULL when the library took it */
	if (s != NATS_OK) {
		k->why_err = 0; /* l->why is not about this one */
		k->refusal = s;
		return s == NATS_TIMEOUT ? -ETIMEDOUT : -EIO;
	}
	if (atomic_load(&acked) == k->last_seq)
		atomic_store(&progress_ms, now_ms()); /* the first in flight: waiting starts */
	k->last_seq++;
	return 0;
}

/* A record too large for one message (the server's max_payload) goes as parts, each its
 * own message with its own id (epoch, the first part's sequence, part) and expected last
 * sequence: a retried part is stored once, a deposed leader's part not at all. Followers
 * act on the record only once its last part is there (source.c). */
static int publish_parts(struct js_sink *k, uint64_t time, const uint8_t *body, size_t len,
			 size_t room)
{
	uint32_t count = (uint32_t)((len + room - 1) / room);
	uint64_t first = k->last_seq + 1;
	for (uint32_t i = 0; i < count; i++) {
		size_t off = (size_t)i * room, n = len - off < room ? len - off : room;
		uint8_t *data;
		size_t dlen;
		if (rep_frame_part(time, i, count, body + off, n, &data, &dlen))
			return -ENOMEM;
		char id[80];
		snprintf(id, sizeof(id), "%llu-%llu-%u", (unsigned long long)k->epoch,
			 (unsigned long long)first, i);
		int err = publish_msg(k, id, data, dlen);
		free(data);
		if (err)
			return err;
	}
	return 0;
}

static int publish(struct js_sink *k, uint64_t time, int kind, const void *body, size_t len)
{
	size_t room = rep_part_room(k->l);
	if (kind == REP_RECORD && len > room + REP_PART_LEN)
		return publish_parts(k, time, body, len, room);
	uint8_t *data;
	size_t dlen;
	if (rep_frame(time, kind, body, len, &data, &dlen))
		return -ENOMEM;
	char id[64];
	snprintf(id, sizeof(id), "%llu-%llu", (unsigned long long)k->epoch,
		 (unsigned long long)k->last_seq + 1);
	int err = publish_msg(k, id, data, dlen);
	free(data);
	return err;
}

/* Publishes the open batch: one message, or a plain record when it holds one (the
 * Header, a record before a sync). */
static int commit(struct js_sink *k)
{
	if (!k->batch_n)
		return 0;
	int err;
	if (k->batch_n == 1) {
		const uint8_t *at = k->batch, *rec;
		uint64_t time;
		size_t len;
		rep_batch_next(&at, k->batch + k->batch_len, &time, &rec, &len);
		err = publish(k, time, REP_RECORD, rec, len);
	} else {
		err = publish(k, k->batch_time, REP_BATCH, k->batch, k->batch_len);
	}
	k->batch_len = 0;
	k->batch_n = 0;
	if (err) {
		snprintf(k->l->why, sizeof(k->l->why), "cannot publish to stream %s: %s",
			 k->l->stream,
			 k->refusal ? natsStatus_GetText(k->refusal) : strerror(-err));
		k->why_err = err;
	}
	return err;
}

/* A record joins the open batch; one too large for a batch goes alone, after it. */
static int sink_append(struct input_sink *s, uint64_t time, LogRecord *rec)
{
	struct js_sink *k = (struct js_sink *)s;
	rec->dt = 0; /* the frame carries the absolute time */
	size_t len = detrun__log__record__get_packed_size(rec);
	size_t room = rep_part_room(k->l);
	int err = 0;
	if (k->batch_len + REP_ENTRY_LEN + len > room)
		err = commit(k);
	if (err)
		return err;
	if (REP_ENTRY_LEN + len > room) {
		uint8_t *buf = malloc(len);
		if (!buf)
			return -ENOMEM;
		detrun__log__record__pack(rec, buf);
		err = publish(k, time, REP_RECORD, buf, len);
		free(buf);
		return err;
	}
	if (k->batch_len + REP_ENTRY_LEN + len > k->batch_cap) {
		size_t cap = 2 * (k->batch_len + REP_ENTRY_LEN + len);
		uint8_t *more = realloc(k->batch, cap);
		if (!more)
			return -ENOMEM;
		k->batch = more;
		k->batch_cap = cap;
	}
	if (!k->batch_n++) {
		k->batch_time = time;
		k->batch_us = now_us();
	}
	uint8_t *at = k->batch + k->batch_len;
	detrun__log__record__pack(rec, at + REP_ENTRY_LEN);
	k->batch_len += (size_t)rep_batch_add(at, time, NULL, len);
	return 0;
}

/* Publishes still waiting after a slice are sent again (same id and expected sequence:
 * stored at most once) — a stream leader that died took them with it. */
static void resend_pending(struct js_sink *k)
{
	pthread_mutex_lock(&unsent_lock);
	natsMsgList list = unsent;
	unsent = (natsMsgList){ 0 };
	pthread_mutex_unlock(&unsent_lock);
	for (int i = 0; i < list.Count; i++)
		send_again_or_keep(k->l->js, &list.Msgs[i]);
	natsMsgList_Destroy(&list);
	if (js_PublishAsyncGetPendingList(&list, k->l->js) != NATS_OK)
		return;
	for (int i = 0; i < list.Count; i++)
		send_again_or_keep(k->l->js, &list.Msgs[i]);
	natsMsgList_Destroy(&list);
}

static int deposed(struct js_sink *k)
{
	snprintf(k->l->why, sizeof(k->l->why),
		 "deposed: the stream refused an append (%s): another node leads", refused_why);
	return k->why_err = -EPERM;
}

static int unacknowledged(struct js_sink *k, const char *what)
{
	snprintf(k->l->why, sizeof(k->l->why),
		 "the stream did not acknowledge appends for %d s: %s", SYNC_LIMIT_MS / 1000, what);
	return k->why_err = -EIO;
}

static int sink_sync(struct input_sink *s)
{
	struct js_sink *k = (struct js_sink *)s;
	if (abandoned)
		return -EINTR;
	int err = commit(k);
	if (err)
		return err;
	if (atomic_load(&acked) >= k->last_seq && !atomic_load(&refused))
		return 0;
	jsPubOptions po;
	jsPubOptions_Init(&po);
	po.MaxWait = SYNC_SLICE_MS;
	natsStatus st = NATS_TIMEOUT;
	for (int waited = 0; waited < SYNC_LIMIT_MS;) {
		st = js_PublishAsyncComplete(k->l->js, &po);
		if (st == NATS_OK && unsent_count()) {
			usleep(RETRY_MS * 1000); /* none in flight, some still to send */
			waited += RETRY_MS;
			st = NATS_TIMEOUT;
		} else if (st == NATS_TIMEOUT) {
			waited += SYNC_SLICE_MS;
		} else {
			break;
		}
		resend_pending(k);
		stop_if_asked(waited);
	}
	if (atomic_load(&refused))
		return deposed(k);
	if (st != NATS_OK)
		return unacknowledged(k, natsStatus_GetText(st));
	/* Nothing in flight, yet a sequence unacknowledged: a publish was lost (neither
	 * stored nor answered). Appends after it cannot be stored (their expected sequence
	 * is never the last), so followers never see a gap; this leader stops. */
	if (atomic_load(&acked) < k->last_seq) {
		snprintf(k->l->why, sizeof(k->l->why),
			 "the append of stream sequence %llu was lost (no acknowledgement, "
			 "none in flight)",
			 (unsigned long long)atomic_load(&acked) + 1);
		return k->why_err = -EIO;
	}
	return 0;
}

/* The group waits for the outside: nothing to push (libnats sends publishes at once), and
 * nothing to wait for, since held replies leave as acknowledgements come (outputs.c); at
 * the end of the run it waits for them all. */
static int sink_flush(struct input_sink *s)
{
	struct js_sink *k = (struct js_sink *)s;
	return k->closing ? sink_sync(s) : commit(k);
}

static int sink_close(struct input_sink *s)
{
	int err = sink_sync(s);
	free(((struct js_sink *)s)->batch);
	free(s);
	return err;
}

static const char *sink_why(struct input_sink *s, int err)
{
	struct js_sink *k = (struct js_sink *)s;
	return err == k->why_err ? k->l->why : NULL;
}

struct input_sink *rep_sink_create(struct rep_link *l, uint64_t epoch, uint64_t last_seq)
{
	struct js_sink *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->ops = (struct input_sink){ .name = l->stream,
				      .append = sink_append,
				      .flush = sink_flush,
				      .sync = sink_sync,
				      .close = sink_close,
				      .why = sink_why };
	k->l = l;
	k->epoch = epoch;
	k->last_seq = last_seq;
	atomic_store(&acked, last_seq); /* the stream holds what came before */
	atomic_store(&refused, 0);      /* a go-live mark refused earlier was another sink's */
	atomic_flag_clear(&refusing);
	return &k->ops;
}

void rep_sink_closing(struct input_sink *s)
{
	((struct js_sink *)s)->closing = true;
}

uint64_t rep_sink_acked(void)
{
	return atomic_load(&acked);
}

void rep_sink_on_acked(void (*fn)(void))
{
	on_acked = fn;
}

/* An idle leader (or one whose replies are held) is not in sync: publishes still waiting
 * after a slice of no progress are sent again here, and a refusal or SYNC_LIMIT_MS of no
 * progress stops it, as sync would. */
int rep_sink_check(struct input_sink *s)
{
	struct js_sink *k = (struct js_sink *)s;
	if (atomic_load(&refused))
		return deposed(k);
	if (k->batch_n && now_us() - k->batch_us >= BATCH_US && commit(k))
		return k->why_err;
	int64_t now = now_ms();
	bool waiting = atomic_load(&acked) < k->last_seq;
	if (waiting && now - atomic_load(&progress_ms) >= SYNC_LIMIT_MS)
		return unacknowledged(k, "no answer");
	if (waiting && now - atomic_load(&progress_ms) >= SYNC_SLICE_MS &&
	    now - atomic_load(&resent_ms) >= SYNC_SLICE_MS) {
		atomic_store(&resent_ms, now);
		resend_pending(k);
	}
	return 0;
}

int rep_sink_golive(struct input_sink *s, uint64_t time)
{
	struct js_sink *k = (struct js_sink *)s;
	uint8_t body[8 + 64];
	for (int i = 0; i < 8; i++)
		body[i] = (uint8_t)(k->epoch >> (8 * i));
	size_t n = strlen(k->l->node);
	memcpy(body + 8, k->l->node, n);
	if (publish(k, time, REP_GOLIVE, body, 8 + n))
		return -1;
	int err = sink_sync(s);
	return err == -EPERM ? 1 : err ? -1 : 0;
}

int rep_sink_header(struct input_sink *s, const Detrun__Log__Header *h)
{
	LogRecord rec = DETRUN__LOG__RECORD__INIT;
	rec.kind_case = DETRUN__LOG__RECORD__KIND_HEADER;
	rec.header = (Detrun__Log__Header *)h;
	if (sink_append(s, 0, &rec))
		return -1;
	return sink_sync(s) ? -1 : 0;
}

/* The error handler is set on the link's JetStream context when it is made. */
void rep_sink_handlers(jsOptions *o, struct rep_link *l)
{
	o->PublishAsync.AckHandler = on_answer;
	o->PublishAsync.AckHandlerClosure = l;
	o->PublishAsync.MaxPending = 4096;
	o->PublishAsync.StallWait = SYNC_SLICE_MS;
}

/* The open batch takes the sequence after the last: its records' acknowledgement. */
uint64_t rep_sink_seq(struct input_sink *s)
{
	struct js_sink *k = (struct js_sink *)s;
	return k->last_seq + (k->batch_n ? 1 : 0);
}
