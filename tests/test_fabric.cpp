// End-to-end runs of the first fabric (NIC - link - switch - link - NIC)
// checked against closed forms.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config.h"
#include "sim/child_run.h"
#include "sim/output_file.h"
#include "tests/command.h"
#include "tests/fabric_run.h"
#include "tests/validation.h"

namespace {

using fabricsim::sim::load_config;
using fabricsim::sim::load_config_text;
using fabricsim::sim::run_in_child;
using fabricsim::testing::expect_near;
using fabricsim::testing::expect_relative;
using fabricsim::testing::run_checked;
using fabricsim::testing::with;
using nlohmann::json;

// 400GbE (8 x 53.125G PAM4, 256b/257b, RS(544,514)), 3 m cables, 20 ns decoder,
// RoCEv2 framing; a 1 GHz switch core so clock edges fall on whole nanoseconds.
const char* kBase = R"(
simulation: {seed: 7, duration: 20us, warmup: 0us}
link:
  framing: roce_v2
  lanes: 8
  lane_rate: 53.125Gb/s
  encoding: 256b/257b
  fec: rs544_514
  fec_decoder_latency: 20ns
  cable_length: 3m
switch:
  ports: 4
  core_clock: 1GHz
  pipeline: {parse: 10, route_lookup: 30, vl_mapping: 5, buffer_admission: 15,
             switch_allocation: 10, crossbar: 20, egress_scheduling: 10}
  input_buffer: 256KiB
nic: {mtu: 4KiB, rx_buffer: 256KiB}
topology: {endpoints: 4}
traffic:
  pattern: explicit
  arrival: periodic
  flows:
    - {src: 0, dst: 1, messages: 1, message_size: 1000B}
)";

json run(const std::vector<std::string>& overrides, const char* yaml = kBase) {
  return run_checked(load_config_text(yaml, "test.yaml", overrides));
}

const json& endpoint(const json& r, int id) { return r.at("endpoints").at(id); }

// Closed form for one packet at zero load through one switch, from hand values:
//   P + F  = 3 m * 5 ns/m + 5440 b / 425 Gb/s + 20 ns = 15 + 12.8 + 20 = 47.8 ns
//   header = (preamble 8 + headers 54) B at 400 Gb/s = 1.24 ns
//   tail   = (8 + 1000 + 62) B at 400 Gb/s = 21.4 ns
//   the switch acts on the first 1 ns core edge after the header (CT) or tail
//   (SAF), then 100 cycles of pipeline, then sends: latency = start + tail + P + F.
constexpr double kPf = 47.8, kHeader = 1.24, kTail = 21.4, kPipeline = 100;
double expected_latency(bool cut_through) {
  const double at_switch = (cut_through ? kHeader : kTail) + kPf;
  return std::ceil(at_switch) + kPipeline + kTail + kPf;
}

TEST(ZeroLoad, CutThroughLatencyIsClosedForm) {
  const json r = run({"switch.forwarding=cut_through"});
  const json& lat = endpoint(r, 1).at("network_latency_ns");
  ASSERT_EQ(lat.at("count"), 1);
  expect_near({"Fabric",
               "zero-load latency, one 1000 B packet, one cut-through switch: E(header + P + F) + pipeline + frame + P + F",
               "docs/switch.md closed form; virtual cut-through (Kermani and Kleinrock, Computer Networks 1979)"},
              lat.at("max").get<double>(), expected_latency(true), 0.002, "ns");
  EXPECT_EQ(r.at("packets").at("delivered"), 1);
}

// How often each switch and NIC woke is the simulator's effort, not the model's: it is
// reported per process under "simulator", adds up to the total, and is not a statistic.
TEST(ZeroLoad, ActivationsAreSimulatorFiguresPerProcess) {
  const json r = run({"switch.forwarding=cut_through"});
  const json& per_process = r.at("simulator").at("activations");
  std::uint64_t sum = 0;
  for (const auto& [name, n] : per_process.items()) sum += n.get<std::uint64_t>();
  EXPECT_EQ(sum, r.at("simulator").at("process_activations").get<std::uint64_t>());
  EXPECT_GT(per_process.at("fabric.sw0").get<std::uint64_t>(), 0u);  // the packet crossed it
  EXPECT_GT(per_process.at("fabric.ep1").get<std::uint64_t>(), 0u);  // and was received
  EXPECT_EQ(per_process.size(), r.at("endpoints").size() + 1);
  for (const auto& [name, v] : r.at("stats").items()) EXPECT_EQ(name.find("activations"), std::string::npos) << name;
}

TEST(ZeroLoad, StoreAndForwardLatencyIsClosedForm) {
  const json r = run({"switch.forwarding=store_and_forward"});
  expect_near({"Fabric",
               "zero-load latency, one 1000 B packet, one store-and-forward switch: E(frame + P + F) + pipeline + frame + P + F",
               "docs/switch.md closed form; SAF adds one serialization per hop (Kermani and Kleinrock, Computer Networks 1979)"},
              endpoint(r, 1).at("network_latency_ns").at("max").get<double>(), expected_latency(false), 0.002, "ns");
}

TEST(ZeroLoad, StoreAndForwardCostsOneSerializationPerHop) {
  const double ct = endpoint(run({"switch.forwarding=cut_through"}), 1).at("network_latency_ns").at("max");
  const double saf = endpoint(run({"switch.forwarding=store_and_forward"}), 1).at("network_latency_ns").at("max");
  // The frame after the header, (1070 - 62) B at 400 Gb/s, within one 1 ns core cycle.
  EXPECT_NEAR(saf - ct, (1070 - 62) * 8 / 400.0, 1.0);
  EXPECT_GT(saf, ct);
}

TEST(ZeroLoad, InfinibandFramingHasShorterHeader) {
  const json r = run({"link.framing=infiniband", "switch.forwarding=cut_through"});
  // IB: LRH+BTH 20 B header, 20 + 1000 + 6 B frame, no preamble or gap.
  const double header = 20 * 8 / 400.0, tail = 1026 * 8 / 400.0;
  const double expected = std::ceil(header + kPf) + kPipeline + tail + kPf;
  EXPECT_NEAR(endpoint(r, 1).at("network_latency_ns").at("max").get<double>(), expected, 0.002);
}

// Speed mismatch, zero pipeline so the tail rule is visible. Endpoint 1 has an
// 800G cable (8 x 106.25G: 800 Gb/s data, 5440 b / 850 Gb/s + 20 ns = 26.4 ns FEC):
//   ingress (400G) header at switch 1.24 + 47.8 = 49.04 -> edge 50; tail 21.4 + 47.8 = 69.2
//   egress frame (8 + 1062 B) at 800G = 10.7 ns; egress P + F = 15 + 26.4 = 41.4 ns
const std::vector<std::string> kMismatch = {
    "switch.pipeline={parse: 0, route_lookup: 0, vl_mapping: 0, buffer_admission: 0,"
    " switch_allocation: 0, crossbar: 0, egress_scheduling: 0}",
    "topology.links=[{endpoint: 1, lanes: 8, lane_rate: 106.25Gb/s}]"};

TEST(SpeedMismatch, CutThroughEgressTailNeverOvertakesIngressTail) {
  // Start no earlier than ingress tail - egress frame time: 69.2 - 10.7 = 58.5 ns,
  // so the tail leaves at 69.2 ns and reaches endpoint 1 at 69.2 + 41.4 = 110.6 ns
  // (starting at the 50 ns edge would have delivered at 102.1 ns).
  const json r = run(with(kMismatch, {"switch.forwarding=cut_through"}));
  EXPECT_NEAR(endpoint(r, 1).at("network_latency_ns").at("max").get<double>(), 110.6, 0.002);
}

TEST(SpeedMismatch, AdaptiveStoresAndForwardsOntoAFasterEgress) {
  // Egress faster than ingress: start once the tail is in (69.2 ns): 69.2 + 10.7 + 41.4.
  const json r = run(with(kMismatch, {"switch.forwarding=adaptive"}));
  EXPECT_NEAR(endpoint(r, 1).at("network_latency_ns").at("max").get<double>(), 121.3, 0.002);
}

TEST(SpeedMismatch, CutThroughOntoASlowerEgressStartsAtTheHeader) {
  // 800G in (endpoint 0), 400G out (endpoint 1): header at 0.62 + 41.4 = 42.02 -> edge 43;
  // the tail bound (52.1 - 21.4) is earlier, so 43 + 21.4 + 47.8 = 112.2 ns.
  const json r = run({"switch.pipeline={parse: 0, route_lookup: 0, vl_mapping: 0, buffer_admission: 0,"
                      " switch_allocation: 0, crossbar: 0, egress_scheduling: 0}",
                      "topology.links=[{endpoint: 0, lanes: 8, lane_rate: 106.25Gb/s}]",
                      "switch.forwarding=adaptive"});
  EXPECT_NEAR(endpoint(r, 1).at("network_latency_ns").at("max").get<double>(), 112.2, 0.002);
}

// A 4-port switch with one 100G port (endpoint 0: 2 x 53.125G lanes) and 400G ports: one
// 1000 B packet 100G -> 400G (endpoint 0 to 1) and one 400G -> 100G (1 to 0), at once on
// disjoint ports. The zero-load closed form of docs/switch.md "Timing", in ps:
//   E(d_in) + (to_allocator + grant_to_wire) x T + tail_out, with d_in the ingress header
//   delay (cut-through) or tail delay (store-and-forward); each delay is its bytes at the
//   link's rate + P + F: header 62 B, tail 1070 B;
//   P + F = 15 + 5440 b / lane rate sum + 20 ns: 47.8 ns at 400G, 86.2 ns at 100G.
const std::vector<std::string> kMixedSpeeds = {
    "topology.links=[{endpoint: 0, lanes: 2}]",
    "traffic.flows=[{src: 0, dst: 1, messages: 1, message_size: 1000B}, {src: 1, dst: 0, messages: 1, message_size: 1000B}]"};

struct PortSpeed {
  std::int64_t gbps;   // data rate
  std::int64_t pf_ps;  // propagation + FEC
};
constexpr PortSpeed k100G{100, 86'200}, k400G{400, 47'800};

std::int64_t zero_load_ps(PortSpeed in, PortSpeed out, bool store_and_forward) {
  const auto at_rate = [](std::int64_t bytes, std::int64_t gbps) { return bytes * 8 * 1000 / gbps; };  // exact here
  const std::int64_t d_in = at_rate(store_and_forward ? 1070 : 62, in.gbps) + in.pf_ps;
  const std::int64_t edge = (d_in + 999) / 1000 * 1000;  // 1 GHz core
  return edge + static_cast<std::int64_t>(kPipeline) * 1000 + at_rate(1070, out.gbps) + out.pf_ps;
}

std::int64_t latency_ps(const json& r, int dst) {
  return std::llround(endpoint(r, dst).at("network_latency_ns").at("max").get<double>() * 1000);
}

TEST(SpeedMismatch, FastToSlowCutsThroughDownAndStoresAndForwardsUp) {
  // 100G -> 400G stores and forwards (tail at the switch 171.8 ns -> 172 + 100 + 69.2 =
  // 341.2 ns); 400G -> 100G cuts through (header 49.04 -> 50 + 100 + 171.8 = 321.8 ns).
  for (const auto& mode : {std::vector<std::string>{"switch.forwarding=fast_to_slow"},
                           {"switch.forwarding=cut_through", "switch.port_forwarding={0: fast_to_slow, 1: fast_to_slow}"}}) {
    const json r = run(with(kMixedSpeeds, mode));
    EXPECT_EQ(latency_ps(r, 1), zero_load_ps(k100G, k400G, true)) << mode.back();
    EXPECT_EQ(latency_ps(r, 0), zero_load_ps(k400G, k100G, false)) << mode.back();
    EXPECT_EQ(latency_ps(r, 1), 341'200);
    EXPECT_EQ(latency_ps(r, 0), 321'800);
  }
}

TEST(SpeedMismatch, EachIngressPortForwardsInItsOwnMode) {
  // Port 1 (400G) stores and forwards: tail 69.2 -> 70 + 100 + 171.8 = 341.8 ns. Port 0
  // (100G) cuts through onto the faster port: the header edge 92 + 100 is after the bound
  // ingress tail - egress frame (171.8 - 21.4), so 192 + 69.2 = 261.2 ns.
  const json r = run(with(kMixedSpeeds, {"switch.forwarding=cut_through", "switch.port_forwarding={1: store_and_forward}"}));
  EXPECT_EQ(latency_ps(r, 0), zero_load_ps(k400G, k100G, true));
  EXPECT_EQ(latency_ps(r, 1), zero_load_ps(k100G, k400G, false));
  EXPECT_EQ(latency_ps(r, 0), 341'800);
  EXPECT_EQ(latency_ps(r, 1), 261'200);
}

// Payload goodput of a saturated 400G RoCEv2 link with 4 KiB packets.
constexpr double kLineGoodput = 400.0 * 4096 / (4096 + 82);

TEST(Throughput, SingleFlowRunsAtLineRate) {
  const json r = run({"simulation.duration=60us", "simulation.warmup=10us",
                      "traffic.flows=[{src: 0, dst: 1, load: 1.0, message_size: 64KiB}]"});
  EXPECT_NEAR(endpoint(r, 1).at("rx_throughput_gbps").get<double>(), kLineGoodput, 0.01 * kLineGoodput);
}

TEST(Throughput, TwoSourcesShareOneEgressFairlyAtLineRate) {
  const json r = run({"simulation.duration=100us", "simulation.warmup=10us",
                      "traffic.flows=[{src: 0, dst: 2, load: 1.0, message_size: 64KiB},"
                      " {src: 1, dst: 2, load: 1.0, message_size: 64KiB}]"});
  EXPECT_NEAR(endpoint(r, 2).at("rx_throughput_gbps").get<double>(), kLineGoodput, 0.01 * kLineGoodput);
  const double a = endpoint(r, 0).at("tx_packets"), b = endpoint(r, 1).at("tx_packets");
  EXPECT_NEAR(a / (a + b), 0.5, 0.01);
}

TEST(CreditFlowControl, SmallBufferThrottlesButNeverOverflows) {
  // One 4 KiB frame of buffer: the sender waits a full credit loop per packet.
  const json small = run({"simulation.duration=40us", "switch.input_buffer=4160B",
                          "traffic.flows=[{src: 0, dst: 1, load: 1.0, message_size: 64KiB}]"});
  const json large = run({"simulation.duration=40us",
                          "traffic.flows=[{src: 0, dst: 1, load: 1.0, message_size: 64KiB}]"});
  const double small_gbps = endpoint(small, 1).at("rx_throughput_gbps");
  const double large_gbps = endpoint(large, 1).at("rx_throughput_gbps");
  EXPECT_GT(small_gbps, 0.0);
  EXPECT_LT(small_gbps, 0.6 * large_gbps);
  // Conservation: everything injected is delivered or still in flight.
  const json& p = small.at("packets");
  EXPECT_EQ(p.at("injected").get<int>(), p.at("delivered").get<int>() + p.at("in_flight").get<int>());
}

TEST(CreditFlowControl, OneFrameBufferRunsAtCreditLoopRate) {
  // With credits for exactly one 4 KiB frame (4158 B -> 65 blocks of 64 B) the
  // source sends one packet per credit loop (IBTA 7.9: rate = credits / RTT):
  //   NIC first bit -> header ready at switch   1.24 + 47.8   = 49.04 ns
  //   wait for the 1 ns core edge                              +  0.68 ns (steady-state phase)
  //   pipeline                                                 + 100 ns
  //   egress frame read out of the buffer (8 + 4158 B)         + 83.32 ns
  //   credit_return_latency                                    + 10 ns
  //   credit packet back: 8 B + 47.8 ns                        + 47.96 ns  => 291.0 ns
  const json r = run({"simulation.duration=100us", "simulation.warmup=10us", "switch.input_buffer=4160B",
                      "traffic.flows=[{src: 0, dst: 1, load: 1.0, message_size: 64KiB}]"});
  expect_relative({"Fabric", "credit loop: goodput with credits for one 4 KiB frame = 4096 B x 8 / 291.0 ns round trip",
                   "IBTA vol. 1 sec. 7.9 (rate = credits / credit round-trip time)"},
                  endpoint(r, 1).at("rx_throughput_gbps").get<double>(), 4096 * 8 / 291.0, 0.01, "Gb/s");
}

TEST(Quickstart, SameSeedGivesIdenticalResults) {
  const auto cfg = load_config(std::string(FABRICSIM_SOURCE_DIR) + "/examples/quickstart.yaml");
  json a = run_in_child(cfg), b = run_in_child(cfg);
  ASSERT_FALSE(a.contains("error")) << a.dump();
  EXPECT_GT(a.at("packets").at("delivered").get<int>(), 100);
  a.erase("simulator");
  b.erase("simulator");
  EXPECT_EQ(a.dump(), b.dump());
}

TEST(Quickstart, DifferentSeedGivesDifferentTraffic) {
  const std::string file = std::string(FABRICSIM_SOURCE_DIR) + "/examples/quickstart.yaml";
  const json a = run_in_child(load_config(file, {"simulation.seed=1"}));
  const json b = run_in_child(load_config(file, {"simulation.seed=2"}));
  EXPECT_NE(a.at("endpoints").dump(), b.at("endpoints").dump());
}

TEST(Cli, RunWritesResultsAndPacketCsv) {
  const std::string dir = ::testing::TempDir() + "/fabricsim_cli_run";
  std::filesystem::remove_all(dir);
  const auto r = fabricsim::testing::run_command("run " + std::string(FABRICSIM_SOURCE_DIR) +
                                                 "/examples/quickstart.yaml --out " + dir + " --packet-csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("rx Gb/s"));
  std::ifstream results(dir + "/results.json");
  const json j = json::parse(results);
  EXPECT_EQ(j.at("schema_version"), 3);
  EXPECT_TRUE(j.at("simulator").contains("packet_hops_per_wall_second"));
  std::ifstream csv(dir + "/packets.csv");
  std::string line;
  int rows = -1;  // header
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, j.at("packets").at("delivered").get<int>());
}

// traffic.sl as a list deals each source's messages round robin over the SLs: on
// 4 VLs (default SL -> VL: SL mod 4) each VL carries a quarter of the packets.
std::map<int, int> packets_by_vl(const std::string& dir, const std::string& sl) {
  std::filesystem::remove_all(dir);
  const auto r = fabricsim::testing::run_command(
      "run " + std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml --out " + dir +
      " --packet-csv --set simulation.duration=20us --set switch.vls=4 --set switch.buffer=voq --set traffic.sl=" + sl);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream csv(dir + "/packets.csv");
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.substr(line.size() - 6), ",sl,vl") << line;
  std::map<int, int> by_vl;
  while (std::getline(csv, line)) {
    const auto comma = line.rfind(',');
    const int vl = std::stoi(line.substr(comma + 1));
    const int level = std::stoi(line.substr(line.rfind(',', comma - 1) + 1));
    EXPECT_EQ(vl, level % 4) << line;
    ++by_vl[vl];
  }
  return by_vl;
}

TEST(ServiceLevels, ListSpreadsTrafficEvenlyOverTheVls) {
  const auto by_vl = packets_by_vl(::testing::TempDir() + "/fabricsim_sl_list", "[0,1,2,3]");
  int total = 0;
  for (const auto& [vl, n] : by_vl) total += n;
  ASSERT_GT(total, 1000);
  ASSERT_EQ(by_vl.size(), 4u);
  for (const auto& [vl, n] : by_vl) EXPECT_NEAR(static_cast<double>(n) / total, 0.25, 0.02) << "VL " << vl;
}

TEST(ServiceLevels, SingleValueUsesOneVl) {
  const auto by_vl = packets_by_vl(::testing::TempDir() + "/fabricsim_sl_one", "6");
  ASSERT_EQ(by_vl.size(), 1u);
  EXPECT_EQ(by_vl.begin()->first, 2);  // SL 6 mod 4 VLs
}

// RDMA packets get rows too: WRITE segments one way, ACKs the other, one row per received packet.
TEST(Cli, PacketCsvHasTheRdmaPackets) {
  const std::string dir = ::testing::TempDir() + "/fabricsim_cli_rdma_csv";
  std::filesystem::remove_all(dir);
  const auto r = fabricsim::testing::run_command("run " + std::string(FABRICSIM_SOURCE_DIR) +
                                                 "/examples/perftest_ib_b2b.yaml --out " + dir +
                                                 " --packet-csv --set perftest.test=write_bw --set perftest.sizes=[64KiB]"
                                                 " --set perftest.iterations=4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream results(dir + "/results.json");
  const json j = json::parse(results);
  std::ifstream csv(dir + "/packets.csv");
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("packet,src,dst,op,qp,", 0), 0u) << line;
  std::map<std::string, int> by_op;
  int rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    const auto a = line.find(',', line.find(',', line.find(',') + 1) + 1);
    ++by_op[line.substr(a + 1, line.find(',', a + 1) - a - 1)];
  }
  int received = 0;
  for (const json& e : j.at("endpoints")) received += e.at("rx_packets").get<int>();
  EXPECT_EQ(rows, received);
  EXPECT_EQ(by_op["write"], 4 * 16);  // 64 KiB in 4 KiB segments, no loss
  EXPECT_GT(by_op["ack"], 0);
  EXPECT_EQ(by_op["raw"], 0);
}


// CSV rows split on commas.
std::vector<std::vector<std::string>> csv_rows(const std::string& file, const std::string& header) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, header) << file;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::size_t from = 0;
    for (std::size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1)
      cells.push_back(line.substr(from, comma - from));
    cells.push_back(line.substr(from));
    rows.push_back(cells);
  }
  return rows;
}

// qps.csv has a row per QP, pairs agreeing end to end; results.json summarises each
// endpoint's requesters; qp_rates.csv has each requester's CC rate at every sample, whose
// lowest per endpoint is the JSON time series'.
TEST(Cli, QpCsvListsEveryQpAndTheResultsSummariseThem) {
  const std::string dir = ::testing::TempDir() + "/fabricsim_cli_qps";
  std::filesystem::remove_all(dir);
  const auto r = fabricsim::testing::run_command(
      "run " + std::string(FABRICSIM_SOURCE_DIR) + "/examples/quickstart.yaml --out " + dir +
      " --set traffic.transport=rdma --set traffic.load=0.9 --set nic.congestion_control.kind=dcqcn"
      " --set switch.ecn.enabled=true --set switch.ecn.kmin=5KB --set switch.ecn.kmax=50KB --set output.sample_interval=5us");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr(dir + "/qps.csv"));
  std::ifstream results(dir + "/results.json");
  const json j = json::parse(results);
  const auto qps = csv_rows(dir + "/qps.csv",
                            "endpoint,qpn,peer,peer_qpn,sl,posted_requests,acked_bytes,goodput_gbps,"
                            "retransmitted_packets,timeouts,cnps_received,cc_rate_gbps");
  std::map<std::pair<int, int>, std::pair<int, int>> peer_of;  // (endpoint, qpn) -> (peer, peer_qpn)
  std::map<int, std::vector<double>> goodputs;                  // endpoint -> its requesters' goodput
  std::map<int, int> count;
  for (const auto& q : qps) {
    ASSERT_EQ(q.size(), 12u);
    const int e = std::stoi(q[0]);
    peer_of[{e, std::stoi(q[1])}] = {std::stoi(q[2]), std::stoi(q[3])};
    ++count[e];
    if (std::stoull(q[5]) > 0) goodputs[e].push_back(std::stod(q[7]));
  }
  for (const auto& [qp, peer] : peer_of) EXPECT_EQ(peer_of.at(peer), qp) << "QP " << qp.first << "." << qp.second;
  for (const auto& ep : j.at("endpoints")) {
    const int e = ep.at("id").get<int>();
    const auto& s = ep.at("rdma").at("qps");
    EXPECT_EQ(s.at("count").get<int>(), count[e]);
    EXPECT_EQ(s.at("count").get<int>(), 6);  // three destinations, three sources
    const auto& g = goodputs[e];
    ASSERT_EQ(s.at("requesters").get<std::size_t>(), g.size());
    ASSERT_EQ(g.size(), 3u);
    double sum = 0, squares = 0;
    for (double x : g) sum += x, squares += x * x;
    EXPECT_NEAR(s.at("goodput_gbps").at("mean").get<double>(), sum / 3, 1e-6);
    EXPECT_NEAR(s.at("goodput_gbps").at("max").get<double>(), *std::max_element(g.begin(), g.end()), 1e-6);
    EXPECT_NEAR(s.at("jain_fairness").get<double>(), sum * sum / (3 * squares), 1e-6);
    EXPECT_LT(s.at("jain_fairness").get<double>(), 1.0);  // uniform traffic: unequal shares over 50 us
  }
  std::map<std::pair<long long, int>, std::vector<double>> rates;  // (time [ns], endpoint) -> its QPs' rates
  for (const auto& row : csv_rows(dir + "/qp_rates.csv", "time_ns,endpoint,qpn,cc_rate_gbps"))
    rates[{std::llround(std::stod(row[0])), std::stoi(row[1])}].push_back(std::stod(row[3]));
  std::map<std::pair<long long, int>, double> lowest;
  std::size_t unequal = 0;  // samples where an endpoint's QPs run at different rates (DCQCN cut some)
  for (const auto& [key, of_qps] : rates) {
    lowest[key] = *std::min_element(of_qps.begin(), of_qps.end());
    unequal += lowest[key] != *std::max_element(of_qps.begin(), of_qps.end());
  }
  EXPECT_GT(unequal, 4u);
  const auto& ts = j.at("timeseries");
  const auto& times = ts.at("time_ns");
  ASSERT_EQ(ts.at("rdma_rates").size(), 4u);
  std::size_t compared = 0;
  for (const auto& ep : ts.at("rdma_rates")) {
    const auto& low = ep.at("lowest_qp_rate_gbps");
    ASSERT_EQ(low.size(), times.size());
    for (std::size_t k = 0; k < times.size(); ++k) {
      const auto at = lowest.find({std::llround(times[k].get<double>()), ep.at("endpoint").get<int>()});
      EXPECT_EQ(at == lowest.end(), low[k].is_null()) << "sample " << k;
      if (at == lowest.end()) continue;
      EXPECT_NEAR(low[k].get<double>(), at->second, 1e-6 * at->second);
      ++compared;
    }
  }
  EXPECT_GT(compared, 4u * (times.size() - 2));
}

// An output file that cannot be opened or written in full (a full disk: /dev/full) is an
// error naming it and the OS reason, not a silently short file.
TEST(Cli, AnOutputFileThatCannotBeWrittenIsAnErrorNamingItAndWhy) {
  const std::string dir = ::testing::TempDir() + "/fabricsim_cli_full";
  const std::string run = "run " + std::string(FABRICSIM_SOURCE_DIR) + "/examples/quickstart.yaml --quiet --out " + dir +
                          " --set simulation.duration=10us --packet-csv";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/qps.csv");  // a folder where the file goes
  auto r = fabricsim::testing::run_command(run);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("cannot write " + dir + "/qps.csv: Is a directory"));
  // results.json is written to results.json.tmp, then renamed.
  for (const char* file : {"qps.csv", "packets.csv", "occupancy.csv", "results.json.tmp"}) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::filesystem::create_symlink("/dev/full", dir + "/" + file);
    r = fabricsim::testing::run_command(run);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, ::testing::HasSubstr(std::string("cannot write ") + dir + "/" + file + ": No space left on device"));
  }
  // The report's page on a full disk (needs python3 with matplotlib, as `fabricsim report` does).
  std::filesystem::remove_all(dir);
  ASSERT_EQ(fabricsim::testing::run_command(run).exit_code, 0);
  std::filesystem::create_directories(dir + "/report");
  std::filesystem::create_symlink("/dev/full", dir + "/report/index.html");
  r = fabricsim::testing::run_command("report " + dir);
  const bool no_python = r.output.find("install python3-matplotlib") != std::string::npos;
  std::filesystem::remove_all(dir);
  if (no_python) GTEST_SKIP() << r.output;
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("report: cannot write " + dir + "/report/index.html: No space left on device"));
}

// Every failure of an output file names the file and the OS reason: at open (a path under
// a regular file, a /proc entry), and at close for bytes still buffered (a full disk).
TEST(OutputFile, FailuresNameTheFileAndTheReason) {
  using fabricsim::sim::OutputFile;
  const auto error_of = [](const std::function<void()>& write) {
    try {
      write();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  const std::string file = ::testing::TempDir() + "/fabricsim_output_file.txt";
  EXPECT_EQ(error_of([&] { fabricsim::sim::write_file(file, "a,b\n1,2\n"); }), "<no error>");
  std::ifstream in(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "a,b\n1,2\n");
  EXPECT_EQ(error_of([&] { fabricsim::sim::write_file(file + "/x.csv", "a"); }),
            "cannot write " + file + "/x.csv: Not a directory");
  EXPECT_EQ(error_of([&] { fabricsim::sim::write_file("/proc/fabricsim.csv", "a"); }),
            "cannot write /proc/fabricsim.csv: No such file or directory");
  EXPECT_EQ(error_of([&] {
              OutputFile out("/dev/full");
              out << "one short line, still in the buffer\n";
              out.close();
            }),
            "cannot write /dev/full: No space left on device");
  std::filesystem::remove(file);
}

}  // namespace
