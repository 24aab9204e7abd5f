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

# The Replicate tests that leave the NATS servers alone share one cluster, the fixture
# ReplicateCluster (tests/CMakeLists.txt), started once per ctest run; ctest -R picks it up
# with any of them. The others kill or stop servers, or run replicas on nodes (network
# namespaces that reach only their own cluster's address): each starts a cluster of its own
# (replicate_test.cc: UseOwnCluster). Their ports come from the process's own port block,
# the nodes' names from its pid, the group names from its pid and start time.
function(shared_cluster_test name)
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED ReplicateCluster
    ENVIRONMENT DETRUN_NATS_CLUSTER=${NATS_CLUSTER_DIR}/cluster)
endfunction()
foreach(t KvServerCrashIsReplicated UnixSocketServerFollows ErrorsAreOneLine
    ReplicaMustRunWhatTheLeaderRuns InputLargerThanMaxPayloadReplicates
    FollowerStopsOnSigtermWhileWaiting FollowerIgnoresSignalsThatDoNotEndIt
    DuplicateNodeNamesAreRefused LapsedLeaseIsTakenAgainByTheLeader)
  suite_test(Replicate.${t} "e2e;cluster" 3)
  shared_cluster_test(Replicate.${t})
endforeach()
suite_test(Replicate.KvServerFailoverInOneNamespace "e2e;cluster;slow" 18)
suite_test(Replicate.LeaderKilledBetweenPartsLeavesNoTornRecord "e2e;cluster;slow" 8)
shared_cluster_test(Replicate.KvServerFailoverInOneNamespace)
shared_cluster_test(Replicate.LeaderKilledBetweenPartsLeavesNoTornRecord)

foreach(t FollowerThatCannotBindSaysSo LeaderStopsOnSigtermWhileAppendsWait
    ReplyWaitsForItsInputsAcknowledgement)
  suite_test(Replicate.${t} "e2e;cluster" 3)
endforeach()
suite_test(Replicate.MemcachedLeaderKilledFollowerTakesOver "e2e;cluster;slow" 60)
suite_test(Replicate.StreamLeaderServerKilledDuringLoad "e2e;cluster;slow" 30)
suite_test(Replicate.KvServerLeaderKilledFollowerTakesOver "e2e;cluster;slow" 16)
suite_test(Replicate.PausedLeaderResumesDeposedAndSaysSo "e2e;cluster;slow" 15)
suite_test(Replicate.StatusListsEveryReplicaWhileAServerIsDown "e2e;cluster;slow" 25)
suite_test(Replicate.QuorumLossLongerThanTheLease "e2e;cluster;slow" 20)
suite_test(Replicate.SevenLeaderKillsLoseNoAcknowledgedWrite "e2e;cluster;slow" 60)

suite_test(PostgreSQL.ServerUnderDetrunServesPgbenchFiveTimes "e2e;slow" 70)
suite_test(PostgreSQL.RecordedOverItsUnixSocketReplaysOffline "e2e;slow" 15)
suite_test(PostgreSQL.RecordedWithJobsTwoReplaysOffline "e2e;slow" 20)
# Each pgbench transaction passes between the native client and the group several times:
# the PostgreSQL tests wait for a CPU at every pass, so beside three other tests on two
# CPUs they took 6 times as long (65 s -> 438 s). Each counts as two of ctest's slots.
set_tests_properties(PostgreSQL.ServerUnderDetrunServesPgbenchFiveTimes
  PostgreSQL.RecordedOverItsUnixSocketReplaysOffline
  PostgreSQL.RecordedWithJobsTwoReplaysOffline PROPERTIES PROCESSORS 2)
suite_test(SpinCycle.ExitBesideALoopThatCallsEndsTheGroup "e2e;slow" 11)
suite_test(Shim.ShimGoneBeforeHelloNeverKillsDetrunWithSigpipe "e2e;slow" 10)
suite_test("Table/E2E.DeterministicUnderDetrun/spin_barrier  # GetParam() = spin_barrier"
  "e2e;slow" 8)
