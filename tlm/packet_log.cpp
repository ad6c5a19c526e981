// packets.csv rows, kept per lane and written in a fixed order (packet_log.h).
#include "tlm/packet_log.h"

#include <algorithm>

#include "tlm/csv_row.h"
#include "tlm/sim_time.h"
#include "tlm/wake_queue.h"

namespace fabricsim::tlm_fabric {

PacketLog::PacketLog(std::ostream& out, int lanes, bool breakdown) : out_(out), breakdown_(breakdown) {
  for (int k = 0; k < std::max(lanes, 1); ++k) lanes_.push_back(std::make_unique<Lane>());
  out_ << header(breakdown);
}

std::string PacketLog::header(bool breakdown) {
  std::string h = "packet,src,dst,op,qp,flow,message,psn,payload_bytes,hops,created_ns,injected_ns,delivered_ns,network_latency_ns,sl,vl";
  if (breakdown)
    for (const char* part : kLatencyPartNames) h.append(",").append(part).append("_ps");
  return h + "\n";
}

void PacketLog::add(const Packet& p, const sc_core::sc_time& now) {
  static constexpr const char* kOps[] = {"raw", "write", "send", "read_request", "read_response", "ack", "nak", "cnp"};
  static_assert(static_cast<int>(RdmaOp::cnp) == 7, "kOps follows RdmaOp");
  Lane& lane = *lanes_[static_cast<std::size_t>(detail::lane)];
  // Times in ns to 12 significant digits (a picosecond up to a second; %g's six would
  // round a time past 1 ms to 10 ns or more).
  CsvRow row;
  row.add(p.id).add(p.src).add(p.dst).add(kOps[static_cast<int>(p.op)]).add(p.qp).add(p.flow).add(p.message);
  row.add(p.psn).add(p.payload_bytes).add(static_cast<unsigned>(p.hops));
  row.add(p.created.to_seconds() * 1e9, 12).add(p.injected.to_seconds() * 1e9, 12).add(now.to_seconds() * 1e9, 12);
  row.add((now - p.injected).to_seconds() * 1e9, 12).add(static_cast<int>(p.sl)).add(static_cast<int>(p.vl));
  if (breakdown_) {
    // Whole kernel ticks, picoseconds at the kernel's default resolution: the parts add
    // up to the latency exactly.
    static const auto fs_per_tick = static_cast<std::int64_t>(detail::resolution_fs());
    for (const std::int64_t t : breakdown_of(p).ticks) row.add(t * fs_per_tick / 1000);
  }
  const auto begin = static_cast<std::uint32_t>(lane.text.size());
  lane.text.append(row.line());
  lane.rows.push_back({now, p.dst, begin, static_cast<std::uint32_t>(lane.text.size())});
  // In step with the kernel every lane has run every pass before now.
  if (lane.rows.size() >= kKeep && !WakeQueue::instance().in_window()) write_before(now);
}

void PacketLog::finish() {
  write_before(sc_core::sc_max_time());
  out_.flush();
}

void PacketLog::write_before(const sc_core::sc_time& t) {
  order_.clear();
  std::vector<std::size_t> taken(lanes_.size(), 0);
  for (std::size_t k = 0; k < lanes_.size(); ++k) {
    const auto& rows = lanes_[k]->rows;
    // A lane's rows are in time order: those before t come first.
    while (taken[k] < rows.size() && rows[taken[k]].at < t) {
      const Row& r = rows[taken[k]];
      order_.push_back({r.at, r.dst, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(taken[k])});
      ++taken[k];
    }
  }
  // One destination's rows come from one lane, in its order of delivery.
  std::sort(order_.begin(), order_.end(), [](const Ref& a, const Ref& b) {
    if (a.at != b.at) return a.at < b.at;
    return a.dst != b.dst ? a.dst < b.dst : a.row < b.row;
  });
  for (const Ref& r : order_) {
    const Lane& lane = *lanes_[r.lane];
    const Row& row = lane.rows[r.row];
    out_.write(lane.text.data() + row.begin, static_cast<std::streamsize>(row.end - row.begin));
  }
  for (std::size_t k = 0; k < lanes_.size(); ++k) {
    Lane& lane = *lanes_[k];
    if (taken[k] == lane.rows.size()) {
      lane.rows.clear();
      lane.text.clear();
      continue;
    }
    // The rows left (delivered now) move to the front.
    const std::uint32_t shift = lane.rows[taken[k]].begin;
    lane.rows.erase(lane.rows.begin(), lane.rows.begin() + static_cast<std::ptrdiff_t>(taken[k]));
    lane.text.erase(0, shift);
    for (Row& r : lane.rows) {
      r.begin -= shift;
      r.end -= shift;
    }
  }
}

}  // namespace fabricsim::tlm_fabric
