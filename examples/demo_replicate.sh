#!/bin/sh
# detrun replicate, on one machine: a 3-node NATS JetStream cluster on loopback, and
# examples/kvserver run by three replicas. A client writes through the leader; the leader
# is killed (SIGKILL); a follower takes over with every write; the killed node comes back
# and catches up; the group ends and the three replicas' snapshots are compared. Run as
# root (with iproute2), each replica is on a node of its own: a network namespace where
# kvserver binds the same port, the client talking to the leader's address.
set -eu
detrun=$(realpath "${1:-build/detrun}")
examples=$(realpath "${2:-build/examples}")
cluster=$(dirname "$(realpath "$0")")/../replicate/cluster.sh
dir=$(mktemp -d /tmp/detrun-demo-replicate-XXXXXX)
port=$(( $$ % 10000 + 40000 ))
nats=$(( port + 100 ))
pids=""
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
	sh "$cluster" stop "$dir/nats" >/dev/null 2>&1 || true
	[ -z "${nodes:-}" ] || sh "$cluster" nodes-down $$
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
say() { printf '\n== %s\n' "$*"; }
# wait_for FILE TEXT: at most 60 s
wait_for() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 600 ] || { echo "demo: '$2' not in $1 after 60 s"; cat "$1"; exit 1; }
		sleep 0.1
	done
}
nodes="" listen=127.0.0.1 nats_host=127.0.0.1
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v nsenter >/dev/null; then
	sh "$cluster" nodes-sweep
	nodes=$(sh "$cluster" nodes-up $$ 3) || nodes=""
fi
if [ -n "$nodes" ]; then
	listen=0.0.0.0 nats_host=$(echo "$nodes" | awk 'NR == 1 { print $3 }')
fi
node_of() { echo "$1" | tr abc 123; }
# addr NODE: where clients reach it
addr() {
	if [ -n "$nodes" ]; then echo "$nodes" | awk -v n="$(node_of "$1")" 'NR == n { print $2 }'
	else echo 127.0.0.1; fi
}
# on NODE CMD...: runs CMD on the node (in its network namespace)
on() {
	n=$1; shift
	if [ -n "$nodes" ]; then exec nsenter --net="/run/netns/detrun-$$-$(node_of "$n")" "$@"
	else exec "$@"; fi
}
replica() { # NODE
	mkdir -p "$dir/$1"
	(cd "$dir/$1" && on "$1" "$detrun" replicate --cluster "$urls" --group demo --node "$1" \
		--lease-ms 4000 -- "$examples/kvserver" "$port" data "$listen" > out 2> err) &
	eval "pid_$1=$!"
	pids="$pids $!"
}
status() { "$detrun" replicate --status --cluster "$urls" --group demo | sed 's/^/   /'; }

if [ -n "$nodes" ]; then
	say "three nodes: network namespaces, each joined to this one by a veth pair"
	echo "$nodes" | awk '{ printf "   node %c: %s, address %s\n", 96 + NR, $1, $2 }'
else
	say "not root (or no iproute2): every replica in this network namespace"
fi
say "a 3-node NATS JetStream cluster on $nats_host:$nats-$((nats + 2))"
urls=$(sh "$cluster" start "$dir/nats" "$nats" "$nats_host")
echo "$urls"
say "three replicas of kvserver, each listening on $listen:$port: the first one leads"
replica a; wait_for "$dir/a/err" "leads group"
replica b; wait_for "$dir/b/err" "follows group"
replica c; wait_for "$dir/c/err" "follows group"
cat "$dir/a/err" "$dir/b/err" "$dir/c/err" | sed 's/^/   /'
say "a client writes 400 keys through the leader, at $(addr a)"
"$examples/kvclient" "$(addr a):$port" 4 100 16
status
say "the leader (node a) is killed with SIGKILL"
kill -9 "$pid_a"
i=0; until grep -q "leads from" "$dir/b/err" "$dir/c/err"; do i=$((i+1)); [ $i -lt 600 ] || exit 1; sleep 0.1; done
grep -h "leads from" "$dir/b/err" "$dir/c/err" | sed 's/^/   /'
new=b; grep -q "node c leads from" "$dir/c/err" && new=c
say "the new leader (node $new, at $(addr $new)) has every key: the client reads them back"
"$examples/kvclient" "$(addr $new):$port" 4 100 16 --check
say "and writes them again through it"
"$examples/kvclient" "$(addr $new):$port" 4 100 16
status
say "node a comes back: it replays the stream from the start and follows"
replica a; wait_for "$dir/a/err" "follows group"
sleep 2
status
say "SHUTDOWN: the group ends on the leader, and at the same logical time on each follower"
"$examples/kvclient" "$(addr $new):$port" 1 1 8 --shutdown
for n in a b c; do
	i=0; until [ -f "$dir/$n/data.snapshot" ]; do i=$((i+1)); [ $i -lt 600 ] || exit 1; sleep 0.1; done
done
sleep 1
md5sum "$dir"/a/data.snapshot "$dir"/b/data.snapshot "$dir"/c/data.snapshot | sed "s|$dir/||; s/^/   /"
if [ "$(md5sum < "$dir/a/data.snapshot")" = "$(md5sum < "$dir/b/data.snapshot")" ] &&
   [ "$(md5sum < "$dir/b/data.snapshot")" = "$(md5sum < "$dir/c/data.snapshot")" ]; then
	echo "-> three identical snapshots: the replicas ended in the same state"
else
	echo "demo: the snapshots differ"; exit 1
fi
