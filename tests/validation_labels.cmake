# ctest include file: labels the tier tests that check a closed form or a published
# result `validation`, so `ctest -L validation` runs exactly them. Every test that reports
# a check through tests/validation.h must be listed here (docs/validation.md is written
# from the tests listed); the order below, by report section, is the order of the rows.
# Names that do not exist are ignored by ctest; scripts/validation_report.sh lists
# any name below that ctest no longer knows, so a rename cannot drop a check silently.
set(fabricsim_validation_tests
  # PHY (tests/test_phy.cpp): data rates, serialization, FEC (IEEE 802.3bs/bj/ck, IBTA NDR)
  PhyTiming.Ethernet400G8x53Lanes
  PhyTiming.InfinibandNdr
  PhyTiming.Ethernet100GKr4
  PhyTiming.SerializationIsFrameBitsOverDataRate
  PhyTiming.FecAccumulationIsOneCodewordAtTheLaneRate
  PhyTiming.FecLatencyAddsDecoderAndInterleave
  PhyTiming.Ethernet400G4x106Lanes
  PhyTiming.Ethernet800G
  PhyTiming.Ethernet100GNoFec64b66b
  PhyTiming.RoceFramingAndMinimumFrame
  PhyTiming.OneWayLatencyHandComputed
  PhyTiming.InfinibandNdrOneWayLatency
  # Zero-load latency and the credit loop (tests/test_fabric.cpp): CT/SAF, speed mismatch, line rate
  ZeroLoad.CutThroughLatencyIsClosedForm
  ZeroLoad.StoreAndForwardLatencyIsClosedForm
  CreditFlowControl.OneFrameBufferRunsAtCreditLoopRate
  ZeroLoad.StoreAndForwardCostsOneSerializationPerHop
  ZeroLoad.InfinibandFramingHasShorterHeader
  SpeedMismatch.CutThroughEgressTailNeverOvertakesIngressTail
  SpeedMismatch.AdaptiveStoresAndForwardsOntoAFasterEgress
  SpeedMismatch.CutThroughOntoASlowerEgressStartsAtTheHeader
  Throughput.SingleFlowRunsAtLineRate
  Throughput.TwoSourcesShareOneEgressFairlyAtLineRate
  # Switch throughput (tests/test_switch.cpp): Karol, iSLIP, output queueing, CIOQ speedup, VL shares
  BufferOrganisation.InputFifoSaturatesAtKarolBound
  BufferOrganisation.VoqWithIslipRecoversThroughput
  BufferOrganisation.OutputQueuedReachesFullThroughput
  BufferOrganisation.OutputQueuedNeedsCrossbarSpeedup
  BufferOrganisation.CioqWithSpeedupTwoMatchesOutputQueueing
  BufferOrganisation.SharedMemoryReachesFullThroughput
  VlArbitration.IbWeightsSetTheShares
  VlArbitration.EthernetDwrrWeightsSetTheShares
  # Collectives (tests/test_collectives.cpp): ring AllReduce bounds, nccl-tests bus bandwidth
  RingAllReduce.LargeMessagesReachTheBandwidthOptimalBound
  Collectives.BusBandwidthDefinitionsAndBounds
  Collectives.NcclBusFactorsReduceScatterAlltoall
  RingAllReduce.SmallMessagesAreLatencyBound
  RingReduceScatter.ReducesAfterEachOfItsReceives
  SharpAllReduce.LargeMessagesApproachTheLinkRate
  # NIC (tests/test_nic.cpp; PFC headroom in tests/test_switch.cpp): perftest closed forms,
  # link/PCIe bounds, DCQCN convergence, lossless incast
  Perftest.WriteLatencyIsTheSumOfItsComponents
  Dcqcn.TwoFlowsConvergeToAFairShareWithABoundedQueue
  Pfc.IncastWithEnoughHeadroomIsLossless
  Perftest.ReadLatencyIsTheSumOfItsComponents
  Perftest.LargeWritesReachTheLinkBound
  Perftest.LargeWritesReachThePcieBoundWhenItIsLower
  Perftest.ViaOneSwitchAddsTheSwitchHop
  Transport.QpsShareThePayloadReadsAndTheWire
  # tests/test_topology.cpp, tests/test_flows.cpp: hop-count closed forms, ideal FCT
  RailOptimized.SameRailTakesOneSwitchHopCrossRailThree
  FlowCompletion.SingleFlowAtZeroLoadHasSlowdownOne
  FlowCompletion.IncastSlowsEveryFlowDownByTheFanIn
  # Training (tests/test_training_iteration.cpp): a generated iteration against the alpha-beta
  # cost of its DAG (Hockney 1994; Thakur, Rabenseifner and Gropp 2005)
  TrainingIteration.PipelinePairMatchesAlphaBeta
  TrainingIteration.DataParallelPairMatchesAlphaBeta
  TrainingIteration.TensorAndPipelineParallelMatchAlphaBeta
  TrainingIteration.TensorAndDataParallelMatchAlphaBeta
)
foreach(t ${fabricsim_validation_tests})
  set_tests_properties(${t} PROPERTIES LABELS validation)
endforeach()
