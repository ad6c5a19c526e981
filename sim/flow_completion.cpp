#include "sim/flow_completion.h"

#include <algorithm>
#include <array>
#include <string>
#include <tuple>

#include "tlm/sim_time.h"

namespace fabricsim::sim {

IdealFct::IdealFct(const TopologyGraph& graph, std::vector<hw::PhyTiming> host_links, const hw::PhyTiming& fabric_link,
                   std::vector<tlm_fabric::SwitchParams> by_level, std::uint64_t mtu)
    : graph_(graph),
      host_links_(std::move(host_links)),
      fabric_link_(fabric_link),
      by_level_(std::move(by_level)),
      mtu_(mtu),
      distances_(graph.switches.size()),
      endpoints_(host_links_.size() * host_links_.size() <= kMemoSlots ? host_links_.size() : 0) {}

int IdealFct::switch_hops(int src, int dst) const {
  if (graph_.switches.empty()) return 0;  // back to back
  const int from = graph_.host_switch[src], to = graph_.host_switch[dst];
  std::vector<int>& d = distances_[static_cast<std::size_t>(from)];
  if (d.empty()) d = switch_distances(graph_, from);
  return d[static_cast<std::size_t>(to)] + 1;
}

double IdealFct::seconds(int src, int dst, std::uint64_t bytes) const {
  std::size_t slot = static_cast<std::size_t>(src) * endpoints_ + static_cast<std::size_t>(dst);
  if (endpoints_ == 0) {
    const std::uint64_t key = (static_cast<std::uint64_t>(src) * 0x9E3779B97F4A7C15ull) ^
                              (static_cast<std::uint64_t>(dst) * 0xC2B2AE3D27D4EB4Full) ^ (bytes * 0x165667B19E3779F9ull);
    slot = (key >> 32) & (kMemoSlots - 1);
  }
  Memo& m = memo_[slot];
  if (m.src != src || m.dst != dst || m.bytes != bytes) m = {src, dst, bytes, compute_seconds(src, dst, bytes)};
  return m.seconds;
}

double IdealFct::compute_seconds(int src, int dst, std::uint64_t bytes) const {
  const int hops = switch_hops(src, dst);
  // Links in path order: the source's cable, hops - 1 switch-switch cables, the destination's
  // cable (none back to back). Asked once per (src, dst, size) the memo misses: no allocation.
  const int links = hops > 0 ? hops + 1 : 1;
  auto link = [&](int i) -> const hw::PhyTiming& {
    if (i == 0) return host_links_[src];
    return i == hops ? host_links_[dst] : fabric_link_;
  };
  const std::uint64_t segments = std::max<std::uint64_t>(1, (bytes + mtu_ - 1) / mtu_);
  const std::uint64_t last = bytes - (segments - 1) * mtu_;
  const hw::PhyTiming* slowest = &link(0);  // the first of the slowest
  for (int i = 1; i < links; ++i)
    if (link(i).data_rate().bps() < slowest->data_rate().bps()) slowest = &link(i);
  double t = static_cast<double>(segments - 1) * slowest->occupancy(mtu_).in_seconds();
  for (int i = 0; i + 1 < links; ++i) {
    const auto level = static_cast<std::size_t>(std::min(i, hops - 1 - i));
    const tlm_fabric::SwitchParams& sw = by_level_[std::min(level, by_level_.size() - 1)];
    const double pipeline = (sw.pipeline.to_allocator() + sw.pipeline.grant_to_wire()) / sw.core_clock.in_hertz();
    // Cut-through needs the egress no faster than the ingress; otherwise the tail is waited for.
    const bool cut_through = sw.forwarding != tlm_fabric::ForwardingMode::store_and_forward &&
                             link(i + 1).data_rate().bps() <= link(i).data_rate().bps();
    t += (cut_through ? link(i).header_delay(last) : link(i).tail_delay(last)).in_seconds() + pipeline;
  }
  return t + link(links - 1).tail_delay(last).in_seconds();
}

namespace {

// Size buckets of the per-size breakdown: one MTU-class message, medium, large, very large.
struct Bucket {
  const char* name;
  std::uint64_t max_bytes;  // inclusive
};
constexpr std::array<Bucket, 4> kBuckets{{{"<=4KiB", 4096},
                                          {"4KiB-64KiB", 64 * 1024},
                                          {"64KiB-1MiB", 1024 * 1024},
                                          {">1MiB", UINT64_MAX}}};

}  // namespace

void FlowStats::add(const tlm_fabric::FlowRecord& f) {
  if (!instant_.empty() && instant_.front().end != f.end) add_instant();
  instant_.push_back(f);
}

void FlowStats::add_instant() const {
  std::sort(instant_.begin(), instant_.end(), [](const tlm_fabric::FlowRecord& a, const tlm_fabric::FlowRecord& b) {
    return std::tie(a.src, a.dst, a.flow, a.start, a.bytes) < std::tie(b.src, b.dst, b.flow, b.start, b.bytes);
  });
  for (const tlm_fabric::FlowRecord& f : instant_) {
    const double t = tlm_fabric::seconds(f.end - f.start);
    const double s = t / ideal_.seconds(f.src, f.dst, f.bytes);
    fct_us_.add(t * 1e6);
    slowdown_.add(s);
    std::size_t b = 0;
    while (f.bytes > kBuckets[b].max_bytes) ++b;
    bucket_fct_us_[b].add(t * 1e6);
    bucket_slowdown_[b].add(s);
  }
  instant_.clear();
}

nlohmann::json FlowStats::to_json() const {
  static_assert(kBuckets.size() == kSizeBuckets);
  add_instant();
  nlohmann::json by_size = nlohmann::json::array();
  for (std::size_t b = 0; b < kBuckets.size(); ++b)
    if (bucket_fct_us_[b].count() > 0)
      by_size.push_back({{"bucket", kBuckets[b].name},
                         {"max_bytes", kBuckets[b].max_bytes},
                         {"fct_us", bucket_fct_us_[b].summary()},
                         {"slowdown", bucket_slowdown_[b].summary()}});
  return {{"count", fct_us_.count()}, {"fct_us", fct_us_.summary()}, {"slowdown", slowdown_.summary()}, {"by_size", by_size}};
}

}  // namespace fabricsim::sim
