# Properties of single discovered tests, read by ctest after the suites' own test lists
# (gtest_discover_tests writes those at build time, so they cannot be set in CMakeLists).
#
# `slow` marks a test of more than about 5 s on a quiet machine; its COST (seconds) makes
# `ctest -j` start it first, so that the longest tests do not end the run alone. A test's
# labels are e2e plus these. A name no suite defines is an
# error of ctest's.
function(suite_test name labels cost)
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" COST ${cost})
endfunction()

# Every Replicate test runs its own NATS cluster and nodes (replicate_test.cc: their ports
# come from the process's own port block, the nodes' names and addresses from its pid).
foreach(t FollowerThatCannotBindSaysSo KvServerCrashIsReplicated
    UnixSocketServerFollows ErrorsAreOneLine ReplicaMustRunWhatTheLeaderRuns
    InputLargerThanMaxPayloadReplicates FollowerStopsOnSigtermWhileWaiting
    LeaderStopsOnSigtermWhileAppendsWait)
  suite_test(Replicate.${t} "e2e;cluster" 3)
endforeach()
suite_test(Replicate.MemcachedLeaderKilledFollowerTakesOver "e2e;cluster;slow" 60)
suite_test(Replicate.StreamLeaderServerKilledDuringLoad "e2e;cluster;slow" 30)
suite_test(Replicate.KvServerFailoverInOneNamespace "e2e;cluster;slow" 18)
suite_test(Replicate.KvServerLeaderKilledFollowerTakesOver "e2e;cluster;slow" 16)
suite_test(Replicate.LeaderKilledBetweenPartsLeavesNoTornRecord "e2e;cluster;slow" 8)

suite_test(PostgreSQL.ServerUnderDetrunServesPgbenchFiveTimes "e2e;slow" 70)
suite_test(PostgreSQL.RecordedOverItsUnixSocketReplaysOffline "e2e;slow" 15)
# Each pgbench transaction passes between the native client and the group several times:
# the PostgreSQL tests wait for a CPU at every pass, so beside three other tests on two
# CPUs they took 6 times as long (65 s -> 438 s). Each counts as two of ctest's slots.
set_tests_properties(PostgreSQL.ServerUnderDetrunServesPgbenchFiveTimes
  PostgreSQL.RecordedOverItsUnixSocketReplaysOffline PROPERTIES PROCESSORS 2)
suite_test(SpinCycle.ExitBesideALoopThatCallsEndsTheGroup "e2e;slow" 11)
suite_test(Shim.ShimGoneBeforeHelloNeverKillsDetrunWithSigpipe "e2e;slow" 10)
suite_test("Table/E2E.DeterministicUnderDetrun/spin_barrier  # GetParam() = spin_barrier"
  "e2e;slow" 8)
