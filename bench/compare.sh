#!/bin/sh
# bench/compare.sh BASE [--quick] [--only NAME ...]: is the tracer of this tree slower than
# the one of commit BASE? Builds BASE (any commit-ish) in a temporary git worktree, builds
# this tree, then runs the syscall micro benchmarks and nginx under both, interleaved
# A B A B (bench/compare.py, which reuses bench/bench.py), and prints per workload both
# values and NEW/BASE with its spread.
#
# BASE's detrun is kept as build/compare-HASH/detrun (HASH: the commit's first 12 digits),
# so a second comparison with the same commit builds nothing; the worktree is removed as
# soon as that binary exists. This tree is built in $BUILD (default: build), the same
# CMake/Ninja build as `make build`. Other options go to bench/compare.py (--quick,
# --only, --no-install).
set -eu

usage() {
	echo "usage: bench/compare.sh BASE [--quick] [--only NAME ...] [--no-install]" >&2
	exit 2
}
[ $# -ge 1 ] || usage
case "$1" in -*) usage ;; esac
base=$1
shift

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD:-build}
hash=$(git rev-parse --verify --quiet "$base^{commit}") || {
	echo "compare: $base is not a commit here" >&2
	exit 2
}
short=$(echo "$hash" | cut -c1-12)
cache=$root/build/compare-$short
launcher=
if command -v ccache >/dev/null 2>&1; then
	launcher="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
	# Sources at another path still hit the cache.
	CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")}
	export CCACHE_BASEDIR
fi

configure() { # SOURCE BUILD_DIR
	# shellcheck disable=SC2086 # $launcher is two words or none
	cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $launcher >/dev/null
}

wt=
cleanup() {
	if [ -n "$wt" ]; then
		git -C "$root" worktree remove --force "$wt" 2>/dev/null || true
		rm -rf "$wt"
		git -C "$root" worktree prune
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# BASE: detrun alone, built once per commit. Every commit so far builds with CMake and
# Ninja (a tree without CMakeLists.txt is built with its Makefile's default target).
if [ ! -x "$cache/detrun" ]; then
	echo "compare: building $base ($short) in a temporary worktree" >&2
	wt=$(mktemp -d "${TMPDIR:-/tmp}/detrun-compare-XXXXXX")
	git -C "$root" worktree add --quiet --detach "$wt" "$hash"
	if [ -f "$wt/CMakeLists.txt" ]; then
		configure "$wt" "$wt/build"
		ninja -C "$wt/build" detrun >&2
	else
		make -C "$wt" >&2
	fi
	mkdir -p "$cache"
	cp "$wt/build/detrun" "$cache/detrun.tmp"
	mv "$cache/detrun.tmp" "$cache/detrun"
	echo "$hash" >"$cache/commit"
	cleanup
	wt=
fi

# NEW: this tree as it is (uncommitted changes included).
[ -f "$build/build.ninja" ] || configure "$root" "$build"
ninja -C "$build" detrun syscall_micro >&2

new_name=$(git describe --always --dirty 2>/dev/null || echo new)
python3 "$root/bench/compare.py" --base "$cache/detrun" --new "$build/detrun" \
	--build "$build" --base-name "$(git rev-parse --short "$hash")" --new-name "$new_name" "$@"
