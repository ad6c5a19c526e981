// Fabrics shared by several test suites.
#pragma once

namespace fabricsim::testing {

// A radix-4 1:1 leaf-spine (4 leaves of 2 hosts, 2 spines, ep0 -> ep7 crosses three
// switches) with a 1 GHz core and a 100-cycle pipeline (60 to the allocator, 40 grant
// to wire), RoCEv2 400GbE with 3 m cables, as in test_fabric.cpp; one 1000 B message
// from ep0 to ep7.
inline constexpr const char* kLeafSpineRadix4 = R"(
simulation: {seed: 3, duration: 20us, warmup: 0us}
link: {framing: roce_v2, lanes: 8, lane_rate: 53.125Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, cable_length: 3m}
switch:
  core_clock: 1GHz
  pipeline: {parse: 10, route_lookup: 30, vl_mapping: 5, buffer_admission: 15,
             switch_allocation: 10, crossbar: 20, egress_scheduling: 10}
topology: {kind: leaf_spine, radix: 4, oversubscription: 1}
traffic:
  pattern: explicit
  arrival: periodic
  flows: [{src: 0, dst: 7, messages: 1, message_size: 1000B}]
output: {sample_interval: 0s}
)";

}  // namespace fabricsim::testing
