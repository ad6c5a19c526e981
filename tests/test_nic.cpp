// The RDMA NIC: perftest-style latency and bandwidth against the sum of the
// modelled components, loss recovery, and congestion control.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/arbiter.h"
#include "sim/child_run.h"
#include "sim/config.h"
#include "tlm/dma_engine.h"
#include "tlm/link.h"
#include "tlm/psn_table.h"
#include "tests/command.h"
#include "tests/fabric_run.h"
#include "tests/temp_files.h"
#include "tests/validation.h"

namespace {

using fabricsim::sim::load_config_text;
using fabricsim::testing::expect_near;
using fabricsim::testing::expect_relative;
using fabricsim::testing::run_checked;
using nlohmann::json;

// Two NDR NICs back to back: 4 x 106.25G PAM4, RS(544,514), 2 m cable, 20 ns
// decoder; PCIe Gen5 x16 with the default host latencies.
const char* kBackToBack = R"(
simulation: {seed: 5, duration: 20ms, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, cable_length: 2m}
topology: {kind: back_to_back}
perftest: {test: write_lat, sizes: [2B], iterations: 20}
output: {sample_interval: 0s}
)";

json run(const std::vector<std::string>& overrides, const char* yaml = kBackToBack) {
  const json r = run_checked(load_config_text(yaml, "nic.yaml", overrides));
  EXPECT_TRUE(r.at("perftest").at("finished").get<bool>());
  return r;
}

const json& first_size(const json& r) { return r.at("perftest").at("sizes").at(0); }

// Pieces of the path, by hand:
//   PCIe Gen5 x16 = 32 GT/s x 16 x 128/130 = 504.123 Gb/s; a TLP adds 24 B.
//   IB frame of a 2 B payload: LRH 8 + BTH 12 + 2 + ICRC 4 + VCRC 2 = 28 B at 400 Gb/s = 0.56 ns,
//   plus 10 ns cable, 5440 b / 425 Gb/s = 12.8 ns FEC accumulation, 20 ns decoder.
constexpr double kPcieNs(double bytes) { return (bytes + 24) * 8 / 504.1230769; }
constexpr double kWire2B = 0.56 + 10 + 12.8 + 20;

TEST(Perftest, WriteLatencyIsTheSumOfItsComponents) {
  // ib_write_lat reports half the ping-pong round trip, i.e. one direction:
  // doorbell with the WQE (BlueFlame, inline payload) 250 ns + NIC processing
  // 100 ns + wire + DMA write of 2 B + 300 ns until visible + 50 ns polling.
  const double expected = 250 + 100 + kWire2B + kPcieNs(2) + 300 + 50;
  const json r = run({});
  expect_near({"Nic",
               "ib_write_lat 2 B back to back (NDR, Gen5 x16): half round trip = sum of host, NIC, PCIe and wire parts",
               "perftest ib_write_lat convention; docs/nic.md component values"},
              first_size(r).at("t_typical_us").get<double>() * 1000, expected, 0.01, "ns");
  EXPECT_EQ(first_size(r).at("iterations"), 20);
}

TEST(Perftest, ReadLatencyIsTheSumOfItsComponents) {
  // ib_read_lat reports the whole READ: request (RETH 16 B payload) out,
  // responder processing and a 2 B DMA read (700 ns from the request's issue, then the completion TLP),
  // the response back, its DMA write and 300 ns, then the CQE write and 300 ns, polling.
  const double request = 250 + 100 + (20 + 16 + 6) * 8 / 400.0 + 10 + 12.8 + 20;
  const double responder = 100 + 700 + kPcieNs(2);
  const double requester = kWire2B + kPcieNs(2) + 300 + kPcieNs(64) + 300 + 50;
  const json r = run({"perftest.test=read_lat"});
  EXPECT_NEAR(first_size(r).at("t_typical_us").get<double>() * 1000, request + responder + requester, 0.01);
}

TEST(Perftest, LargeWritesReachTheLinkBound) {
  // 1 MiB writes, 32 outstanding: IB goodput = 400 Gb/s x 4096 / (4096 + 26).
  const json r = run({"perftest.test=write_bw", "perftest.sizes=[1MiB]", "perftest.iterations=40"});
  EXPECT_NEAR(first_size(r).at("bw_average_gbps").get<double>(), 400.0 * 4096 / 4122, 0.01 * 397.5);
}

TEST(Perftest, LargeWritesReachThePcieBoundWhenItIsLower) {
  // PCIe Gen3 x8: 8 GT/s x 8 x 128/130 x 256 / (256 + 24) = 57.61 Gb/s of payload.
  const json r = run({"perftest.test=write_bw", "perftest.sizes=[1MiB]", "perftest.iterations=20",
                      "nic.pcie.generation=3", "nic.pcie.width=8"});
  EXPECT_NEAR(first_size(r).at("bw_average_gbps").get<double>(), 57.614, 0.01 * 57.6);
}

TEST(Perftest, InlinePayloadLongerThanOneMtu) {
  // 1000 B inline (threshold 1 KiB) in 256 B packets: four segments, all in the WQE, so
  // no payload DMA read (host_read_latency 0.7 us) against the same WRITE not inline.
  const std::vector<std::string> small_mtu = {"nic.mtu=256B", "perftest.sizes=[1000B]", "perftest.iterations=3"};
  auto with = [&](const std::string& threshold) {
    auto o = small_mtu;
    o.push_back("nic.inline_threshold=" + threshold);
    return first_size(run(o)).at("t_typical_us").get<double>();
  };
  const double in_wqe = with("1KiB"), by_dma = with("0B");
  EXPECT_GT(in_wqe, 0.5);
  EXPECT_LT(in_wqe, by_dma - 0.5);
}

TEST(Perftest, ViaOneSwitchAddsTheSwitchHop) {
  const double direct = first_size(run({})).at("t_typical_us").get<double>();
  const json r = run({"topology={kind: single_switch, endpoints: 2}", "switch.ports=2"});
  const double via = first_size(r).at("t_typical_us").get<double>();
  // One more cable and the switch pipeline (200 cycles at 1.5 GHz = 133 ns, plus edges).
  EXPECT_GT(via - direct, 0.133 + 0.043);
  EXPECT_LT(via - direct, 0.133 + 0.043 + 0.01);
}

TEST(Perftest, AllSizesRunAndPrintPerftestTable) {
  const json r = run({"perftest.sizes=all", "perftest.iterations=2"});
  EXPECT_EQ(r.at("perftest").at("sizes").size(), 23u);  // 2 B .. 8 MiB
  EXPECT_NE(r.at("perftest").at("table").get<std::string>().find("t_typical[usec]"), std::string::npos);
}

// Raw traffic above what the link carries, one-packet messages: what waits in a NIC's
// send queues at the end is what its host posted less what it sent.
TEST(SendQueue, HoldsThePostedMessagesNotYetSent) {
  const json r = run_checked(load_config_text(R"(
simulation: {seed: 3, duration: 20us, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, cable_length: 2m}
topology: {kind: back_to_back}
nic: {mtu: 1KiB}
traffic: {pattern: uniform, arrival: poisson, load: 1.0, message_size: 1KiB}
output: {sample_interval: 0s}
)", "send_queue.yaml", {}));
  std::uint64_t waiting = 0;
  for (const json& ep : r.at("endpoints")) {
    const std::string name = ep.at("name").get<std::string>();
    const auto posted = r.at("stats").at(name + ".messages_posted").at("value").get<std::uint64_t>();
    const auto sent = ep.at("tx_packets").get<std::uint64_t>();
    EXPECT_EQ(ep.at("send_queue_messages").get<std::uint64_t>(), posted - sent) << name;
    waiting += ep.at("send_queue_messages").get<std::uint64_t>();
  }
  EXPECT_GT(waiting, 0u);  // the queues did build up
}

// The raw send queues take turns through the VL arbiter, hw::RoundRobinArbiter: replayed
// from packets.csv, each packet an endpoint sent is the core's pick among the VLs that
// had a segment waiting (a message posted by then, not all sent), VL 2 carrying none.
// Messages of 1, 3 and 6 packets make queues run dry, so a VL is passed over while
// empty and the pointer moves past the winner; fixed priority or a pointer that stays
// on the winner picks otherwise.
TEST(SendQueue, VlsTakeTurnsInTheRoundRobinArbitersOrder) {
  namespace fs = std::filesystem;
  const fs::path dir = fabricsim::testing::test_temp_dir("nic");
  const fs::path config = fabricsim::testing::write_text(dir / "vls.yaml", R"(
simulation: {seed: 7, duration: 40us, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, cable_length: 2m}
switch: {vls: 4}
topology: {kind: back_to_back}
nic: {mtu: 1KiB}
traffic: {pattern: uniform, arrival: poisson, load: 0.9, messages: 60, sl: [0, 1, 3],
          message_sizes: [{size: 1KiB}, {size: 3KiB}, {size: 6KiB}]}
output: {sample_interval: 0s, packet_csv: true}
)");
  const auto r = fabricsim::testing::run_command("run " + config.string() + " --quiet --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto cells = [](const std::string& line) {
    std::vector<std::string> c;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) c.push_back(cell);
    return c;
  };
  std::ifstream csv(dir / "out" / "packets.csv");
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = cells(line);
  auto column = [&](const char* name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t packet = column("packet"), src = column("src"), message = column("message"),
                    created = column("created_ns"), injected = column("injected_ns"), vl = column("vl");
  ASSERT_LT(vl, header.size());
  struct Sent {
    std::uint64_t packet, message;
    double created, injected;
    int vl;
  };
  std::vector<Sent> sent;  // endpoint 0's packets, in the order it sent them
  while (std::getline(csv, line)) {
    const std::vector<std::string> f = cells(line);
    if (f[src] != "0") continue;
    sent.push_back({std::stoull(f[packet]), std::stoull(f[message]), std::stod(f[created]), std::stod(f[injected]),
                    std::stoi(f[vl])});
  }
  std::sort(sent.begin(), sent.end(), [](const Sent& a, const Sent& b) { return a.packet < b.packet; });
  struct Message {
    double created;
    int vl, packets = 0, sent = 0;
  };
  std::map<std::uint64_t, Message> messages;  // every one of the 60 is delivered whole
  for (const Sent& p : sent) {
    Message& m = messages.try_emplace(p.message, Message{p.created, p.vl}).first->second;
    ++m.packets;
  }
  ASSERT_EQ(messages.size(), 60u);

  fabricsim::hw::RoundRobinArbiter reference(4);
  int contested = 0, not_lowest = 0;
  for (std::size_t k = 0; k < sent.size(); ++k) {
    reference.clear();
    int lowest = 4;
    for (const auto& [id, m] : messages)
      if (m.created <= sent[k].injected && m.sent < m.packets) {
        reference.add_request({m.vl});
        lowest = std::min(lowest, m.vl);
      }
    const int pick = reference.arbitrate();
    ASSERT_EQ(sent[k].vl, pick) << "packet " << k << " of endpoint 0 at " << sent[k].injected << " ns";
    reference.update_state(pick);
    contested += reference.request_count() > 1;
    not_lowest += pick != lowest;
    ++messages.at(sent[k].message).sent;
  }
  EXPECT_GT(contested, 20);   // VLs did compete
  EXPECT_GT(not_lowest, 10);  // and the pointer, not the VL index, decided
  fs::remove_all(dir);
}

// 64 KiB writes over a lossy cable.
json lossy(double drop, const std::string& mode) {
  return run({"perftest.test=write_bw", "perftest.sizes=[64KiB]", "perftest.iterations=200",
              "link.drop_rate=" + std::to_string(drop), "nic.transport.retransmit=" + mode,
              "nic.transport.retransmit_timeout=20us"});
}

TEST(Transport, EveryMessageCompletesOverALossyLinkAndGoodputFallsWithLoss) {
  double previous = 1e9;
  for (double drop : {0.0, 0.001, 0.01}) {
    const json r = lossy(drop, "go_back_n");
    EXPECT_EQ(first_size(r).at("iterations"), 200) << drop;
    EXPECT_EQ(r.at("endpoints").at(0).at("rdma").at("completions"), 200) << drop;
    const double bw = first_size(r).at("bw_average_gbps");
    EXPECT_LT(bw, previous) << drop;
    previous = bw;
    if (drop > 0) {
      EXPECT_GT(r.at("endpoints").at(0).at("rdma").at("retransmitted_packets").get<int>(), 0);
    }
  }
}

TEST(Transport, SelectiveRepeatBeatsGoBackN) {
  const json gbn = lossy(0.01, "go_back_n");
  const json sr = lossy(0.01, "selective_repeat");
  EXPECT_GT(first_size(sr).at("bw_average_gbps").get<double>(), first_size(gbn).at("bw_average_gbps").get<double>());
  EXPECT_LT(sr.at("endpoints").at(0).at("rdma").at("retransmitted_packets").get<int>(),
            gbn.at("endpoints").at(0).at("rdma").at("retransmitted_packets").get<int>());
}

// write_bw of 1 MiB messages over a cable that drops one packet in a thousand. With its
// packets.csv, the time from each NAK's arrival at the requester to the first
// retransmission that leaves after it (the first transmission of a PSN below one already
// sent: the lost packet, in either mode).
struct LossyWrites {
  json results;
  std::vector<double> nak_to_resend_ns;
};

LossyWrites lossy_writes(const std::vector<std::string>& overrides) {
  const auto config = load_config_text(
      kBackToBack, "nic.yaml",
      fabricsim::testing::with({"perftest.test=write_bw", "perftest.sizes=[1MiB]", "perftest.iterations=60"},
                               overrides));
  LossyWrites out;
  out.results = fabricsim::sim::in_child([&] {
    std::ostringstream packets;
    fabricsim::sim::RunLogs logs;
    logs.packets = &packets;
    json r = fabricsim::sim::run_simulation(config, logs);
    r["packets_csv"] = packets.str();
    return r;
  });
  EXPECT_FALSE(out.results.contains("error")) << out.results.dump().substr(0, 400);
  std::istringstream csv(out.results.value("packets_csv", std::string()));
  std::vector<double> naks;
  std::set<long> sent;
  long highest = -1;
  std::string line;
  std::getline(csv, line);  // header
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string v; std::getline(fields, v, ',');) f.push_back(v);
    // packet,src,dst,op,qp,flow,message,psn,payload_bytes,hops,created_ns,injected_ns,delivered_ns,...
    if (f.at(3) == "nak") naks.push_back(std::stod(f.at(12)));
    if (f.at(3) != "write") continue;
    const long psn = std::stol(f.at(7));
    const double injected = std::stod(f.at(11));
    if (psn < highest && !sent.count(psn)) {
      const auto nak = std::upper_bound(naks.begin(), naks.end(), injected);
      if (nak != naks.begin()) out.nak_to_resend_ns.push_back(injected - *std::prev(nak));
    }
    sent.insert(psn);
    highest = std::max(highest, psn);
  }
  return out;
}

// A retransmission's payload is read again ahead of the payload reads reserved for the
// messages posted after it: it leaves one PCIe read round trip after its NAK, host read
// latency 700 ns + 4 KiB of completions in 16 TLPs, however many messages are posted.
TEST(Transport, RetransmissionLeavesOneReadRoundTripAfterItsNak) {
  const double read_round_trip = 700 + (4096 + 16 * 24) * 8 / 504.1230769;
  for (const char* mode : {"selective_repeat", "go_back_n"}) {
    for (int depth : {2, 128}) {
      const LossyWrites w = lossy_writes({"link.drop_rate=0.001", std::string("nic.transport.retransmit=") + mode,
                                          "perftest.tx_depth=" + std::to_string(depth)});
      EXPECT_EQ(w.results.at("endpoints").at(0).at("rdma").at("timeouts"), 0) << mode << " " << depth;
      EXPECT_GE(w.nak_to_resend_ns.size(), 10u) << mode << " " << depth;
      for (double gap : w.nak_to_resend_ns) EXPECT_NEAR(gap, read_round_trip, 0.01) << mode << " tx_depth " << depth;
    }
  }
}

// Two QPs of one NIC, both posted at t = 0: a 45 MiB WRITE to one peer, 1 MiB to
// another, through one NDR switch. The NIC reads each QP's payload as it sends it
// (docs/nic.md, "Pipeline"), so the round-robin scheduler gives each QP half the port
// while both send: the 1 MiB completes at the host path + the other QP's read-ahead
// (read first: 128 KiB at the PCIe payload rate, 57.6 GB/s) + 2 S / B, with B the IB
// payload rate 400 Gb/s x 4096/4122; the 45 MiB, with the port busy throughout, at the
// host path + (45 + 1) MiB / B. The host path (doorbell 250 ns, processing 100 ns, a
// read round trip 0.77 us, the last packet, ACK and CQE back, about 1.5 us) is the
// tolerance: 3% of the short one, 0.3% of the long one.
TEST(Transport, QpsShareThePayloadReadsAndTheWire) {
  const json r = run_checked(load_config_text(R"(
simulation: {seed: 1, duration: 2ms, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, cable_length: 2m}
topology: {kind: single_switch, endpoints: 3}
traffic:
  pattern: explicit
  transport: rdma
  arrival: periodic
  load: 1.0
  messages: 1
  flows:
    - {src: 0, dst: 1, message_size: 45MiB}
    - {src: 0, dst: 2, message_size: 1MiB}
output: {sample_interval: 0s}
)", "two_qps.yaml", {}));
  const json& latency = r.at("endpoints").at(0).at("rdma").at("completion_latency_ns");
  ASSERT_EQ(latency.at("count"), 2);
  const double mib = 1048576, payload_bytes_per_us = 400e3 / 8 * 4096 / 4122;
  const double host_path_us = 0.25 + 0.1 + 0.771;
  const double read_ahead_us = 128 * 1024 / (504.1230769e3 / 8 * 256 / 280);  // Gen5 x16 payload
  expect_relative({"Nic",
                   "1 MiB WRITE beside a 45 MiB one on another QP: host path + the other's read-ahead + 2 S / B",
                   "fair share of round-robin QP scheduling; docs/nic.md (payload reads per QP)"},
                  latency.at("min").get<double>() / 1000, host_path_us + read_ahead_us + 2 * mib / payload_bytes_per_us,
                  0.03, "us");
  expect_relative({"Nic", "45 MiB WRITE beside a 1 MiB one: host path + (45 + 1) MiB / B (the port stays busy)",
                   "link payload rate; docs/nic.md"},
                  latency.at("max").get<double>() / 1000, host_path_us + 46 * mib / payload_bytes_per_us, 0.003, "us");
}

// The same at tx_depth 128 against the lossless run: selective repeat loses per drop the
// re-read's round trip (0.77 us, the QP sends nothing new meanwhile), go-back-N that and
// the packets sent in the NAK's round trip again (about four, 0.08 us each): about 15
// drops cost 1-2% of a 1.27 ms run, so both keep 95% of the lossless bandwidth.
TEST(Transport, LossyWritesKeepNearlyTheLosslessBandwidth) {
  const double lossless =
      first_size(lossy_writes({"perftest.tx_depth=128"}).results).at("bw_average_gbps").get<double>();
  EXPECT_NEAR(lossless, 400.0 * 4096 / 4122, 0.01 * 397.5);
  for (const char* mode : {"selective_repeat", "go_back_n"}) {
    const json r = lossy_writes({"link.drop_rate=0.001", std::string("nic.transport.retransmit=") + mode,
                                 "perftest.tx_depth=128"})
                       .results;
    EXPECT_GT(r.at("endpoints").at(0).at("rdma").at("retransmitted_packets").get<int>(), 10) << mode;
    EXPECT_GT(first_size(r).at("bw_average_gbps").get<double>(), 0.95 * lossless) << mode;
  }
}

// 64 KiB READs over a lossy cable: a lost READ response makes the requester ask again
// from the missing PSN once and drop the responses still in flight behind the gap; every
// READ completes. (At this depth the READs are bound by more than the link: a drop's
// re-read may cost nothing in bandwidth.)
TEST(Transport, ReadsCompleteOverALossyLink) {
  const json lossless = run({"perftest.test=read_bw", "perftest.sizes=[64KiB]", "perftest.iterations=200"});
  for (const char* mode : {"go_back_n", "selective_repeat"}) {
    const json r = run({"perftest.test=read_bw", "perftest.sizes=[64KiB]", "perftest.iterations=200",
                        "link.drop_rate=0.001", std::string("nic.transport.retransmit=") + mode,
                        "nic.transport.retransmit_timeout=20us"});
    EXPECT_EQ(r.at("endpoints").at(0).at("rdma").at("completions"), 200) << mode;
    EXPECT_GT(r.at("endpoints").at(0).at("rdma").at("retransmitted_packets").get<int>(), 0) << mode;
    const double bw = first_size(r).at("bw_average_gbps");
    EXPECT_LE(bw, first_size(lossless).at("bw_average_gbps").get<double>()) << mode;
    EXPECT_GT(bw, 0.25 * first_size(lossless).at("bw_average_gbps").get<double>()) << mode;
  }
}

// read_bw of 1 MiB at tx_depth 128 over a cable that drops one packet in a thousand
// (about 15 drops in 15,420 packets). The requester asks again at the first response
// after a hole; the responder restarts from the PSN asked for (IBTA Vol. 1, 9.7.5.1),
// reading again ahead of its posted reads only what it had sent from there. So a drop
// costs about one PCIe read round trip and the responses already on the wire when the
// request arrives (a few): over 95% of the lossless bandwidth, and fewer than 8 extra
// packets per drop (re-request included).
TEST(Transport, LossyReadsKeepNearlyTheLosslessBandwidth) {
  const std::vector<std::string> read_bw = {"perftest.test=read_bw", "perftest.sizes=[1MiB]",
                                            "perftest.iterations=60", "perftest.tx_depth=128"};
  const json lossless = run(read_bw);
  const double lossless_bw = first_size(lossless).at("bw_average_gbps");
  const auto lossless_packets = lossless.at("packets").at("delivered").get<std::int64_t>();
  for (const char* mode : {"go_back_n", "selective_repeat"}) {
    const json r = run(fabricsim::testing::with(
        read_bw, {"link.drop_rate=0.001", std::string("nic.transport.retransmit=") + mode}));
    const auto dropped = r.at("packets").at("dropped").get<std::int64_t>();
    EXPECT_GE(dropped, 10) << mode;
    EXPECT_EQ(r.at("endpoints").at(0).at("rdma").at("timeouts"), 0) << mode;
    EXPECT_LT(r.at("packets").at("delivered").get<std::int64_t>() - lossless_packets, 8 * dropped) << mode;
    EXPECT_GT(first_size(r).at("bw_average_gbps").get<double>(), 0.95 * lossless_bw) << mode;
  }
}

// The same at one drop in a hundred (about 170 drops): some restarted streams lose their
// first response too. The requester sees the PSNs start over (at or below the last
// response it dropped) and asks again at once; only a lost re-request (or a lost last
// response) waits for the 100 us timeout. Over 70% of the lossless bandwidth (75-81%
// measured; waiting for the timeout on each repeated loss gives 62%).
TEST(Transport, LossyReadsAskAgainWhenTheRestartedStreamMissesToo) {
  const std::vector<std::string> read_bw = {"perftest.test=read_bw", "perftest.sizes=[1MiB]",
                                            "perftest.iterations=60", "perftest.tx_depth=128"};
  const double lossless_bw = first_size(run(read_bw)).at("bw_average_gbps");
  for (const char* mode : {"go_back_n", "selective_repeat"}) {
    const json r = run(fabricsim::testing::with(
        read_bw, {"link.drop_rate=0.01", std::string("nic.transport.retransmit=") + mode}));
    EXPECT_GE(r.at("packets").at("dropped").get<int>(), 100) << mode;
    EXPECT_GT(first_size(r).at("bw_average_gbps").get<double>(), 0.7 * lossless_bw) << mode;
  }
}

TEST(Transport, BitErrorRateCorruptsFramesAndIsRecovered) {
  const json r = run({"perftest.test=write_bw", "perftest.sizes=[64KiB]", "perftest.iterations=100", "link.ber=1e-6",
                      "nic.transport.retransmit_timeout=20us"});
  EXPECT_GT(r.at("packets").at("dropped").get<int>(), 0);
  EXPECT_EQ(first_size(r).at("iterations"), 100);
}

// Two RDMA flows at line rate into endpoint 0 through one switch, 2 ms.
const std::string kTwoToOne = R"(
simulation: {seed: 1, duration: 2ms, warmup: 500us}
topology: {endpoints: 3}
traffic:
  pattern: explicit
  transport: rdma
  arrival: periodic
  flows:
    - {src: 1, dst: 0, load: 1.0, message_size: 1MiB}
    - {src: 2, dst: 0, load: 1.0, message_size: 1MiB}
output: {sample_interval: 10us}
)";

// DCQCN: the two flows into one 400GbE port; PFC keeps it lossless, ECN marks.
const std::string kIncast = kTwoToOne + R"(
link: {framing: roce_v2, cable_length: 3m, fec_decoder_latency: 20ns, flow_control: pfc}
switch:
  ports: 4
  buffer: shared_memory
  shared_buffer: 8MiB
  pfc: {xoff: 512KiB, xon: 256KiB, headroom: 128KiB}
  ecn: {enabled: true, kmin: 5KB, kmax: 200KB, pmax: 0.01}
)";

// The switch's egress bytes over the second half of the run: nearly all of them queue for
// the bottleneck port 0 (the others carry ACKs and CNPs).
double mean_queue_second_half(const json& r) {
  const auto& q = r.at("timeseries").at("egress_bytes");
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t i = q.size() / 2; i < q.size(); ++i, ++n) sum += q[i].get<double>();
  return sum / static_cast<double>(n);
}

double goodput(const json& r, int endpoint) {
  // One requester QP per endpoint here: the mean over its requesters is that QP's.
  const auto& qps = r.at("endpoints").at(endpoint).at("rdma").at("qps");
  EXPECT_EQ(qps.at("requesters").get<int>(), 1);
  return qps.at("goodput_gbps").at("mean").get<double>();
}

TEST(Dcqcn, TwoFlowsConvergeToAFairShareWithABoundedQueue) {
  const json cc = run_checked(load_config_text(kIncast, "dcqcn.yaml", {"nic.congestion_control.kind=dcqcn"}));
  const json none = run_checked(load_config_text(kIncast, "dcqcn.yaml", {"nic.congestion_control.kind=none"}));
  // Fair share (Zhu et al. 2015, Fig. 12): within 15% of each other.
  expect_near({"Nic", "DCQCN, two flows into one 400G port: goodput ratio of the flows",
               "Zhu et al., SIGCOMM 2015, Fig. 12 (fair share)"},
              goodput(cc, 1) / goodput(cc, 2), 1.0, 0.15, "");
  EXPECT_GT(cc.at("endpoints").at(1).at("rdma").at("cnps_received").get<int>(), 0);
  // The bottleneck queue stays near Kmin..Kmax with DCQCN and grows to the PFC limits without.
  EXPECT_LT(mean_queue_second_half(cc), 0.25 * mean_queue_second_half(none));
  auto pauses = [](const json& r) {
    int n = 0;
    for (const auto& p : r.at("ports"))
      for (const auto& v : p.at("vls")) n += v.at("pause_sent").get<int>();
    return n;
  };
  EXPECT_LT(pauses(cc), pauses(none));
  // The rate time series shows the cut below line rate.
  double lowest = 1e9;
  for (const auto& ep : cc.at("timeseries").at("rdma_rates"))
    if (ep.at("endpoint") == 1)
      for (const auto& s : ep.at("lowest_qp_rate_gbps"))
        if (!s.is_null()) lowest = std::min(lowest, s.get<double>());
  EXPECT_LT(lowest, 300.0);
}

TEST(IbCc, BecnsSlowTheSendersDown) {
  const std::vector<std::string> ib = {"link.framing=infiniband", "link.flow_control=credit",
                                       "switch.shared_buffer=16MiB", "switch.ecn.kmin=20KB"};
  auto with = [&](const char* kind) {
    std::vector<std::string> o = ib;
    o.push_back(std::string("nic.congestion_control.kind=") + kind);
    return run_checked(load_config_text(kIncast, "ibcc.yaml", o));
  };
  const json cc = with("ib_cc"), none = with("none");
  EXPECT_GT(cc.at("endpoints").at(1).at("rdma").at("cnps_received").get<int>(), 0);
  EXPECT_LT(mean_queue_second_half(cc), mean_queue_second_half(none));
}

// The mean over the measurement window of endpoint `e`'s mean QP rate (timeseries.rdma_rates).
double mean_cc_rate(const json& r, int e) {
  const double warmup_ns = r.at("measurement_window_ns").at(0).get<double>();
  const auto& t = r.at("timeseries").at("time_ns");
  for (const auto& ep : r.at("timeseries").at("rdma_rates")) {
    if (ep.at("endpoint") != e) continue;
    const auto& rates = ep.at("mean_qp_rate_gbps");
    double sum = 0;
    int n = 0;
    for (std::size_t i = 0; i < rates.size(); ++i)
      if (t.at(i).get<double>() > warmup_ns && !rates[i].is_null()) sum += rates[i].get<double>(), ++n;
    return n ? sum / n : 0;
  }
  return 0;
}

// IB CC throttles by idle time after each packet, not by a rate: the reported CC rate
// (qps.csv, qp_rates.csv, timeseries) is that delay as a rate for MTU-sized packets, so a
// throttled flow shows its throttled rate, and over the run it averages to its goodput.
TEST(IbCc, ReportedRateIsTheRateTheInterPacketDelayLeaves) {
  const json r = run_checked(load_config_text(kIncast, "ibcc.yaml",
                                              {"link.framing=infiniband", "link.flow_control=credit",
                                               "switch.shared_buffer=16MiB", "nic.congestion_control.kind=ib_cc"}));
  for (int e : {1, 2}) {
    SCOPED_TRACE(e);
    EXPECT_LT(goodput(r, e), 300.0);  // throttled: the case this test is about
    EXPECT_NEAR(mean_cc_rate(r, e) / goodput(r, e), 1.0, 0.1);
    EXPECT_LT(r.at("endpoints").at(e).at("rdma").at("qps").at("cc_rate_gbps").at("mean").get<double>(), 400.0);
  }
}

// The shipped InfiniBand presets on a 2:1 incast of line-rate RDMA WRITE streams through
// one switch: IB CC (values are assumptions, presets/ib_ndr.yaml) keeps the sink port at
// least 85% busy and the queue well below the credit-bounded one it reaches without CC.
TEST(IbCc, PresetsKeepATwoToOneIncastAtLineRateWithAShortQueue) {
  for (const char* preset : {"ib_ndr", "ib_xdr"}) {
    SCOPED_TRACE(preset);
    const std::string yaml =
        std::string("include: ") + FABRICSIM_SOURCE_DIR + "/presets/" + preset + ".yaml\nswitch: {ports: 4}" + kTwoToOne;
    auto on = [&](const char* kind) {
      return run_checked(load_config_text(yaml, "incast.yaml", {std::string("nic.congestion_control.kind=") + kind}));
    };
    const json cc = on("ib_cc"), none = on("none");
    EXPECT_GE(cc.at("endpoints").at(0).at("accepted_load").get<double>(), 0.85);
    EXPECT_GT(cc.at("endpoints").at(1).at("rdma").at("cnps_received").get<int>(), 0);
    EXPECT_LT(mean_queue_second_half(cc), 0.25 * mean_queue_second_half(none));
  }
}

}  // namespace

// The NIC's PSN table against std::map on random streams, including key 0 and keys
// that share their low or high bits (collisions), through several growths.
TEST(PsnTable, KeepsEveryStreamsPsnLikeAMap) {
  fabricsim::tlm_fabric::PsnTable table;
  std::map<std::uint64_t, std::uint32_t> reference;
  std::mt19937_64 rng(5);
  std::vector<std::uint64_t> keys{0, 1, std::uint64_t{1} << 63};
  for (int i = 0; i < 3000; ++i) keys.push_back(i % 3 == 0 ? rng() : (rng() % 64) << (rng() % 40));
  for (int step = 0; step < 200000; ++step) {
    const std::uint64_t key = keys[rng() % keys.size()];
    const std::uint32_t got = table[key]++;
    ASSERT_EQ(got, reference[key]++) << "key " << key << " at step " << step;
  }
  EXPECT_EQ(table.size(), reference.size());
}

// The DMA read timeline piece by piece, as defined (tlm/dma_engine.h): each max-read-
// request piece takes the oldest tag, its request goes out once the tag is free and
// after the memory latency, its completions follow the earlier ones on the downstream
// wire, and its tag is free again when they are in. DmaEngine::read skips the tag
// reads once the wire alone sets the pace; it must give the same times, to the tick.
TEST(DmaEngine, ReadsFollowTheTagAndWireRecurrence) {
  using fabricsim::hw::MemoryTarget;
  using fabricsim::tlm_fabric::to_sc;
  using sc_core::sc_time;
  std::mt19937_64 rng(11);
  for (int tags : {1, 2, 3, 8, 256}) {
    for (std::uint32_t mrrs : {128u, 512u, 4096u}) {
      fabricsim::hw::PcieParams params;
      params.read_tags = tags;
      params.max_read_request = mrrs;
      params.generation = tags == 8 ? 3 : 5;  // a slow wire: latency below tags x wire
      fabricsim::tlm_fabric::DmaEngine dma(params);
      const fabricsim::hw::PcieTiming& timing = dma.timing();
      auto wire = [&](std::uint64_t b) { return to_sc(timing.transfer(b, params.max_payload)); };
      const double request_s = wire(0).to_seconds();
      std::vector<sc_time> tag(static_cast<std::size_t>(tags), sc_core::SC_ZERO_TIME);
      std::size_t next_tag = 0;
      sc_time down_free = sc_core::SC_ZERO_TIME, now = sc_core::SC_ZERO_TIME;
      double up_busy = 0, down_busy = 0;
      for (int op = 0; op < 400; ++op) {
        // Back to back, or after the wire has gone idle.
        now += sc_time(static_cast<double>(rng() % 4 == 0 ? rng() % 20000 : rng() % 50), sc_core::SC_NS);
        // Empty, up to a few pieces (then the tags taken before bind), or many.
        const std::uint64_t bytes = rng() % 10 == 0 ? rng() % 3 : rng() % (rng() % 2 ? 4096 : 64 * 1024);
        const std::uint64_t chunk = rng() % 3 == 0 ? 0 : 1 + rng() % 8192;
        const MemoryTarget target = rng() % 2 ? MemoryTarget::host : MemoryTarget::gpu;
        const sc_time latency = to_sc(timing.read_latency(target));
        std::vector<sc_time> expected(chunk ? (bytes + chunk - 1) / chunk : 0), ready(expected.size());
        const sc_time got = dma.read(now, bytes, chunk, target, ready.data());
        std::uint64_t offset = 0;
        std::size_t next_chunk = 0;
        do {
          const std::uint64_t piece = std::min<std::uint64_t>(mrrs, bytes - offset);
          sc_time& t = tag[next_tag];
          next_tag = (next_tag + 1) % tag.size();
          down_free = std::max(std::max(now, t) + latency, down_free) + wire(piece);
          t = down_free;
          up_busy += request_s;
          down_busy += wire(piece).to_seconds();
          offset += piece;
          for (; next_chunk < expected.size() && ((next_chunk + 1) * chunk <= offset || offset == bytes); ++next_chunk)
            expected[next_chunk] = down_free;
        } while (offset < bytes);
        ASSERT_EQ(got, down_free) << "tags " << tags << " MRRS " << mrrs << " read " << op << ": " << bytes << " B";
        ASSERT_EQ(ready, expected) << "tags " << tags << " MRRS " << mrrs << " read " << op;
        ASSERT_EQ(dma.upstream_busy_s(), up_busy);
        ASSERT_EQ(dma.downstream_busy_s(), down_busy);
      }
    }
  }
}

// A retransmission's re-read goes ahead of the posted reads reserved for later: it is in
// one read latency and its completions' wire time after it is issued, re-reads follow one
// another, and the posted reads issued after it queue behind its completions (behind the
// earlier posted reads too, or, with the link idle, right behind it).
TEST(DmaEngine, ReReadGoesAheadOfThePostedReads) {
  using fabricsim::hw::MemoryTarget;
  using fabricsim::tlm_fabric::to_sc;
  using sc_core::sc_time;
  fabricsim::tlm_fabric::DmaEngine dma{fabricsim::hw::PcieParams{}};
  const sc_time piece = to_sc(dma.timing().transfer(512, 256));  // one MRRS piece's completions
  const sc_time latency(700, sc_core::SC_NS), at(1, sc_core::SC_US);
  const sc_time posted = dma.read(sc_core::SC_ZERO_TIME, 1 << 20, 0, MemoryTarget::host);
  ASSERT_GT(posted, sc_time(15, sc_core::SC_US));  // 2,048 pieces reserved ahead
  EXPECT_EQ(dma.reread(at, 4096, MemoryTarget::host), at + latency + 8 * piece);
  EXPECT_EQ(dma.reread(at, 4096, MemoryTarget::host), at + latency + 16 * piece);
  EXPECT_EQ(dma.read(at, 512, 0, MemoryTarget::host), posted + 17 * piece);
  const sc_time idle(100, sc_core::SC_US);
  const sc_time reread = dma.reread(idle, 4096, MemoryTarget::host);
  EXPECT_EQ(reread, idle + latency + 8 * piece);
  EXPECT_EQ(dma.read(idle, 512, 0, MemoryTarget::host), reread + piece);
}
