// The wake queue's lanes over several processes (WakeQueue::set_processes): six lanes,
// one station each, pass tokens round a ring through calls that cross as bytes; run in
// one process and, under mpirun (tests/CMakeLists.txt), in two and three. Every
// station's log of the tokens it heard must be the one the ring's timing gives, whatever
// process ran it; a station failing in one process stops every process with its message.
// Part of test_distributed; one SystemC elaboration per process, so ctest runs each of
// these tests in processes of their own (tests/CMakeLists.txt).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>

#include "tlm/distributed.h"
#include "tlm/sim_time.h"
#include "tlm/wake_queue.h"

namespace dist = fabricsim::tlm_fabric::distributed;
using fabricsim::tlm_fabric::WakeEvent;
using fabricsim::tlm_fabric::WakeQueue;
using sc_core::sc_time;

namespace {

constexpr int kLanes = 6;
constexpr std::uint64_t kPs = 1000;  // kernel ticks per ns (SystemC's default resolution, 1 ps)
constexpr std::uint64_t kLookaheadNs = 10;
constexpr std::uint64_t kRunNs = 3000;

/// A token's hop from one station to the next: at least the lookahead, varied by token and hop.
std::uint64_t hop_ns(std::uint64_t token, std::uint64_t hops) { return kLookaheadNs + (token * 7 + hops * 3) % 11; }

/// What a station heard: (time in ticks, token, hops so far).
using Heard = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>;

/// Token `token` starts at station `token` at `token` ns; each station passes a token on
/// to the next one round the ring when it hears it.
std::vector<std::vector<Heard>> expected_logs(int tokens) {
  std::vector<std::vector<Heard>> logs(kLanes);
  for (int t = 0; t < tokens; ++t) {
    std::uint64_t at = static_cast<std::uint64_t>(t) * kPs;
    for (std::uint64_t hops = 0; at < kRunNs * kPs; ++hops) {
      logs[static_cast<std::size_t>((static_cast<std::uint64_t>(t) + hops) % kLanes)].emplace_back(at, t, hops);
      at += hop_ns(static_cast<std::uint64_t>(t), hops) * kPs;
    }
  }
  for (auto& log : logs) std::sort(log.begin(), log.end());
  return logs;
}

struct Token {
  std::uint64_t id, hops, at;  // `at`: when the station hears it, in ticks
};

/// A station: one block of one lane, hearing tokens and passing them on.
class Station {
 public:
  Station(int lane, std::vector<std::unique_ptr<Station>>& ring, std::uint64_t fail_at_ns)
      : lane_(lane), ring_(ring), fail_at_ns_(fail_at_ns) {
    WakeQueue& queue = WakeQueue::instance();
    queue.building_lane(lane);
    wake_ = std::make_unique<WakeEvent>([this] { on_wake(); });
    receiver_ = queue.add_receiver([this](const unsigned char* bytes) {
      Token t;
      std::memcpy(&t, bytes, sizeof t);
      hear(t);
    });
  }
  void hear(const Token& t) {
    waiting_.push_back(t);
    wake_->notify_at(sc_time::from_value(t.at));
  }
  const std::vector<Heard>& log() const { return log_; }

 private:
  // A token handed to the next station's lane, as bytes between processes.
  struct Pass {
    Station* to;
    Token token;
    void operator()() const { to->hear(token); }
    void pack(WakeQueue::Bytes& out) const {
      const auto* b = reinterpret_cast<const unsigned char*>(&token);
      out.insert(out.end(), b, b + sizeof token);
    }
  };
  void on_wake() {
    const std::uint64_t now = fabricsim::tlm_fabric::sim_now().value();
    if (fail_at_ns_ > 0 && now >= fail_at_ns_ * kPs) throw std::runtime_error("station " + std::to_string(lane_) + " fails");
    std::sort(waiting_.begin(), waiting_.end(), [](const Token& a, const Token& b) {
      return std::tie(a.at, a.id) < std::tie(b.at, b.id);
    });
    while (!waiting_.empty() && waiting_.front().at <= now) {
      const Token t = waiting_.front();
      waiting_.pop_front();
      log_.emplace_back(t.at, t.id, t.hops);
      const Token next{t.id, t.hops + 1, t.at + hop_ns(t.id, t.hops) * kPs};
      Station& to = *ring_[static_cast<std::size_t>((lane_ + 1) % kLanes)];
      WakeQueue::instance().defer(to.lane_, sc_time::from_value(now), sc_time::from_value(next.at), to.receiver_,
                                  Pass{&to, next});
    }
    if (!waiting_.empty()) wake_->notify_at(sc_time::from_value(waiting_.front().at));
  }
  int lane_;
  std::vector<std::unique_ptr<Station>>& ring_;
  std::uint64_t fail_at_ns_;
  std::unique_ptr<WakeEvent> wake_;
  int receiver_ = -1;
  std::deque<Token> waiting_;
  std::vector<Heard> log_;
};

/// The ring over the processes (lane k in process k x processes / lanes); each station's
/// log, gathered to process 0 (elsewhere empty).
std::vector<std::vector<Heard>> run_ring(int tokens, std::uint64_t fail_at_ns = 0) {
  WakeQueue& queue = WakeQueue::instance();
  queue.set_lanes(kLanes);
  std::vector<int> process_of(kLanes);
  for (int k = 0; k < kLanes; ++k) process_of[static_cast<std::size_t>(k)] = k * dist::size() / kLanes;
  queue.set_processes(process_of);
  std::vector<std::unique_ptr<Station>> ring;
  for (int k = 0; k < kLanes; ++k) ring.push_back(std::make_unique<Station>(k, ring, k == kLanes - 1 ? fail_at_ns : 0));
  queue.set_lookahead(sc_time(static_cast<double>(kLookaheadNs), sc_core::SC_NS));
  for (int t = 0; t < tokens; ++t)
    ring[static_cast<std::size_t>(t % kLanes)]->hear({static_cast<std::uint64_t>(t), 0, static_cast<std::uint64_t>(t) * kPs});
  fabricsim::tlm_fabric::simulate_for(sc_time(static_cast<double>(kRunNs), sc_core::SC_NS));
  // Each station's log from the process that ran it.
  WakeQueue::Bytes mine;
  for (int k = 0; k < kLanes; ++k) {
    if (!queue.owns(k)) continue;
    const auto& log = ring[static_cast<std::size_t>(k)]->log();
    const std::uint64_t header[2] = {static_cast<std::uint64_t>(k), log.size()};
    const auto* h = reinterpret_cast<const unsigned char*>(header);
    mine.insert(mine.end(), h, h + sizeof header);
    for (const Heard& e : log) {
      const std::uint64_t row[3] = {std::get<0>(e), std::get<1>(e), std::get<2>(e)};
      const auto* r = reinterpret_cast<const unsigned char*>(row);
      mine.insert(mine.end(), r, r + sizeof row);
    }
  }
  std::vector<std::vector<Heard>> logs(kLanes);
  for (const auto& bytes : dist::gather(mine, 0))
    for (std::size_t at = 0; at < bytes.size();) {
      std::uint64_t header[2];
      std::memcpy(header, bytes.data() + at, sizeof header);
      at += sizeof header;
      for (std::uint64_t i = 0; i < header[1]; ++i, at += 3 * sizeof(std::uint64_t)) {
        std::uint64_t row[3];
        std::memcpy(row, bytes.data() + at, sizeof row);
        logs[header[0]].emplace_back(row[0], row[1], row[2]);
      }
    }
  EXPECT_GT(queue.windows(), 100u) << "the lanes ran in parallel windows";
  return logs;
}

}  // namespace

// Twelve tokens, two starting at each station: every station heard each token at the
// time, and in the order, the ring's hop times give.
TEST(DistributedLanes, TokensRoundTheRingAsInOneProcess) {
  const auto logs = run_ring(12);
  if (dist::rank() != 0) return;
  const auto expected = expected_logs(12);
  for (int k = 0; k < kLanes; ++k) {
    EXPECT_GT(expected[static_cast<std::size_t>(k)].size(), 100u);
    EXPECT_EQ(logs[static_cast<std::size_t>(k)], expected[static_cast<std::size_t>(k)]) << "station " << k;
  }
}

// The last station (the last process's) fails at 1 us: every process stops with its
// message and the block that threw it.
TEST(DistributedLanes, AStationFailingStopsEveryProcess) {
  try {
    run_ring(12, 1000);
    ADD_FAILURE() << "the run did not fail";
  } catch (const fabricsim::tlm_fabric::BlockError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("station 5 fails"), std::string::npos) << what;
    EXPECT_NE(what.find("In block"), std::string::npos) << what;
  }
}
