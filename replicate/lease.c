/* The leader lease: key "leader" of the group's bucket, whose TTL is the lease's. Taken by
 * create (compare-and-set against "no entry"), renewed by update against the last
 * revision; the revision of the take is the epoch, written into the value so anyone can
 * read who leads since when. A renewal that finds another revision has lost the lease. */
#include "replicate/replicate.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEASE_KEY "leader"

static atomic_bool lost;
static uint64_t held_rev, held_epoch;
/* Which take the renewing thread serves: a lease let go (rep_lease_let_go) ends its thread
 * at its next wake, without counting as lost. */
static atomic_uint generation;

static void lease_value(char *buf, size_t len, const struct rep_link *l, uint64_t epoch)
{
	snprintf(buf, len, "%s %" PRIu64, l->node, epoch);
}

/* The lease's entry as the bucket's stream leader has it. */
struct lease_entry {
	uint64_t rev;
	char value[128];
};

/* The entry: 0 read, 1 nobody holds it, -1 the bucket did not answer. Read from the
 * bucket stream's leader (a message get), not from any copy (libnats' kvStore_Get asks
 * for a direct get, which any copy answers): on nats-server 2.9 the copies can disagree
 * after a quorum loss (each copy checks a create as it applies it, nats-server#5644), and
 * the leader's is the copy that decides the next create or renewal. */
static int lease_get(struct rep_link *l, struct lease_entry *e)
{
	char stream[160], subject[192];
	snprintf(stream, sizeof(stream), "KV_%s", l->bucket);
	snprintf(subject, sizeof(subject), "$KV.%s.%s", l->bucket, LEASE_KEY);
	natsMsg *m = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_GetLastMsg(&m, l->js, stream, subject, NULL, &jerr);
	if (s != NATS_OK)
		return jerr == JSNoMessageFoundErr || s == NATS_NOT_FOUND ? 1 : -1;
	const char *op = NULL;
	bool deleted = natsMsgHeader_Get(m, "KV-Operation", &op) == NATS_OK && op &&
		       (!strcmp(op, "DEL") || !strcmp(op, "PURGE"));
	e->rev = natsMsg_GetSequence(m);
	int n = natsMsg_GetDataLength(m);
	snprintf(e->value, sizeof(e->value), "%.*s", n,
		 natsMsg_GetData(m) ? natsMsg_GetData(m) : "");
	natsMsg_Destroy(m);
	return deleted ? 1 : 0;
}

int rep_lease_take(struct rep_link *l, uint64_t *epoch)
{
	char value[128];
	lease_value(value, sizeof(value), l, 0);
	uint64_t rev = 0;
	natsStatus s;
	/* A failed create is a lease someone holds only if the entry is there; else the
	 * bucket was not answering yet (just made, electing): try again. */
	for (int tries = 0;
	     (s = kvStore_Create(&rev, l->kv, LEASE_KEY, value, (int)strlen(value))) != NATS_OK;
	     tries++) {
		struct lease_entry e;
		if (lease_get(l, &e) == 0)
			return 1;
		if (tries == 50) {
			snprintf(l->why, sizeof(l->why), "cannot take the lease: %s",
				 natsStatus_GetText(s));
			return -1;
		}
		usleep(100 * 1000);
	}
	lease_value(value, sizeof(value), l, rev);
	uint64_t rev2 = 0;
	if (kvStore_Update(&rev2, l->kv, LEASE_KEY, value, (int)strlen(value), rev) != NATS_OK)
		return 1;
	held_rev = rev2;
	held_epoch = rev;
	*epoch = rev;
	return 0;
}

/* The lease lapsed while this replica led (the cluster lost its quorum for longer than the
 * TTL, or the leader was paused): nobody holds it, so the leader takes it again by create,
 * the same compare-and-set a follower taking over uses, and only one of them wins. A
 * leader that loses that race has been deposed and stops (renew's caller). */
static bool retake(struct rep_link *l, const char *value)
{
	uint64_t rev = 0;
	if (kvStore_Create(&rev, l->kv, LEASE_KEY, value, (int)strlen(value)) != NATS_OK)
		return false;
	held_rev = rev;
	fprintf(stderr,
		"detrun: replicate: node %s: the lease had lapsed (nobody held it); taken "
		"again (epoch %" PRIu64 ")\n",
		l->node, held_epoch);
	return true;
}

struct renewal {
	struct rep_link *l;
	unsigned generation;
};

static void *renew(void *arg)
{
	struct renewal r = *(struct renewal *)arg;
	free(arg);
	struct rep_link *l = r.l;
	char value[128];
	lease_value(value, sizeof(value), l, held_epoch);
	/* Every quarter of the TTL; a failed renewal (the bucket's stream electing a leader)
	 * is tried again at once, so that an election does not eat the whole TTL. */
	for (useconds_t pause = (useconds_t)(l->ttl_ms * 1000 / 4);;) {
		usleep(pause);
		if (atomic_load(&generation) != r.generation)
			return NULL;
		uint64_t rev = 0;
		natsStatus s = kvStore_Update(&rev, l->kv, LEASE_KEY, value, (int)strlen(value),
					      held_rev);
		pause = s == NATS_OK ? (useconds_t)(l->ttl_ms * 1000 / 4) : 100 * 1000;
		if (s == NATS_OK) {
			held_rev = rev;
			continue;
		}
		struct lease_entry e;
		int got = lease_get(l, &e);
		if (got == 1 && retake(l, value)) /* it lapsed (no quorum, a pause) */
			continue;
		if (got == 0) {
			/* Our value at another revision: an update that went through while its
			 * answer was lost (a stream electing its leader). Someone else's value:
			 * the lease is gone. An error: try again. */
			bool ours = !strcmp(e.value, value);
			/* A server still catching up (restarted) may answer with an older
			 * revision: only a newer one is adopted. */
			bool newer = e.rev > held_rev;
			if (ours && newer)
				held_rev = e.rev;
			if (!ours && newer)
				break;
		}
	}
	if (atomic_load(&generation) == r.generation)
		atomic_store(&lost, true);
	return NULL;
}

int rep_lease_keep(struct rep_link *l)
{
	struct renewal *r = malloc(sizeof(*r));
	if (!r)
		return -1;
	*r = (struct renewal){ l, atomic_fetch_add(&generation, 1) + 1 };
	sigset_t saved;
	rep_signals_block(&saved);
	pthread_t th;
	int err = pthread_create(&th, NULL, renew, r);
	if (!err)
		pthread_detach(th);
	else
		free(r);
	rep_signals_restore(&saved);
	return err ? -1 : 0;
}

/* The entry is not deleted: on nats-server 2.9 the bucket's copies can disagree after a
 * quorum loss (a create is checked by each copy as it applies it, not by the leader before
 * it proposes, nats-server#5644), so what a delete would remove is not known; the entry
 * expires one TTL after its last renewal. */
void rep_lease_let_go(void)
{
	atomic_fetch_add(&generation, 1);
}

bool rep_lease_lost(void)
{
	return atomic_load(&lost);
}

int rep_lease_holder(struct rep_link *l, char *node, size_t len, uint64_t *epoch)
{
	node[0] = 0;
	*epoch = 0;
	struct lease_entry e;
	int held = lease_get(l, &e);
	if (held)
		return held > 0 ? 0 : -1;
	char name[64] = "";
	unsigned long long ep = 0;
	if (sscanf(e.value, "%63s %llu", name, &ep) >= 1) {
		snprintf(node, len, "%s", name);
		*epoch = ep;
	}
	return 0;
}

int rep_lease_revision(struct rep_link *l, uint64_t *rev)
{
	struct lease_entry e;
	int held = lease_get(l, &e);
	if (held == 0)
		*rev = e.rev;
	return held;
}

/* ---- this replica's name ---- */

/* A live replica rewrites its progress key every PROGRESS_MS: a key that changes within
 * this long is a live replica's. */
#define PROGRESS_MS 500
#define LIVE_WITHIN_MS (3 * PROGRESS_MS)

/* Takes NAME's progress key: by create if CREATE (there is none), else taken already (a
 * dead replica's, updated). A create that fails found another replica's. */
static int claim(struct rep_link *l, const char *key, const char *starting, bool create)
{
	uint64_t rev = 0;
	if (!create || kvStore_Create(&rev, l->kv, key, starting, (int)strlen(starting)) == NATS_OK)
		return 0;
	snprintf(l->why, sizeof(l->why),
		 "node %s: another replica of group %s took this name just now", l->node, l->group);
	return 1;
}

int rep_node_claim(struct rep_link *l)
{
	char key[96];
	snprintf(key, sizeof(key), "node.%s", l->node);
	const char *starting = "starting 0 0 0";
	uint64_t rev = 0;
	kvEntry *e = NULL;
	natsStatus s = kvStore_Get(&e, l->kv, key);
	if (s == NATS_NOT_FOUND)
		return claim(l, key, starting, true);
	if (s != NATS_OK) {
		snprintf(l->why, sizeof(l->why), "cannot read the replicas of group %s: %s",
			 l->group, natsStatus_GetText(s));
		return -1;
	}
	uint64_t seen = kvEntry_Revision(e);
	kvEntry_Destroy(e);
	bool live = false;
	for (int waited = 0; waited < LIVE_WITHIN_MS; waited += 100) {
		usleep(100 * 1000);
		e = NULL;
		s = kvStore_Get(&e, l->kv, key);
		/* Only a higher revision is an update: a server still catching up answers with
		 * an older one. */
		live = s == NATS_OK && kvEntry_Revision(e) > seen;
		kvEntry_Destroy(e);
		if (live)
			break;
		/* Gone: nobody renewed it for the bucket's TTL (a replica killed as long ago
		 * as its takeover takes): a dead replica's, taken by create. */
		if (s == NATS_NOT_FOUND || (waited + 100 >= LIVE_WITHIN_MS &&
					    kvStore_Update(&rev, l->kv, key, starting,
							   (int)strlen(starting), seen) == NATS_OK))
			return claim(l, key, starting, s == NATS_NOT_FOUND);
	}
	/* The update failed unrenewed: the entry may have expired just before it. */
	e = NULL;
	if (!live && kvStore_Get(&e, l->kv, key) == NATS_NOT_FOUND)
		return claim(l, key, starting, true);
	kvEntry_Destroy(e);
	snprintf(l->why, sizeof(l->why),
		 "node %s is live in group %s already (a replica of that name updates its "
		 "progress): give this replica another --node",
		 l->node, l->group);
	return 1;
}

/* ---- progress, for --status ---- */

static atomic_bool prog_leading;
static atomic_uint_fast64_t prog_time, prog_seq, prog_ignored;

void rep_progress_set(bool leading, uint64_t time, uint64_t seq)
{
	atomic_store(&prog_leading, leading);
	if (time)
		atomic_store(&prog_time, time);
	if (seq)
		atomic_store(&prog_seq, seq);
}

void rep_progress_ignored(int sig)
{
	atomic_fetch_or(&prog_ignored, (uint_fast64_t)1 << (sig - 1));
}

static void *progress(void *arg)
{
	struct rep_link *l = arg;
	char key[96], value[128];
	snprintf(key, sizeof(key), "node.%s", l->node);
	for (;;) {
		snprintf(value, sizeof(value), "%s %" PRIu64 " %" PRIu64 " %" PRIx64,
			 atomic_load(&prog_leading) ? "leader" : "follower",
			 (uint64_t)atomic_load(&prog_time), (uint64_t)atomic_load(&prog_seq),
			 (uint64_t)atomic_load(&prog_ignored));
		uint64_t rev;
		kvStore_PutString(&rev, l->kv, key, value);
		usleep(PROGRESS_MS * 1000);
	}
	return NULL;
}

int rep_progress_nodes(struct rep_link *l, char ***names, int *count)
{
	char stream[160], filter[160];
	snprintf(stream, sizeof(stream), "KV_%s", l->bucket);
	snprintf(filter, sizeof(filter), "$KV.%s.node.>", l->bucket);
	jsOptions o;
	jsOptions_Init(&o);
	o.Stream.Info.SubjectsFilter = filter;
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_GetStreamInfo(&si, l->js, stream, &o, &jerr);
	if (s != NATS_OK) {
		char t[128];
		snprintf(l->why, sizeof(l->why), "cannot list the replicas of group %s: %s",
			 l->group, rep_status_text(s, jerr, t, sizeof(t)));
		return -1;
	}
	jsStreamStateSubjects *subjects = si->State.Subjects;
	int n = subjects ? subjects->Count : 0;
	*names = calloc((size_t)n + 1, sizeof(**names));
	*count = 0;
	size_t prefix = strlen(filter) - 1; /* "$KV.BUCKET.node." */
	for (int i = 0; *names && i < n; i++)
		if (strlen(subjects->List[i].Subject) > prefix)
			(*names)[(*count)++] = strdup(subjects->List[i].Subject + prefix);
	jsStreamInfo_Destroy(si);
	return *names ? 0 : -1;
}

void rep_progress_start(struct rep_link *l)
{
	sigset_t saved;
	rep_signals_block(&saved);
	pthread_t th;
	if (!pthread_create(&th, NULL, progress, l))
		pthread_detach(th);
	rep_signals_restore(&saved);
}
