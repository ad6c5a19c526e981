// bench/hop_floor: what a packet-hop of S2's fabric costs at the least on this machine.
// S2's fabric and traffic in a bare packet-level discrete-event loop (output-queued
// switches, no SystemC, no core clock, no allocator), run once with a binary heap and
// once with a timing wheel like fabricsim's WakeQueue; both must simulate alike. Not a
// model of fabricsim's switch: the floor bench/bench.py sets S2 against (`floor_ratio`;
// bench/README.md, docs/performance.md).
//
// Usage: hop_floor [simulated_us [load]]   (defaults 300 and 0.4, S2's); one JSON line per queue.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <random>
#include <vector>

namespace {

constexpr int k = 4, n = 3;                    // k-ary n-tree
constexpr int kVls = 4;
constexpr int kEndpoints = 64;                 // k^n
constexpr int kPerLevel = 16;                  // k^(n-1) switches per level
constexpr int kSwitches = n * kPerLevel;       // 48
constexpr std::uint64_t kNs = 1000;            // times in ps
constexpr double kLinkBps = 400e9;
constexpr std::uint64_t kPayloadBytes = 1024;
// An NDR-like link: 1 KiB payload + 26 B of IB headers (LRH, BTH, ICRC, VCRC) at 400 Gb/s.
constexpr std::uint64_t kSerialize = (kPayloadBytes + 26) * 8 * 1000 / 400;  // 21,000 ps
constexpr std::uint64_t kLinkLatency = 36 * kNs;  // first bit out -> header in (cable, FEC, header)
constexpr std::uint64_t kPipeline = 100 * kNs;    // header in -> may leave (route, arbitrate)
constexpr std::uint64_t kCreditLatency = 10 * kNs + 15 * kNs;  // tail out -> credit back upstream
constexpr int kCreditsPerVl = 256 * 1024 / kVls / (kPayloadBytes + 26);  // packets of a 256 KiB buffer per VL
constexpr double kS2Load = 0.4;                 // offered load per endpoint, S2's

// Node ids: switches 0..47, NICs 48..111. A port: node * 8 + port (NICs: port 0).
struct Peer { int node = -1, port = -1; };
constexpr int kNodes = kSwitches + kEndpoints;
constexpr int kPorts = 2 * k;

int sw(int level, int word) { return level * kPerLevel + word; }
static_assert(k == 4, "digits are two bits");
int digit(int x, int d) { return (x >> (2 * d)) & 3; }
int with_digit(int x, int d, int v) { return (x & ~(3 << (2 * d))) | (v << (2 * d)); }

struct Packet { int dst, vl, in_node, in_port; std::uint64_t created; };  // in_node -1: still at its source

struct OutPort {
  std::uint64_t busy_until = 0;
  int credits[kVls];
  std::vector<int> fifo[kVls];  // packet ids (a head index per VL)
  std::size_t head[kVls] = {};
  int next_vl = 0;
  bool wake_pending = false;
  bool waiting() const {
    for (int vl = 0; vl < kVls; ++vl)
      if (head[vl] != fifo[vl].size()) return true;
    return false;
  }
};

enum Kind : std::uint32_t { kArrive, kPortFree, kCredit, kSource };
struct Ev {
  std::uint64_t t;
  std::uint32_t seq;
  std::uint32_t what;  // kind << 28 | (object id)
  bool operator<(const Ev& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

// A binary heap (std::priority_queue) or a timing wheel of 1.024 ns slots (as fabricsim's
// WakeQueue was until its 128 ps slots), in the same order: time, then the order of scheduling.
struct HeapQueue {
  std::priority_queue<Ev> heap;
  bool empty() const { return heap.empty(); }
  void push(const Ev& e) { heap.push(e); }
  Ev pop() { Ev e = heap.top(); heap.pop(); return e; }
};

struct WheelQueue {
  static constexpr int kShift = 10, kSlots = 4096;  // 1.024 ns slots, 4.2 us ahead
  std::vector<Ev> slot[kSlots];                     // the current one sorted latest first
  std::priority_queue<Ev> far;                      // beyond the wheel's span
  std::uint64_t cur = 0;                            // current slot number
  bool cur_sorted = false;
  std::size_t count = 0;
  bool empty() const { return count == 0; }
  void push(const Ev& e) {
    ++count;
    const std::uint64_t s = e.t >> kShift;
    if (s >= cur + kSlots) return far.push(e);
    std::vector<Ev>& v = slot[s % kSlots];
    if (s == cur && cur_sorted) v.insert(std::upper_bound(v.begin(), v.end(), e), e);  // Ev::operator<: later first
    else v.push_back(e);
  }
  Ev pop() {
    for (;;) {
      std::vector<Ev>& v = slot[cur % kSlots];
      if (!v.empty()) {
        if (!cur_sorted) {
          std::sort(v.begin(), v.end());  // latest first: the earliest at the back
          cur_sorted = true;
        }
        const Ev e = v.back();
        v.pop_back();
        --count;
        return e;
      }
      ++cur;
      cur_sorted = false;
      while (!far.empty() && (far.top().t >> kShift) < cur + kSlots) {  // now within the span
        slot[(far.top().t >> kShift) % kSlots].push_back(far.top());
        far.pop();
      }
    }
  }
};

template <class Queue>
struct Sim {
  Peer peer[kNodes][kPorts];
  OutPort out[kNodes][kPorts];
  std::vector<Packet> packets;
  std::vector<int> free_packets;
  Queue queue;
  std::uint32_t seq = 0;
  std::mt19937_64 rng{1};
  std::uint64_t now = 0, injected = 0, delivered = 0, hops = 0, events = 0, latency_sum = 0;
  int next_sl[kEndpoints] = {};
  std::uint64_t mean_gap;

  void at(std::uint64_t t, Kind kind, std::uint32_t id) { queue.push({t, seq++, (kind << 28) | id}); }

  explicit Sim(double load) {
    // Endpoint e hangs off leaf e / k, port e % k. Switch <w, l> up port k + j reaches
    // <w with digit l := j, l + 1> at its down port (digit l of w).
    for (int e = 0; e < kEndpoints; ++e) {
      const int leaf = sw(0, e / k), nic = kSwitches + e;
      peer[leaf][e % k] = {nic, 0};
      peer[nic][0] = {leaf, e % k};
    }
    for (int l = 0; l + 1 < n; ++l)
      for (int w = 0; w < kPerLevel; ++w)
        for (int j = 0; j < k; ++j) {
          const int up = sw(l + 1, with_digit(w, l, j));
          peer[sw(l, w)][k + j] = {up, digit(w, l)};
          peer[up][digit(w, l)] = {sw(l, w), k + j};
        }
    for (auto& node : out)
      for (auto& p : node) std::fill(std::begin(p.credits), std::end(p.credits), kCreditsPerVl);
    const double packets_per_s = load * kLinkBps / (kPayloadBytes * 8);
    mean_gap = static_cast<std::uint64_t>(1e12 / packets_per_s);
    for (int e = 0; e < kEndpoints; ++e) at(next_gap(), kSource, e);
  }

  std::uint64_t next_gap() { return static_cast<std::uint64_t>(std::exponential_distribution<double>(1.0)(rng) * mean_gap); }

  int route(int node, int dst) {
    const int level = node / kPerLevel, word = node % kPerLevel;
    // Below this switch: the endpoint's digits above `level` match the word's.
    bool below = true;
    for (int d = level; d + 1 < n; ++d) below &= digit(dst / k, d) == digit(word, d);
    if (below) return digit(dst, level);  // down port: the destination's digit at this level
    return k + digit(dst, level);         // d-mod-k up: the digit the way down will not use here
  }

  void enqueue(int node, int port, int id) {
    OutPort& o = out[node][port];
    o.fifo[packets[id].vl].push_back(id);
    try_send(node, port);
  }

  void try_send(int node, int port) {
    OutPort& o = out[node][port];
    if (o.busy_until <= now) send_next(o, node, port);
    // Something waits behind a busy wire: look again when it frees (a credit's return looks too).
    if (o.busy_until > now && o.waiting() && !o.wake_pending) {
      o.wake_pending = true;
      at(o.busy_until, kPortFree, node * kPorts + port);
    }
  }

  // The wire is free: the next VL in round robin with a packet and a credit sends its head.
  void send_next(OutPort& o, int node, int port) {
    for (int i = 0; i < kVls; ++i) {
      const int vl = (o.next_vl + i) % kVls;
      if (o.head[vl] == o.fifo[vl].size() || o.credits[vl] == 0) continue;
      const int id = o.fifo[vl][o.head[vl]++];
      if (o.head[vl] == o.fifo[vl].size()) { o.fifo[vl].clear(); o.head[vl] = 0; }
      o.next_vl = (vl + 1) % kVls;
      --o.credits[vl];
      o.busy_until = now + kSerialize;
      Packet& p = packets[id];
      ++hops;
      // The input buffer it leaves (cut-through: freed as its tail goes) credits its upstream.
      if (p.in_node >= 0) {
        const Peer& up = peer[p.in_node][p.in_port];
        at(now + kSerialize + kCreditLatency, kCredit, (up.node * kPorts + up.port) * kVls + vl);
      }
      const Peer& to = peer[node][port];
      p.in_node = to.node;
      p.in_port = to.port;
      at(now + kLinkLatency + (to.node >= kSwitches ? kSerialize : kPipeline), kArrive, id);
      return;
    }
  }

  void arrive(int id) {
    Packet& p = packets[id];
    if (p.in_node >= kSwitches) {  // at the NIC: delivered, its buffer slot credited back
      ++delivered;
      latency_sum += now - p.created;
      const Peer& up = peer[p.in_node][0];
      at(now + kCreditLatency, kCredit, (up.node * kPorts + up.port) * kVls + p.vl);
      free_packets.push_back(id);
      return;
    }
    enqueue(p.in_node, route(p.in_node, p.dst), id);
  }

  void source(int e) {
    int id;
    if (free_packets.empty()) { id = static_cast<int>(packets.size()); packets.push_back({}); }
    else { id = free_packets.back(); free_packets.pop_back(); }
    int dst = static_cast<int>(rng() % (kEndpoints - 1));
    if (dst >= e) ++dst;
    packets[id] = {dst, next_sl[e], -1, -1, now};
    ++injected;
    next_sl[e] = (next_sl[e] + 1) % kVls;
    enqueue(kSwitches + e, 0, id);
    at(now + next_gap(), kSource, e);
  }

  void run(std::uint64_t until) {
    while (!queue.empty()) {
      const Ev ev = queue.pop();
      if (ev.t >= until) break;
      now = ev.t;
      ++events;
      const std::uint32_t id = ev.what & 0x0fffffff;
      switch (ev.what >> 28) {
        case kArrive: arrive(static_cast<int>(id)); break;
        case kPortFree: {
          const int node = static_cast<int>(id / kPorts), port = static_cast<int>(id % kPorts);
          out[node][port].wake_pending = false;
          try_send(node, port);
          break;
        }
        case kCredit: {
          const int port = static_cast<int>(id / kVls), vl = static_cast<int>(id % kVls);
          ++out[port / kPorts][port % kPorts].credits[vl];
          try_send(port / kPorts, port % kPorts);
          break;
        }
        case kSource: source(static_cast<int>(id)); break;
      }
    }
  }
};

template <class Queue>
void measure(const char* queue, double us, double load) {
  Sim<Queue> sim(load);
  const auto t0 = std::chrono::steady_clock::now();
  sim.run(static_cast<std::uint64_t>(us * 1e6));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double accepted = sim.delivered * kPayloadBytes * 8.0 / (kEndpoints * kLinkBps * us * 1e-6);
  std::printf("{\"queue\": \"%s\", \"simulated_us\": %g, \"wall_time_s\": %.4f, \"injected_packets\": %llu, "
              "\"delivered_packets\": %llu, \"packet_hops\": %llu, \"events\": %llu, \"offered_load\": %g, "
              "\"accepted_load\": %.4f, \"mean_latency_ns\": %.1f, \"delivered_packets_per_wall_s\": %.0f, "
              "\"ns_per_hop\": %.1f}\n",
              queue, us, wall, static_cast<unsigned long long>(sim.injected), static_cast<unsigned long long>(sim.delivered),
              static_cast<unsigned long long>(sim.hops), static_cast<unsigned long long>(sim.events), load, accepted,
              sim.delivered ? sim.latency_sum / 1e3 / sim.delivered : 0.0, sim.delivered / wall, wall * 1e9 / sim.hops);
}

}  // namespace

int main(int argc, char** argv) {
  const double us = argc > 1 ? std::atof(argv[1]) : 300.0;
  const double load = argc > 2 ? std::atof(argv[2]) : kS2Load;
  if (argc > 3 || !(us > 0 && us <= 1e5) || !(load > 0 && load <= 1)) {
    std::fprintf(stderr, "usage: hop_floor [simulated_us in (0, 100000] [offered load in (0, 1]]]\n");
    return 2;
  }
  measure<HeapQueue>("heap", us, load);
  measure<WheelQueue>("wheel", us, load);
}
