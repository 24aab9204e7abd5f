#!/bin/sh
# The headline demo: a racy multithreaded program, natively and under detrun; then a
# multithreaded server recorded while a client drives it, and replayed with no network.
set -e
detrun=$(realpath "${1:-build/detrun}")
examples=$(realpath "${2:-build/examples}")
# Runs "$@" five times, echoing each output; leaves the number of distinct outputs in $kinds.
five_runs() {
	outs=""
	for i in 1 2 3 4 5; do
		out=$("$@")
		echo "$out"
		outs="$outs$out
"
	done
	kinds=$(printf '%s' "$outs" | sort -u | wc -l)
}

echo "== natively: 5 runs of a racy 4-thread counter"
five_runs "$examples/racy_counter" 4
echo "-> natively: $kinds different outputs in 5 runs (the race decides)"
echo
echo "== under detrun: 5 runs of the same binary"
five_runs "$detrun" -- "$examples/racy_counter" 4
if [ "$kinds" -ne 1 ]; then echo "demo: detrun gave $kinds different outputs"; exit 1; fi
echo "-> under detrun: 5 identical outputs"
echo
echo "== a shell pipeline, a Python program with threads, and date, under detrun (twice each)"
python_threads='import threading, time, random
out = []
ts = [threading.Thread(target=lambda i=i: out.append(i)) for i in range(6)]
[t.start() for t in ts]; [t.join() for t in ts]
print("threads finished in order", out, "time", time.time(), "random", random.random())'
for prog in pipeline python date; do
	case $prog in
	pipeline) set -- sh -c 'seq 1 1000 | sort -rn | head -3 | tr "\n" " "; echo' ;;
	python) set -- python3 -c "$python_threads" ;;
	date) set -- date ;;
	esac
	first=$("$detrun" -- "$@")
	second=$("$detrun" -- "$@")
	echo "$first"
	if [ "$first" != "$second" ]; then echo "demo: $prog differs between two runs"; exit 1; fi
done
echo "-> each printed the same on a second run (time, randomness and thread order included)"
echo
echo "== record a multithreaded server while a client drives it, replay it with no network"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && exec "$detrun" record -o kv.dlog -- "$examples/kvserver" 0 data.log > server.out) &
recorder=$!
tries=0
until grep -q "listening on port" "$dir/server.out" 2>/dev/null; do
	tries=$((tries + 1))
	[ "$tries" -lt 400 ] || { echo "demo: the server did not start"; exit 1; }
	sleep 0.05
done
port=$(sed -n 's/^listening on port //p' "$dir/server.out")
"$examples/kvclient" "$port" 4 25 512 --shutdown
wait "$recorder"
cp "$dir/data.log" "$dir/recorded-data.log"
"$detrun" log --stats "$dir/kv.dlog" | sed -n '3,6s/^/  /p'
# The replay runs on a private view of the files as the recording found them: the data
# file the recording wrote is there for the user, untouched.
(cd "$dir" && unshare -n "$detrun" replay kv.dlog > replay.out)
if ! cmp -s "$dir/server.out" "$dir/replay.out" || ! cmp -s "$dir/data.log" "$dir/recorded-data.log"; then
	echo "demo: the replay differs from the recording, or changed its files"; exit 1
fi
echo "-> replayed offline: the server's $(wc -l < "$dir/replay.out") lines of output are identical, its data file here untouched"
# --in-place puts the recording's starting files back and replays on them.
(cd "$dir" && unshare -n "$detrun" replay --in-place kv.dlog > replay2.out)
if cmp -s "$dir/server.out" "$dir/replay2.out" && cmp -s "$dir/data.log" "$dir/recorded-data.log"; then
	echo "-> replayed in place: the data file it wrote again is identical to the recording's"
else
	echo "demo: the replay in place differs from the recording"; exit 1
fi
