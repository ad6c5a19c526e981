#include "sim/skipped_packets.h"

#include <stdexcept>
#include <string>
#include <unordered_map>

#include "hw/seed.h"
#include "sim/fabric.h"
#include "tlm/sim_time.h"
#include "tlm/wake_queue.h"

namespace fabricsim::sim {

SkippedPackets::SkippedPackets(const Fabric& fabric, int lanes)
    : fabric_(fabric), lanes_(static_cast<std::size_t>(lanes)) {
  std::unordered_map<const tlm_fabric::Link*, std::size_t> index;
  for (const auto& link : fabric.all_links()) {
    index.emplace(link.get(), links_.size());
    links_.push_back(link.get());
  }
  for (std::size_t e = 0; e < fabric.nics().size(); ++e) uplink_.push_back(index.at(&fabric.uplink(static_cast<int>(e))));
  for (const auto& ports : fabric.port_links()) {
    auto& out = egress_.emplace_back(ports.size(), links_.size());
    for (std::size_t p = 0; p < ports.size(); ++p)
      if (ports[p].egress) out[p] = index.at(ports[p].egress);
  }
}

std::size_t SkippedPackets::StreamHash::operator()(const Stream& s) const {
  return hw::mix_seed(hw::mix_seed(hw::mix_seed(static_cast<std::uint64_t>(s.src), static_cast<std::uint64_t>(s.dst)), s.qpn),
                      s.bytes);
}

void SkippedPackets::count(int src, int dst, std::uint32_t qpn, std::uint64_t bytes) {
  Lane& lane = lanes_[static_cast<std::size_t>(tlm_fabric::detail::lane)];
  const Stream s{src, dst, qpn, bytes};
  auto known = lane.routes.find(s);
  if (known == lane.routes.end()) known = lane.routes.emplace(s, route_of(s)).first;
  if (tlm_fabric::WakeQueue::instance().in_window())
    lane.window.insert(lane.window.end(), known->second.begin(), known->second.end());
  else
    for (const Carried& c : known->second) count(c);
}

std::vector<SkippedPackets::Carried> SkippedPackets::route_of(const Stream& s) const {
  const tlm_fabric::RdmaEngine& rdma = fabric_.nics()[static_cast<std::size_t>(s.src)]->rdma();
  const std::uint64_t packets = rdma.packets_of(s.bytes), mtu = rdma.mtu();
  std::vector<Carried> route;
  Frames data;
  data.full = s.bytes / mtu;
  data.payload = static_cast<std::uint32_t>(mtu);
  data.tail_frames = packets - data.full;
  data.tail = static_cast<std::uint32_t>(s.bytes - data.full * mtu);
  walk(s.src, s.dst, s.qpn, data, route);
  // The ACKs come back on the responder's QP: its number is their flow.
  Frames acks;
  acks.full = rdma.acks_of(packets);
  acks.payload = tlm_fabric::kAckPayloadBytes;
  walk(s.dst, s.src, static_cast<std::uint32_t>(rdma.peer_qpn(static_cast<int>(s.qpn))), acks, route);
  return route;
}

void SkippedPackets::walk(int src, int dst, std::uint32_t flow, const Frames& frames, std::vector<Carried>& out) const {
  carry(uplink_[static_cast<std::size_t>(src)], -1, 0, frames, out);
  if (!fabric_.switches().empty())
    forward(fabric_.graph().host_switch[static_cast<std::size_t>(src)], src, dst, flow, frames, out);
}

void SkippedPackets::forward(int s, int src, int dst, std::uint32_t flow, const Frames& frames,
                             std::vector<Carried>& out) const {
  for (std::size_t hops = 0; hops <= fabric_.switches().size(); ++hops) {
    const auto route = fabric_.switches()[static_cast<std::size_t>(s)]->steady_route(src, dst, flow);
    if (route.spread) {
      // Round robin from `first`: the full frames evenly, the tail frame after the last full one.
      const std::size_t k = route.spread->size();
      for (std::size_t j = 0; j < k; ++j) {
        Frames share = frames;
        share.full = frames.full / k + (j < frames.full % k ? 1 : 0);
        share.tail_frames = j == frames.full % k ? frames.tail_frames : 0;
        if (share.full + share.tail_frames == 0) continue;
        const int port = (*route.spread)[(route.first + j) % k];
        carry(egress_[static_cast<std::size_t>(s)][static_cast<std::size_t>(port)], s, port, share, out);
        const PortLinks& next = fabric_.port_links()[static_cast<std::size_t>(s)][static_cast<std::size_t>(port)];
        if (next.peer_switch >= 0) forward(next.peer_switch, src, dst, flow, share, out);
      }
      return;
    }
    if (route.port < 0)
      throw std::logic_error("fast-forward: " + std::string(fabric_.switches()[static_cast<std::size_t>(s)]->name()) +
                             " has no route to endpoint " + std::to_string(dst));
    carry(egress_[static_cast<std::size_t>(s)][static_cast<std::size_t>(route.port)], s, route.port, frames, out);
    const PortLinks& next = fabric_.port_links()[static_cast<std::size_t>(s)][static_cast<std::size_t>(route.port)];
    if (next.peer_switch < 0) return;
    s = next.peer_switch;
  }
  throw std::logic_error("fast-forward: the route from endpoint " + std::to_string(src) + " to " + std::to_string(dst) +
                         " loops");
}

void SkippedPackets::carry(std::size_t link, int sw, int port, const Frames& frames, std::vector<Carried>& out) const {
  if (link >= links_.size()) throw std::logic_error("fast-forward: a route leaves on a port without a link");
  const tlm_fabric::Link& l = *links_[link];
  auto busy = frames.full * l.frame_of(frames.payload).busy.value();
  if (frames.tail_frames) busy += frames.tail_frames * l.frame_of(frames.tail).busy.value();
  out.push_back({link, sw, port, frames.full + frames.tail_frames,
                 frames.full * frames.payload + frames.tail_frames * frames.tail, tlm_fabric::from_ticks(busy)});
}

void SkippedPackets::count(const Carried& c) {
  links_[c.link]->count_skipped(c.packets, c.bytes, c.busy);
  if (c.sw >= 0) fabric_.switches()[static_cast<std::size_t>(c.sw)]->count_skipped(c.port, c.packets, c.bytes);
}

void SkippedPackets::merge() {
  for (Lane& lane : lanes_) {
    for (const Carried& c : lane.window) count(c);
    lane.window.clear();
  }
}

}  // namespace fabricsim::sim
