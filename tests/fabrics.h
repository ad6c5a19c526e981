// Fabrics shared by several test suites.
#pragma once

#include <string>

namespace fabricsim::testing {

// NDR InfiniBand NICs (4 x 106.25G, RS(544,514)) on one non-blocking VOQ + iSLIP switch
// with 2 m cables, `endpoints` of them, as tests/test_collectives.cpp; runs up to
// `duration`. A workload section follows.
inline std::string ndr_single_switch(int endpoints, const std::string& duration) {
  return "simulation: {seed: 2, duration: " + duration + ", warmup: 0us}\n"
         "link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, "
         "cable_length: 2m}\n"
         "switch: {ports: " + std::to_string(endpoints) + ", buffer: voq, allocator: islip}\n"
         "topology: {kind: single_switch, endpoints: " + std::to_string(endpoints) + "}\n"
         "output: {sample_interval: 0s}\n";
}

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
