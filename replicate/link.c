#include "replicate/link.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool rep_name_valid(const char *name)
{
	if (!*name || strlen(name) > 48)
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			return false;
	return true;
}

void rep_signals_block(sigset_t *saved)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, saved);
}

void rep_signals_restore(const sigset_t *saved)
{
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

const char *rep_status_text(natsStatus s, jsErrCode jerr, char *buf, size_t len)
{
	if (jerr)
		snprintf(buf, len, "%s (JetStream error %d)", natsStatus_GetText(s), (int)jerr);
	else
		snprintf(buf, len, "%s", natsStatus_GetText(s));
	return buf;
}

/* The URLs one by one (natsOptions_SetURL refuses a comma-separated list). */
static natsStatus set_servers(natsOptions *o, const char *urls)
{
	char *copy = strdup(urls), *save = NULL;
	const char *list[16];
	int n = 0;
	for (char *u = strtok_r(copy, ",", &save); u && n < 16; u = strtok_r(NULL, ",", &save))
		list[n++] = u;
	natsStatus s = n ? natsOptions_SetServers(o, list, n) : NATS_INVALID_ARG;
	free(copy);
	return s;
}

static natsStatus connect_options(natsOptions **o, const char *urls, const char *node)
{
	natsStatus s = natsOptions_Create(o);
	if (s == NATS_OK)
		s = set_servers(*o, urls);
	if (s == NATS_OK)
		s = natsOptions_SetName(*o, node);
	if (s == NATS_OK)
		s = natsOptions_SetTimeout(*o, 2000);
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(*o, -1); /* a server restarts: keep trying */
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(*o, 100);
	if (s == NATS_OK) /* an append goes out at once, not when the flusher thread runs */
		s = natsOptions_SetSendAsap(*o, true);
	return s;
}

int rep_connect(struct rep_link *l, const char *urls, const char *group, const char *node)
{
	snprintf(l->group, sizeof(l->group), "%s", group);
	snprintf(l->node, sizeof(l->node), "%s", node);
	snprintf(l->stream, sizeof(l->stream), "DETRUN_%s", group);
	snprintf(l->subject, sizeof(l->subject), "detrun.%s.in", group);
	snprintf(l->bucket, sizeof(l->bucket), "DETRUN_LEASE_%s", group);
	sigset_t saved;
	rep_signals_block(&saved);
	natsOptions *o = NULL;
	natsStatus s = connect_options(&o, urls, node);
	if (s == NATS_OK)
		s = natsConnection_Connect(&l->nc, o);
	natsOptions_Destroy(o);
	jsOptions jo;
	jsOptions_Init(&jo);
	rep_sink_handlers(&jo, l);
	if (s == NATS_OK)
		s = natsConnection_JetStream(&l->js, l->nc, &jo);
	rep_signals_restore(&saved);
	if (s != NATS_OK) {
		snprintf(l->why, sizeof(l->why), "cannot reach the cluster at %s: %s", urls,
			 natsStatus_GetText(s));
		return -1;
	}
	return 0;
}

static natsStatus add_stream(struct rep_link *l)
{
	jsStreamConfig cfg;
	jsStreamConfig_Init(&cfg);
	const char *subjects[1] = { l->subject };
	cfg.Name = l->stream;
	cfg.Subjects = subjects;
	cfg.SubjectsLen = 1;
	cfg.Storage = js_FileStorage;
	cfg.Replicas = REP_STREAM_REPLICAS;
	cfg.Duplicates = 120LL * 1000000000LL; /* message ids remembered 2 minutes */
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_AddStream(&si, l->js, &cfg, NULL, &jerr);
	jsStreamInfo_Destroy(si);
	return s;
}

static natsStatus add_bucket(struct rep_link *l, int64_t ttl_ms)
{
	kvConfig kc;
	kvConfig_Init(&kc);
	kc.Bucket = l->bucket;
	kc.History = 1;
	kc.TTL = ttl_ms * 1000000LL; /* libnats takes nanoseconds here */
	kc.Replicas = REP_STREAM_REPLICAS;
	kc.StorageType = js_FileStorage;
	return js_CreateKeyValue(&l->kv, l->js, &kc);
}

static int bucket_ttl(struct rep_link *l)
{
	kvStatus *st = NULL;
	if (kvStore_Status(&st, l->kv) != NATS_OK)
		return -1;
	l->ttl_ms = kvStatus_TTL(st) / 1000000LL;
	kvStatus_Destroy(st);
	return 0;
}

int rep_open_group(struct rep_link *l, int64_t ttl_ms, bool create)
{
	sigset_t saved;
	rep_signals_block(&saved);
	natsStatus s = js_KeyValue(&l->kv, l->js, l->bucket);
	/* A cluster just started may still be electing its JetStream meta leader. */
	for (int tries = 0; s != NATS_OK && create && tries < 300; tries++) {
		if (tries)
			usleep(100 * 1000);
		s = add_bucket(l, ttl_ms);
		if (s != NATS_OK)
			s = js_KeyValue(&l->kv, l->js, l->bucket);
	}
	/* --status: a timeout (5 s) is the bucket's stream electing its leader (a server of
	 * the cluster is down), not a missing group: tried again for about 30 s. */
	for (int tries = 0; !create && (s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS) && tries < 5;
	     tries++) {
		sleep(1);
		s = js_KeyValue(&l->kv, l->js, l->bucket);
	}
	for (int tries = 0; s == NATS_OK && create && (s = add_stream(l)) != NATS_OK && tries < 300;
	     tries++) {
		usleep(100 * 1000);
		s = NATS_OK; /* and try again */
	}
	if (s == NATS_OK && bucket_ttl(l))
		s = NATS_ERR;
	rep_signals_restore(&saved);
	if (s != NATS_OK) {
		snprintf(l->why, sizeof(l->why),
			 create ? "cannot set up group %s on the cluster: %s"
				: "no group %s on the cluster (%s)",
			 l->group, natsStatus_GetText(s));
		return -1;
	}
	return 0;
}

int64_t rep_last_seq(struct rep_link *l)
{
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_GetStreamInfo(&si, l->js, l->stream, NULL, &jerr);
	if (s != NATS_OK) {
		char t[128];
		snprintf(l->why, sizeof(l->why), "cannot read stream %s: %s", l->stream,
			 rep_status_text(s, jerr, t, sizeof(t)));
		return -1;
	}
	int64_t last = (int64_t)si->State.LastSeq;
	jsStreamInfo_Destroy(si);
	return last;
}

natsMsg *rep_get(struct rep_link *l, uint64_t seq)
{
	natsMsg *m = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_GetMsg(&m, l->js, l->stream, seq, NULL, &jerr);
	if (s != NATS_OK) {
		char t[128];
		snprintf(l->why, sizeof(l->why), "cannot read message %llu of %s: %s",
			 (unsigned long long)seq, l->stream,
			 rep_status_text(s, jerr, t, sizeof(t)));
		return NULL;
	}
	return m;
}

void rep_close(struct rep_link *l)
{
	if (l->kv)
		kvStore_Destroy(l->kv);
	if (l->js)
		jsCtx_Destroy(l->js);
	if (l->nc)
		natsConnection_Destroy(l->nc);
	l->kv = NULL;
	l->js = NULL;
	l->nc = NULL;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int rep_frame(uint64_t time, int kind, const void *body, size_t len, uint8_t **out, size_t *out_len)
{
	uint8_t *p = malloc(len + REP_FRAME_LEN);
	if (!p)
		return -1;
	put_le(p, time, 8);
	p[8] = (uint8_t)kind;
	if (len)
		memcpy(p + REP_FRAME_LEN, body, len);
	*out = p;
	*out_len = len + REP_FRAME_LEN;
	return 0;
}

int rep_unframe(const uint8_t *data, size_t len, uint64_t *time, int *kind, const uint8_t **body,
		size_t *body_len)
{
	if (!data || len < REP_FRAME_LEN)
		return -1;
	*time = get_le(data, 8);
	*kind = data[8];
	*body = data + REP_FRAME_LEN;
	*body_len = len - REP_FRAME_LEN;
	return 0;
}

int rep_frame_part(uint64_t time, uint32_t index, uint32_t count, const void *slice, size_t len,
		   uint8_t **out, size_t *out_len)
{
	uint8_t *body = malloc(REP_PART_LEN + len);
	if (!body)
		return -1;
	put_le(body, index, 4);
	put_le(body + 4, count, 4);
	memcpy(body + REP_PART_LEN, slice, len);
	int err = rep_frame(time, REP_PART, body, REP_PART_LEN + len, out, out_len);
	free(body);
	return err;
}

int rep_unframe_part(const uint8_t *body, size_t len, uint32_t *index, uint32_t *count,
		     const uint8_t **slice, size_t *slice_len)
{
	if (len < REP_PART_LEN)
		return -1;
	*index = (uint32_t)get_le(body, 4);
	*count = (uint32_t)get_le(body + 4, 4);
	*slice = body + REP_PART_LEN;
	*slice_len = len - REP_PART_LEN;
	return 0;
}

int rep_batch_add(uint8_t *at, uint64_t time, const void *rec, size_t len)
{
	put_le(at, time, 8);
	put_le(at + 8, len, 4);
	if (rec && len)
		memcpy(at + REP_ENTRY_LEN, rec, len);
	return (int)(REP_ENTRY_LEN + len);
}

int rep_batch_next(const uint8_t **at, const uint8_t *end, uint64_t *time, const uint8_t **rec,
		   size_t *len)
{
	if (*at == end)
		return 1;
	if ((size_t)(end - *at) < REP_ENTRY_LEN)
		return -1;
	*time = get_le(*at, 8);
	*len = (size_t)get_le(*at + 8, 4);
	if (*len > (size_t)(end - *at) - REP_ENTRY_LEN)
		return -1;
	*rec = *at + REP_ENTRY_LEN;
	*at += REP_ENTRY_LEN + *len;
	return 0;
}

#define HEADERS_ROOM 4096 /* the message id and expected sequence headers, generously */

size_t rep_part_room(struct rep_link *l)
{
	int64_t max = natsConnection_GetMaxPayload(l->nc);
	if (max < 64 * 1024)
		max = 64 * 1024; /* not connected just now: NATS's smallest sensible setting */
	return (size_t)max - HEADERS_ROOM - REP_FRAME_LEN - REP_PART_LEN;
}
