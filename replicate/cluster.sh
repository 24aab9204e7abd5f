#!/bin/sh
# A 3-node NATS JetStream cluster on loopback, for detrun replicate's tests, demo and
# benchmark: `cluster.sh start DIR PORT` starts servers n1..n3 (clients on PORT, PORT+1,
# PORT+2; routes on PORT+10..; monitoring on PORT+20..) with their stores under DIR and
# waits until JetStream is up on every one (at most 30 s); `cluster.sh stop DIR` stops
# them; `cluster.sh kill DIR N` kills server N with SIGKILL, `cluster.sh restart DIR N`
# starts it again. Prints the client URLs on start. `cluster.sh start DIR PORT HOST` has
# clients connect on HOST instead of 127.0.0.1 (routes and monitoring stay on loopback).
#
# Nodes, each in a network namespace of its own (root and iproute2 needed):
# `cluster.sh nodes-up OWNER N` makes namespaces detrun-OWNER-1..N, each joined to this one by
# a veth pair (here drOWNER-n, there eth0) on a /30 of its own under 10.128.0.0/9 picked by
# OWNER (a process id: the nodes' owner), and prints one line per node: namespace, its
# address, this side's address. A replica runs there with `nsenter --net=/run/netns/NAME`.
# This namespace reaches every node's address, every node reaches the addresses on this
# side (all of them: a NATS cluster started with HOST = the first node's address on this
# side serves every node); nodes do not reach each other.
# `cluster.sh nodes-down OWNER` removes them; `cluster.sh nodes-sweep` removes those whose
# owner is gone (a run that was killed).
set -eu
cmd=$1 dir=${2:-}
host=${4:-127.0.0.1}
conf() { # N BASE
	cat > "$dir/n$1.conf" <<CONF
server_name: n$1
listen: $host:$(($2 + $1 - 1))
http: 127.0.0.1:$(($2 + 20 + $1 - 1))
jetstream { store_dir: "$dir/n$1" }
cluster { name: detrun, listen: 127.0.0.1:$(($2 + 10 + $1 - 1)), routes: [nats://127.0.0.1:$(($2 + 10)), nats://127.0.0.1:$(($2 + 11)), nats://127.0.0.1:$(($2 + 12))] }
CONF
}
start_one() { # n
	nats-server -c "$dir/n$1.conf" > "$dir/n$1.log" 2>&1 &
	echo $! > "$dir/n$1.pid"
}
healthy() { # n
	port=$(sed -n 's/^http: 127.0.0.1:\([0-9]*\)/\1/p' "$dir/n$1.conf")
	curl -sf "http://127.0.0.1:$port/healthz" 2>/dev/null | grep -q ok
}
wait_healthy() {
	i=0
	for n in "$@"; do
		until healthy "$n"; do
			i=$((i + 1)); [ $i -lt 300 ] || { echo "cluster.sh: n$n not up after 30 s" >&2; exit 1; }
			sleep 0.1
		done
	done
}
ip4() { echo "$(($1 >> 24 & 255)).$(($1 >> 16 & 255)).$(($1 >> 8 & 255)).$(($1 & 255))"; }
# node_addr OWNER N SIDE: node N's address on its side (2) or this side (1) of its veth
node_addr() { ip4 $((0x0A800000 + ($1 % 524288) * 16 + ($2 - 1) * 4 + $3)); }
nodes_down() { # OWNER
	for ns in $(ip netns list | sed -n "s/^\(detrun-$1-[0-9]*\).*/\1/p"); do
		ip link del "dr$1-${ns##*-}" 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	done
}
node_up() { # OWNER N
	ns=detrun-$1-$2 veth=dr$1-$2 here=$(node_addr "$1" "$2" 1) there=$(node_addr "$1" "$2" 2)
	if ip -4 -o addr show | grep -q " \($here\|$there\)/"; then
		echo "cluster.sh: $here or $there is in use here already" >&2
		return 1
	fi
	ip netns add "$ns" &&
	ip link add "$veth" type veth peer name eth0 netns "$ns" &&
	ip addr add "$here/30" dev "$veth" && ip link set "$veth" up &&
	ip -n "$ns" addr add "$there/30" dev eth0 && ip -n "$ns" link set eth0 up &&
	ip -n "$ns" link set lo up && ip -n "$ns" route add default via "$here" &&
	echo "$ns $there $here"
}
case $cmd in
nodes-up)
	owner=$2
	nodes_down "$owner"
	for n in $(seq 1 "$3"); do
		node_up "$owner" "$n" || { nodes_down "$owner"; exit 1; }
	done
	;;
nodes-down)
	nodes_down "$2"
	;;
nodes-sweep)
	for owner in $(ip netns list | sed -n 's/^detrun-\([0-9]*\)-[0-9]*.*/\1/p' | sort -u); do
		kill -0 "$owner" 2>/dev/null || nodes_down "$owner"
	done
	;;
start)
	base=$3
	mkdir -p "$dir"
	for n in 1 2 3; do conf $n "$base"; done
	for n in 1 2 3; do start_one $n; done
	wait_healthy 1 2 3
	echo "nats://$host:$base,nats://$host:$((base + 1)),nats://$host:$((base + 2))"
	;;
stop)
	for n in 1 2 3; do
		[ -f "$dir/n$n.pid" ] || continue
		pid=$(cat "$dir/n$n.pid")
		kill "$pid" 2>/dev/null || true
		i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$pid" 2>/dev/null || true
		rm -f "$dir/n$n.pid"
	done
	;;
kill)
	kill -9 "$(cat "$dir/n$3.pid")" 2>/dev/null || true
	;;
restart)
	start_one "$3"
	wait_healthy "$3"
	;;
*) echo "usage: cluster.sh start|stop|kill|restart DIR [PORT [HOST]|N]," \
	"or nodes-up OWNER N | nodes-down OWNER | nodes-sweep" >&2; exit 2 ;;
esac
