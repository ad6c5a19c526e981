// packets.csv rows, kept per lane and written in a fixed order (packet_log.h).
#include "tlm/packet_log.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>

#include "tlm/csv_row.h"
#include "tlm/distributed.h"
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
  // A lane's rows are numbered in 32 bits: gathered over processes, a lane keeps the whole run's.
  const std::string_view line = row.line();
  if (lane.text.size() + line.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::runtime_error("packets.csv: more than 4 GiB of rows held in one lane (a run over several processes "
                             "keeps them to its end); shorten simulation.duration or leave out --packet-csv");
  const auto begin = static_cast<std::uint32_t>(lane.text.size());
  lane.text.append(line);
  lane.rows.push_back({now, p.dst, begin, static_cast<std::uint32_t>(lane.text.size())});
  // In step with the kernel every lane has run every pass before now.
  if (lane.rows.size() >= kKeep && !WakeQueue::instance().in_window()) write_before(now);
}

void PacketLog::finish() {
  if (gathered_) gather_rows();
  if (!gathered_ || distributed::rank() == 0) write_before(sc_core::sc_max_time());
  out_.flush();
}

void PacketLog::gather_rows() {
  // Per lane: its rows (time, destination, length) and their text.
  std::vector<unsigned char> mine;
  auto put = [&mine](const auto& v) {
    const auto* b = reinterpret_cast<const unsigned char*>(&v);
    mine.insert(mine.end(), b, b + sizeof v);
  };
  for (const auto& lane : lanes_) {
    if (lane->rows.empty()) continue;
    put(std::uint64_t{lane->rows.size()});
    for (const Row& r : lane->rows) {
      put(std::uint64_t{r.at.value()});
      put(std::int64_t{r.dst});
      put(std::uint64_t{r.end - r.begin});
    }
    mine.insert(mine.end(), lane->text.begin(), lane->text.end());
  }
  const auto all = distributed::gather(mine, 0);
  if (distributed::rank() != 0) return;
  for (std::size_t from = 1; from < all.size(); ++from) {
    const unsigned char* in = all[from].data();
    const unsigned char* const end = in + all[from].size();
    auto get = [&in](auto& v) {
      std::memcpy(&v, in, sizeof v);
      in += sizeof v;
    };
    while (in < end) {
      auto lane = std::make_unique<Lane>();
      std::uint64_t rows = 0;
      get(rows);
      for (std::uint64_t k = 0; k < rows; ++k) {
        std::uint64_t at = 0, length = 0;
        std::int64_t dst = 0;
        get(at);
        get(dst);
        get(length);
        const auto begin = lane->rows.empty() ? 0u : lane->rows.back().end;
        lane->rows.push_back({from_ticks(at), static_cast<int>(dst), begin, static_cast<std::uint32_t>(begin + length)});
      }
      lane->text.assign(reinterpret_cast<const char*>(in), lane->rows.empty() ? 0 : lane->rows.back().end);
      in += lane->text.size();
      lanes_.push_back(std::move(lane));
    }
  }
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
