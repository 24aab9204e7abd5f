/*
 * `detrun replicate`: one program run on several nodes at once, kept identical.
 *
 * The leader runs the program under the record shim, whose input sink publishes its
 * records to the group's JetStream stream in batches (sink.c, group commit) without the
 * group waiting; a reply to a client is held until the stream has acknowledged every record
 * before it (outputs.c, output commit), and any other call that lets something out runs
 * only then, so no output a client sees depends on an input a follower could miss. Followers run the same program
 * under the replay shim fed live from a pull consumer (source.c): they open no client
 * connections and send nothing, their sends are digested and checked against the
 * leader's. The lease (lease.c) is a key in a JetStream KV bucket taken by compare-and-set;
 * when it lapses, a follower that has drained the stream takes it, appends a go-live mark
 * and turns from replaying to recording at that point of the timeline (replica.c): its
 * listening sockets become real, connections from before fail on every replica alike.
 */
#ifndef DETRUN_REPLICATE_REPLICATE_H
#define DETRUN_REPLICATE_REPLICATE_H

#include <stdbool.h>
#include <stdint.h>

#include "recorder/input.h"
#include "replicate/link.h"

#include <stddef.h>

struct tracer_options;
struct shim_call;

/* ---- the subcommand (command.c), which the command line (cli/) runs ---- */
/* `detrun replicate ...`: >= 0 an exit code; -1 run PROGRAM with `opt` (path and argv
 * set). */
int replicate_command(int argc, char **argv, struct tracer_options *opt, char *path,
		      size_t path_len, char ***prog_argv);

/* ---- the leader's sink (sink.c) ---- */
/* Publishes after stream sequence `last_seq` under `epoch`. */
struct input_sink *rep_sink_create(struct rep_link *l, uint64_t epoch, uint64_t last_seq);
/* Publishes a go-live mark at `time` first (a follower taking over): 0, 1 refused (another
 * message holds its sequence: another node went live first), -1 error (l->why). */
int rep_sink_golive(struct input_sink *s, uint64_t time);
/* Publishes the Header as the stream's first message and waits for it. */
int rep_sink_header(struct input_sink *s, const Detrun__Log__Header *h);
uint64_t rep_sink_seq(struct input_sink *s); /* the sequence of the last append */
/* Every stream sequence up to this one is acknowledged (written by libnats' thread). */
uint64_t rep_sink_acked(void);
/* Called (on libnats' thread) whenever rep_sink_acked moves. */
void rep_sink_on_acked(void (*fn)(void));
/* The run ends: the record shim's last flush waits for every acknowledgement. */
void rep_sink_closing(struct input_sink *s);
/* For a leader between syncs: commits a batch open for BATCH_MS, sends unacknowledged publishes again after a second of no
 * progress; 0, or -errno (deposed, or no acknowledgement for a minute) with l->why. */
int rep_sink_check(struct input_sink *s);

/* ---- output commit (outputs.c) ---- */
/* Starts the thread that sends held replies as their inputs are acknowledged. 0/-errno. */
int rep_outputs_start(void);
enum hold {
	HOLD_DONE, /* held: c->ret, c->sent_len and c->sent_digest are set */
	HOLD_NOT,  /* not a send that can be held: it runs, after the sync */
	HOLD_FULL  /* the connection has HOLD_MAX bytes held already */
};
/* A send of the program's, to leave once stream sequence `need` is acknowledged. */
enum hold rep_outputs_hold(struct shim_call *c, uint64_t need);
/* Before a call on tracee descriptor tfd runs for real: what is held there has left. */
struct task;
void rep_outputs_drain(struct task *t, int tfd);
/* Every input acknowledged at the end of the run: held replies leave before exit. */
void rep_outputs_finish(void);

/* ---- the follower's source (source.c) ---- */
struct input_source *rep_source_create(struct rep_link *l);
/* The stream sequence of the last record consumed. */
uint64_t rep_source_seq(struct input_source *s);
/* Set when the source found the lease lapsed at the stream's end and took it: the
 * replica leads from now on (epoch and the last stream sequence are given). */
bool rep_source_took_over(struct input_source *s, uint64_t *epoch, uint64_t *last_seq);
/* The take-over did not happen after all (another node's go-live mark came first): the
 * source follows on, and looks at the lease again only after a whole TTL. */
void rep_source_follow_again(struct input_source *s);
/* Waits until a record is there (true) or this replica took over (false). */
bool rep_source_wait(struct input_source *s);

/* ---- a replica's files (files.c) ---- */
/* Puts the before-images the stream holds so far back on this replica's files (paths
 * relative to the leader's working directory taken in this one's). 0, or -1 with l->why. */
int rep_starting_files(struct rep_link *l);

/* ---- the lease (lease.c) ---- */
/* Takes the lease if nobody holds it: 0 and the epoch, 1 held by another, -1 error. */
int rep_lease_take(struct rep_link *l, uint64_t *epoch);
/* Renews the lease every TTL/4 in a thread of its own until it is lost or let go. */
int rep_lease_keep(struct rep_link *l);
/* Stops renewing a lease taken but not used (the go-live mark refused): not a loss. */
void rep_lease_let_go(void);
bool rep_lease_lost(void);
/* Who holds it now: 0 and the holder's node name ("" when nobody), -1 error. */
int rep_lease_holder(struct rep_link *l, char *node, size_t len, uint64_t *epoch);
/* The lease's current revision: 0 held, 1 absent (lapsed), -1 error. */
int rep_lease_revision(struct rep_link *l, uint64_t *rev);
/* Claims this replica's name in the group (its progress key): 0 claimed, 1 a live
 * replica has it (l->why says so), -1 the bucket did not answer. */
int rep_node_claim(struct rep_link *l);
/* Publishes this replica's progress (role, logical time, stream sequence) every 500 ms. */
void rep_progress_start(struct rep_link *l);
void rep_progress_set(bool leading, uint64_t time, uint64_t seq);
/* The names of the replicas with a progress key in the bucket, listed from its stream's
 * information (a subjects filter): a request the stream's leader answers whenever the
 * cluster has a quorum. kvStore_Keys makes a consumer of one replica, placed on any server
 * of the stream's: one placed on a server that is down never answers, and --status listed
 * no replica while a server was down. 0 and *count names in *names (the caller frees each
 * and the array), or -1 with l->why. */
int rep_progress_nodes(struct rep_link *l, char ***names, int *count);
/* A signal from outside this follower ignored: --status lists it. */
void rep_progress_ignored(int sig);

/* ---- the shim in between (replica.c) ---- */
void rep_replica_follow(struct rep_link *l, struct input_source *src);
void rep_replica_lead(struct rep_link *l, struct input_sink *sink);
/* A follower met the go-live mark `body` at `time`, stream sequence `seq` (source.c). */
void rep_replica_saw_golive(uint64_t time, const uint8_t *body, size_t len, uint64_t seq);

#endif
