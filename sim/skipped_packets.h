// The links the packets fast-forward skips would have crossed (docs/performance.md,
// "Fast-forward"): a transfer's data packets from its source to its destination and its
// ACKs back, walked through the switches' forwarding tables the way a steady flow's
// packets take them (Switch::steady_route), counted on those links and switch ports as
// carried. Link and port utilisation, packet hops, the tiers' figures and the switches'
// packet counters then include the skipped traffic.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include <systemc>

namespace fabricsim::tlm_fabric {
class Link;
}

namespace fabricsim::sim {

class Fabric;

class SkippedPackets {
 public:
  /// For `fabric`'s links and forwarding tables (built), with `lanes` wake-queue lanes.
  SkippedPackets(const Fabric& fabric, int lanes);
  /// A WRITE of `bytes` from endpoint `src` (its QP `qpn`) to `dst`, sent without its
  /// packets. In a parallel window its counts wait in the calling lane for merge().
  void count(int src, int dst, std::uint32_t qpn, std::uint64_t bytes);
  /// The counts the lanes kept in a window onto the links (between windows).
  void merge();

 private:
  // Frames of one direction of a transfer: `full` frames of `payload` bytes, then a
  // shorter `tail` frame (none when `tail_frames` is 0).
  struct Frames {
    std::uint64_t full = 0;
    std::uint32_t payload = 0;
    std::uint64_t tail_frames = 0;
    std::uint32_t tail = 0;
  };
  // Counts on one link, and the switch port it leaves (-1: a NIC's), kept by a lane in a window.
  struct Carried {
    std::size_t link;
    int sw, port;
    std::uint64_t packets, bytes;
    sc_core::sc_time busy;
  };
  // A transfer's stream: every transfer of one takes the same links.
  struct Stream {
    int src, dst;
    std::uint32_t qpn;
    std::uint64_t bytes;
    bool operator==(const Stream& o) const { return src == o.src && dst == o.dst && qpn == o.qpn && bytes == o.bytes; }
  };
  struct StreamHash {
    std::size_t operator()(const Stream& s) const;
  };
  // Per lane: what the lane made of each stream seen (route_of: the walk and the frames'
  // wire times once per stream, not per transfer), and its counts in this window.
  struct Lane {
    std::unordered_map<Stream, std::vector<Carried>, StreamHash> routes;
    std::vector<Carried> window;
  };
  // What a transfer of `s` counts on each link and port it crosses.
  std::vector<Carried> route_of(const Stream& s) const;
  // `frames` from endpoint `src` to `dst` on flow `flow`, from its uplink on.
  void walk(int src, int dst, std::uint32_t flow, const Frames& frames, std::vector<Carried>& out) const;
  // `frames` leaving switch `s` on its port toward `dst`, and on from there.
  void forward(int s, int src, int dst, std::uint32_t flow, const Frames& frames, std::vector<Carried>& out) const;
  // `frames` on a link: a NIC's uplink (`sw` -1) or switch `sw`'s egress `port`.
  void carry(std::size_t link, int sw, int port, const Frames& frames, std::vector<Carried>& out) const;
  void count(const Carried& c);

  const Fabric& fabric_;
  std::vector<tlm_fabric::Link*> links_;          // every link, by index
  std::vector<std::size_t> uplink_;               // per endpoint: its uplink's index
  std::vector<std::vector<std::size_t>> egress_;  // per switch and port: the egress link's index
  std::vector<Lane> lanes_;
};

}  // namespace fabricsim::sim
