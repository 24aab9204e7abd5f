#!/bin/sh
# A 3-node NATS JetStream cluster on loopback, for detrun replicate's tests, demo and
# benchmark: `cluster.sh start DIR PORT` starts servers n1..n3 (clients on PORT, PORT+1,
# PORT+2; routes on PORT+10..; monitoring on PORT+20..) with their stores under DIR and
# waits until JetStream is up on every one (at most 30 s); `cluster.sh stop DIR` stops
# them; `cluster.sh kill DIR N` kills server N with SIGKILL, `cluster.sh restart DIR N`
# starts it again. Prints the client URLs on start.
set -eu
cmd=$1 dir=$2
conf() { # N BASE
	cat > "$dir/n$1.conf" <<CONF
server_name: n$1
listen: 127.0.0.1:$(($2 + $1 - 1))
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
case $cmd in
start)
	base=$3
	mkdir -p "$dir"
	for n in 1 2 3; do conf $n "$base"; done
	for n in 1 2 3; do start_one $n; done
	wait_healthy 1 2 3
	echo "nats://127.0.0.1:$base,nats://127.0.0.1:$((base + 1)),nats://127.0.0.1:$((base + 2))"
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
*) echo "usage: cluster.sh start|stop|kill|restart DIR [PORT|N]" >&2; exit 2 ;;
esac
