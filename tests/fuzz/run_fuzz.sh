#!/bin/sh
# Runs the log fuzzer on a scratch copy of the corpus, then merges what it found that adds
# coverage back into the corpus (libFuzzer -merge=1: only inputs reaching new edges are
# copied, so the corpus stays small). Used by the `fuzz` target (tests/fuzz/CMakeLists.txt).
#
#   run_fuzz.sh FUZZER CORPUS SCRATCH CRASHES [SECONDS]
#
# FUZZ_SECONDS in the environment overrides SECONDS (default 60). A crash, leak or timeout
# is written to CRASHES/ (crash-*, leak-*, timeout-*, oom-*) and the script exits non-zero.
# Inputs are capped at 8 KiB: real logs of small runs are ~1 KiB, and under ASan a block of
# thousands of tiny records is slow (the reader grows its arrays one record at a time and
# ASan's realloc always copies), which would only slow the search down.
set -u
fuzzer=$1 corpus=$2 scratch=$3 crashes=$4
seconds=${FUZZ_SECONDS:-${5:-60}}
dir=$(dirname "$0")

if [ ! -d "$corpus" ] || [ -z "$(ls -A "$corpus")" ]; then
	echo "run_fuzz.sh: corpus $corpus is missing or empty" >&2
	exit 1
fi
rm -rf "$scratch"
mkdir -p "$scratch" "$crashes" || exit 1
cp "$corpus"/* "$scratch"/ || exit 1

echo "fuzzing recorder/log.c for $seconds s (scratch corpus $scratch)"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
	-dict="$dir/log.dict" -artifact_prefix="$crashes/" -print_final_stats=1 "$scratch"
status=$?

before=$(ls "$corpus" | wc -l)
# -use_counters=0: only inputs that reach a new edge are kept (not every new hit count), so
# the corpus kept in git stays at a few hundred small files.
"$fuzzer" -merge=1 -use_counters=0 -timeout=10 -rss_limit_mb=2048 -max_len=8192 "$corpus" "$scratch" \
	>"$scratch.merge.log" 2>&1 || {
	echo "run_fuzz.sh: merge failed, see $scratch.merge.log" >&2
	exit 1
}
after=$(ls "$corpus" | wc -l)
echo "corpus $corpus: $before -> $after files"

if [ "$status" -ne 0 ]; then
	echo "run_fuzz.sh: the fuzzer failed (status $status); reproducers in $crashes/:" >&2
	ls -l "$crashes" >&2
	exit 1
fi
exit 0
