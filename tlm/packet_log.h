// packets.csv: one row per packet a NIC delivers, in the order of delivery time, then
// destination endpoint, then the destination's own order of delivery, the same bit for
// bit with any number of lanes. Each lane keeps its NICs' rows; those before a time every
// lane has passed go out sorted (docs/robustness.md, "Determinism").
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <systemc>

#include "tlm/fabric_protocol.h"
#include "tlm/latency_breakdown.h"

namespace fabricsim::tlm_fabric {

class PacketLog {
 public:
  /// Writes the header line to `out`; `lanes`: the wake queue's lanes (NICs log from their lane's thread);
  /// `breakdown`: each row ends with the packet's latency parts (the pool keeps breakdowns).
  explicit PacketLog(std::ostream& out, int lanes = 1, bool breakdown = false);
  /// The CSV header (with its newline).
  static std::string header(bool breakdown = false);
  /// The row of packet `p`, delivered at `now`, on this thread's lane.
  void add(const Packet& p, const sc_core::sc_time& now);
  /// Between windows: writes every row kept (all of them are of packets delivered before the window's end).
  void window_ended() {
    if (!gathered_) write_before(sc_core::sc_max_time());
  }
  /// A run over several processes (tlm/distributed.h): every process keeps its rows to
  /// the end, and process 0 writes them all, in the same order (finish).
  void gather_at_finish() { gathered_ = true; }
  /// Writes every row left (the end of the run) and flushes the stream.
  void finish();

 private:
  struct Row {
    sc_core::sc_time at;
    int dst;
    std::uint32_t begin, end;  // in the lane's text
  };
  struct alignas(64) Lane {
    std::string text;         // the rows' text, one after another
    std::vector<Row> rows;    // in delivery order
  };
  // In step with the kernel: rows kept before the ones before now are written.
  static constexpr std::size_t kKeep = 4096;
  /// Writes the rows of packets delivered before `t`, in (time, destination, delivery) order.
  void write_before(const sc_core::sc_time& t);
  std::ostream& out_;
  bool breakdown_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  struct Ref {  // a row to write: which lane, which row
    sc_core::sc_time at;
    int dst;
    std::uint32_t lane, row;
  };
  std::vector<Ref> order_;  // scratch of write_before
  bool gathered_ = false;   // gather_at_finish
  /// gather_at_finish: the other processes' rows into process 0's lanes (theirs after its own).
  void gather_rows();
};

}  // namespace fabricsim::tlm_fabric
