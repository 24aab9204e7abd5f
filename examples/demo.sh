#!/bin/sh
# The headline demo: a racy multithreaded program, natively and under detrun.
set -e
detrun=${1:-build/detrun}
examples=${2:-build/examples}
echo "== natively: 5 runs of a racy 4-thread counter"
for i in 1 2 3 4 5; do "$examples/racy_counter" 4; done
echo
echo "== under detrun: 5 runs of the same binary"
for i in 1 2 3 4 5; do "$detrun" -- "$examples/racy_counter" 4; done
echo
echo "== a shell pipeline, a Python program with threads, and date, under detrun"
"$detrun" -- sh -c 'seq 1 1000 | sort -rn | head -3 | tr "\n" " "; echo'
"$detrun" -- python3 -c 'import threading, time, random
out = []
ts = [threading.Thread(target=lambda i=i: out.append(i)) for i in range(6)]
[t.start() for t in ts]; [t.join() for t in ts]
print("threads finished in order", out, "time", time.time(), "random", random.random())'
"$detrun" -- date
