# detrun — top-level entry points. `make demo` and `make test` work on a fresh Debian
# machine as root: they install what is missing, build, and run. Both are idempotent.
BUILD     ?= build
PACKAGES  := build-essential cmake ninja-build pkg-config libseccomp-dev libunwind-dev \
             libcapstone-dev protobuf-c-compiler libprotobuf-c-dev googletest libgtest-dev \
             python3 make gcc strace golang-go zlib1g-dev clang-format \
             protobuf-compiler python3-protobuf clang libclang-rt-14-dev curl nginx \
             postgresql redis-server redis-tools memcached stress-ng wrk \
             openjdk-17-jre-headless gdb nats-server libnats-dev libnats3.4 iproute2
.PHONY: all deps configure build test demo demo-replicate bench fuzz stress clean format-check

all: build

# Installs only what is missing, so a machine that has everything never touches apt.
deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if command -v go >/dev/null 2>&1; then missing=$$(echo $$missing | tr ' ' '\n' | grep -vx golang-go | tr '\n' ' '); fi; \
	fi; \
	if [ -n "$$(echo $$missing | tr -d ' ')" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

configure: deps
	@[ -f $(BUILD)/build.ninja ] || { mkdir -p $(BUILD) && \
	  cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > $(BUILD)/configure.log 2>&1 || \
	  { cat $(BUILD)/configure.log; exit 1; }; }

build: configure
	cmake --build $(BUILD) -j2

# Every test, then the source formatting (make format-check); fails if either does. The tests
# run TEST_JOBS at a time (many wait on servers, clients or elections, not on a CPU);
# CTEST_ARGS picks a subset, e.g. `make test CTEST_ARGS="-L unit"` or `-LE slow` or `-R Replicate`.
TEST_JOBS  ?= 4
CTEST_ARGS ?=
test: build
	@(cd $(BUILD) && ctest --output-on-failure --timeout 900 -j$(TEST_JOBS) $(CTEST_ARGS)); rc=$$?; \
	$(MAKE) --no-print-directory format-check || rc=1; exit $$rc

# The demo builds only what it runs, quietly: the full build (tests, fuzzers, Go guests,
# benchmarks) is `make build` or `make test`.
DEMO_TARGETS := detrun example_racy_counter example_kvserver example_kvclient
demo: configure
	@echo "building detrun and the demo programs (log: $(BUILD)/demo-build.log)"
	@cmake --build $(BUILD) -j2 --target $(DEMO_TARGETS) > $(BUILD)/demo-build.log 2>&1 || \
	  { tail -40 $(BUILD)/demo-build.log; exit 1; }
	@sh examples/demo.sh $(BUILD)/detrun $(BUILD)/examples

# `make demo-replicate`: kvserver replicated 3 ways on a NATS cluster started on loopback (as
# root each replica in a network namespace of its own, binding the same port);
# the leader is killed, a follower takes over with the state, the killed node catches up.
demo-replicate: configure
	@echo "building detrun and the demo programs (log: $(BUILD)/demo-build.log)"
	@cmake --build $(BUILD) -j2 --target $(DEMO_TARGETS) > $(BUILD)/demo-build.log 2>&1 || \
	  { tail -40 $(BUILD)/demo-build.log; exit 1; }
	@sh examples/demo_replicate.sh $(BUILD)/detrun $(BUILD)/examples

# `make bench QUICK=1`: fewer repetitions, smaller inputs, shorter server runs (< 2 min).
bench: build
	@python3 bench/bench.py --build $(BUILD) $(if $(filter-out 0,$(QUICK)),--quick)
	@python3 bench/replicate.py --build $(BUILD) $(if $(filter-out 0,$(QUICK)),--quick)

# `make stress`: the determinism suites (the e2e table and tests/determinism/load_test.cc) beside
# a CPU hog on every CPU. A difference between runs or a hang fails it. The hog ends by itself
# after STRESS_SECONDS, and is stopped as soon as the tests are done.
STRESS_SECONDS ?= 900
stress: build
	@hog_cpus=$$(nproc); echo "stress: stress-ng --cpu $$hog_cpus for at most $(STRESS_SECONDS) s beside the determinism suites"; \
	stress-ng --cpu $$hog_cpus --timeout $(STRESS_SECONDS)s --quiet & hog=$$!; \
	(cd $(BUILD) && ctest --output-on-failure --timeout 900 -R 'E2E\.DeterministicUnderDetrun|^Load\.'); rc=$$?; \
	kill $$hog 2>/dev/null; wait $$hog 2>/dev/null; \
	if [ $$rc -eq 0 ]; then echo "stress: every run identical under load"; else echo "stress: FAILED under load"; fi; exit $$rc

# `make fuzz FUZZ_SECONDS=600`: libFuzzer + ASan/UBSan on the log reader (clang); new
# coverage is merged into tests/fuzz/corpus, reproducers go to tests/fuzz/crashes.
FUZZ_SECONDS ?= 60
fuzz: build
	FUZZ_SECONDS=$(FUZZ_SECONDS) cmake --build $(BUILD) --target fuzz

# `make format-check`: every C/C++ source of the project against .clang-format (pinned for
# clang-format 14); lists the files that differ and fails if any does. Fix with
# `clang-format -i FILE`.
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' '*.cc' 2>/dev/null | grep -v '^tests/fuzz/corpus/')
format-check: deps
	@command -v clang-format >/dev/null || { echo "format-check: clang-format is missing"; exit 1; }
	@bad=0; for f in $(FORMAT_FILES); do \
	  clang-format --dry-run --Werror "$$f" >/dev/null 2>&1 || { echo "not formatted: $$f"; bad=$$((bad+1)); }; \
	done; \
	if [ $$bad -gt 0 ]; then echo "format-check: $$bad files differ from .clang-format"; exit 1; fi; \
	echo "format-check: every file matches .clang-format"

clean:
	rm -rf $(BUILD)
