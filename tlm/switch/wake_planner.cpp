// Switch: the wake planner. Which core edge the switch wakes on next, which admissions
// fold into a later wake, and what settles them for a reader from outside. The rules
// and why they reproduce an edge-by-edge switch are in docs/switch.md ("Timing").
#include <algorithm>
#include <array>

#include "tlm/sim_time.h"
#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

void Switch::wake_at(const sc_time& t) { wake_.notify_at(t); }

void Switch::plan_folding(const InputPort& ip) {
  // A lossy admission into a shared buffer reads the pool's free bytes, which releases a
  // later wake applies first would raise: the drop could come out differently.
  plan_.fold_admission = plan_.fold_admission && (ip.fc != FlowControl::none || !shared_);
}

void Switch::plan_folding_for_output_buffer() {
  // PFC admission into an output-side buffer folds only where that buffer holds the most
  // the lossless inputs can have in it at once, so it never refuses what PFC accepts.
  if (!plan_.fold_admission || input_queued()) return;
  const std::uint64_t cell_factor =
      std::max<std::uint64_t>(1, (params_.cell_bytes + params_.credit_block_bytes - 1) / params_.credit_block_bytes);
  const auto& t = params_.pfc;
  std::uint64_t most = 0;
  bool pfc = false;
  for (const InputPort& ip : inputs_) {
    if (!ip.link) continue;
    pfc = pfc || ip.fc == FlowControl::pfc;
    most += ip.fc == FlowControl::credit ? params_.input_buffer.in_bytes() * cell_factor
                                         : static_cast<std::uint64_t>(params_.vls) * (t.xoff_bytes + t.headroom_bytes);
  }
  const hw::Size& buffer = shared_ ? params_.shared_buffer : params_.output_buffer;
  plan_.fold_admission = !pfc || most <= buffer.in_bytes();  // credits alone never overfill it
}

void Switch::wake_for_arrival(int port, const sc_time& header_edge) {
  InputPort& ip = inputs_[port];
  // An arrival behind the folded wake leaves it where it is (with no arrivals before it,
  // the wake is stale already: the last admission made it so).
  if (header_edge < ip.folded_wake) ip.stale();
  // A wake due already is an earlier arrival's, not run yet: asking again would run the
  // switch twice on one edge, a second allocation round the hardware does not have.
  const sc_time& wake = admission_wake(port);
  if (wake > sim_now()) wake_at(wake);
}

void Switch::wake_for_downstream(const tlm::tlm_phase& phase, const sc_time& at) {
  // A credit nothing waits for takes effect at the next wake (TxPort::update), not its own.
  if (phase == CREDIT_RETURN && !plan_.edge_decides) return;
  if (phase == PFC_PAUSE) plan_.pause_received = true;
  wake_at(clock_.edge_at_or_after(at));
}

void Switch::fold_admission_wake(InputPort& ip) const {
  const sc_time ready = entries_[ip.arrivals.front()].ready;
  ip.folded_wake = ready;
  ip.folded_on_count = false;
  std::uint64_t bytes = ip.bytes;
  // PFC: each VL's count with the arrivals ahead admitted, as PfcIngress keeps it.
  const bool pfc = ip.fc == FlowControl::pfc;
  std::array<std::uint64_t, hw::kMaxDataVls> pfc_bytes;
  for (int vl = 0; pfc && vl < params_.vls; ++vl) pfc_bytes[vl] = ip.pfc[vl].occupancy();
  // Until admission, an entry's VL is the one it arrived on (PFC's priority).
  auto pfc_shows = [&](const Entry& e) {
    const hw::PfcIngress& count = ip.pfc[e.vl];
    pfc_bytes[e.vl] += e.charged;
    return count.pausing() || pfc_bytes[e.vl] >= count.thresholds().xoff_bytes;
  };
  ip.arrivals.walk(entries_, [&](const Entry& e) {
    if (e.header_edge >= ready) return false;
    bytes += e.charged;  // the input's buffer with every arrival up to this one admitted
    if (e.corrupted || bytes > ip.high_water || (pfc && pfc_shows(e))) {
      ip.folded_wake = e.header_edge;
      ip.folded_on_count = !e.corrupted;
      return false;
    }
    return true;
  });
  ip.folded_wake_valid = true;
}

void Switch::settle_admissions(const sc_time& at, bool inclusive) {
  if (plan_.fold_admission) admit_arrivals(at, inclusive ? clock_.edge_after(at) : at);
}

bool Switch::can_leave(const Head& h, const sc_time& now, const sc_time& horizon) const {
  // Ready, and (input-side queues) its input's read port frees before the next edge.
  return h.ready <= now && (!input_queued() || read_free_[h.in] <= horizon);
}

sw::EdgeOutlook Switch::edge_decides(const sc_time& now, const sc_time& next) const {
  const sc_time horizon = now + plan_.ahead, next_horizon = next + plan_.ahead;
  bool ready_with_wire = false, next_edge = false;
  sc_time leave = end_of_time_;
  (out_heads_ | stalling_).for_each([&](int op) {
    // Not due before `leave` nor (while it is asked) by the next edge, and no stall to
    // compare: the walk below would stop at once (out_due is its two tests' time).
    const sc_time& due = plan_.out_due[op];
    if (due >= leave && (next_edge || due > next) && !stalling_.contains(op)) return;
    const OutputPort& o = outputs_[op];
    const sc_time& busy = o.tx.busy_until();
    const sc_time wire = plan_.free_edge(busy);
    // No head leaves before its output's first head is ready (nor its wire frees: due).
    bool find_leave = due < leave;
    const bool decide = !next_edge;
    bool walk_decide = decide && due <= next;
    std::uint32_t blocked_next = 0;
    for (const Head& h : out_queues_[op]) {
      if (!find_leave && !walk_decide) break;
      if (find_leave) {
        sc_time earliest = std::max(h.ready, wire);
        if (input_queued()) earliest = std::max(earliest, plan_.free_edge(read_free_[h.in]));
        if (earliest > now && earliest < leave) leave = earliest;
        if (earliest == wire && wire > now) find_leave = false;  // no head of this output leaves earlier
      }
      if (!walk_decide || !can_leave(h, next, next_horizon)) continue;
      const bool sendable = o.tx.can_send_blocks(h.vl, h.credit_blocks, now);
      if (busy <= horizon && can_leave(h, now, horizon)) {
        if (sendable) {
          next_edge = true;
          walk_decide = false;
          continue;
        }
        ready_with_wire = true;
      }
      if (!sendable && o.tx.flow_control() == FlowControl::credit) blocked_next |= 1u << h.vl;
    }
    if (decide && !next_edge && blocked_next != o.open_stalls) next_edge = true;
  });
  return {next_edge || ready_with_wire || plan_.every_edge() || !stalling_.empty(), next_edge, leave};
}

void Switch::schedule_next(const sc_time& now, const sc_time& next_edge) {
  bool have = false;
  sc_time next;
  auto consider = [&](const sc_time& t) {
    if (t <= now) return;
    if (!have || t < next) next = t;
    have = true;
  };
  const sw::EdgeOutlook outlook = edge_decides(now, next_edge);
  plan_.edge_decides = outlook.decides;
  if (outlook.leave != end_of_time_) consider(outlook.leave);
  if (outlook.next_edge || (plan_.every_edge() && (in_switch_ > 0 || !releases_.empty()))) consider(next_edge);
  arriving_.for_each([&](int p) { consider(admission_wake(p)); });
  if (!crossing_.empty()) consider(crossing_edge(next_crossing_));
  // PFC: a PAUSE still needed is refreshed on the first edge its half-quanta have run out,
  // and while an input pauses a release can resume it (process_releases) on its own edge.
  pausing_.for_each([&](int p) {
    const auto& ip = inputs_[p];
    for (int vl = 0; vl < params_.vls; ++vl)
      if (ip.pfc[vl].pausing()) consider(ip.pause_sent_at[vl] + ip.pause_refresh);
  });
  // Otherwise a release changes only counts that the next wake's admissions read after
  // applying it (process_releases runs first), as they would on the release's own edge.
  if (!releases_.empty() && (plan_.edge_decides || !pausing_.empty())) consider(releases_.front().at);
  // Without edge_decides only PAUSE changes count (TxPort::next_change).
  if (plan_.edge_decides || plan_.pause_received)
    tx_changing_.for_each([&](int op) {
      sc_time at;
      if (outputs_[op].tx.next_change(now, at, plan_.edge_decides)) consider(at);
    });
  if (have) wake_at(clock_.edge_at_or_after(next));
}

}  // namespace fabricsim::tlm_fabric
