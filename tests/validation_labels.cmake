# ctest include file: labels the tier tests that check a closed form or a published
# result `validation`, so `ctest -L validation` runs them with tests/test_validation.cpp
# (whose checks also report measured vs expected values, docs/validation.md).
# Names that do not exist are ignored by ctest; scripts/validation_report.sh lists
# any name below that ctest no longer knows, so a rename cannot drop a check silently.
set(fabricsim_validation_tests
  # tests/test_phy.cpp: data rates, serialization, FEC (IEEE 802.3bs/bj/ck, IBTA NDR)
  PhyTiming.Ethernet400G8x53Lanes
  PhyTiming.Ethernet400G4x106Lanes
  PhyTiming.Ethernet800G
  PhyTiming.InfinibandNdr
  PhyTiming.Ethernet100GKr4
  PhyTiming.Ethernet100GNoFec64b66b
  PhyTiming.FecAccumulationSingleLaneMatchesDomainFigure
  PhyTiming.FecLatencyAddsDecoderAndInterleave
  PhyTiming.SerializationFromDomainFigures
  PhyTiming.RoceFramingAndMinimumFrame
  PhyTiming.OneWayLatencyHandComputed
  PhyTiming.InfinibandNdrOneWayLatency
  # tests/test_fabric.cpp: zero-load latency CT/SAF, speed mismatch, line rate, credit loop
  ZeroLoad.CutThroughLatencyIsClosedForm
  ZeroLoad.StoreAndForwardLatencyIsClosedForm
  ZeroLoad.StoreAndForwardCostsOneSerializationPerHop
  ZeroLoad.InfinibandFramingHasShorterHeader
  SpeedMismatch.CutThroughEgressTailNeverOvertakesIngressTail
  SpeedMismatch.AdaptiveStoresAndForwardsOntoAFasterEgress
  SpeedMismatch.CutThroughOntoASlowerEgressStartsAtTheHeader
  Throughput.SingleFlowRunsAtLineRate
  Throughput.TwoSourcesShareOneEgressFairlyAtLineRate
  CreditFlowControl.OneFrameBufferRunsAtCreditLoopRate
  # tests/test_switch.cpp: Karol, iSLIP, output queueing, CIOQ speedup, PFC headroom
  BufferOrganisation.InputFifoSaturatesAtKarolBound
  BufferOrganisation.VoqWithIslipRecoversThroughput
  BufferOrganisation.OutputQueuedReachesFullThroughput
  BufferOrganisation.OutputQueuedNeedsCrossbarSpeedup
  BufferOrganisation.SharedMemoryReachesFullThroughput
  Pfc.IncastWithEnoughHeadroomIsLossless
  VlArbitration.IbWeightsSetTheShares
  VlArbitration.EthernetDwrrWeightsSetTheShares
  # tests/test_collectives.cpp: ring AllReduce bounds, nccl-tests bus bandwidth
  RingAllReduce.LargeMessagesReachTheBandwidthOptimalBound
  RingAllReduce.SmallMessagesAreLatencyBound
  Collectives.BusBandwidthDefinitionsAndBounds
  SharpAllReduce.LargeMessagesApproachTheLinkRate
  # tests/test_topology.cpp, tests/test_flows.cpp: hop-count closed forms, ideal FCT
  RailOptimized.SameRailTakesOneSwitchHopCrossRailThree
  FlowCompletion.SingleFlowAtZeroLoadHasSlowdownOne
  FlowCompletion.IncastSlowsEveryFlowDownByTheFanIn
  # tests/test_nic.cpp: perftest closed forms, link/PCIe bounds, DCQCN convergence
  Perftest.WriteLatencyIsTheSumOfItsComponents
  Perftest.ReadLatencyIsTheSumOfItsComponents
  Perftest.LargeWritesReachTheLinkBound
  Perftest.LargeWritesReachThePcieBoundWhenItIsLower
  Perftest.ViaOneSwitchAddsTheSwitchHop
  Dcqcn.TwoFlowsConvergeToAFairShareWithABoundedQueue
)
foreach(t ${fabricsim_validation_tests})
  set_tests_properties(${t} PROPERTIES LABELS validation)
endforeach()
