// Switch: parameters, construction, ingress admission and buffer release.
// Allocation and transmission are in switch_egress.cpp.
#include "tlm/switch.h"

#include <algorithm>
#include <stdexcept>

#include "tlm/sim_time.h"
#include "tlm/switch_params.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

void SwitchParams::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  const hw::ParamBlock& spec = switch_params("switch");
  spec["ports"].check(ports);
  if (core_clock.in_hertz() <= 0) fail("core_clock must be positive");
  const hw::ParamBlock& stages = switch_params("switch.pipeline");
  for (const auto& [key, c] : {std::pair{"parse", pipeline.parse}, {"route_lookup", pipeline.route_lookup},
                               {"vl_mapping", pipeline.vl_mapping}, {"buffer_admission", pipeline.buffer_admission},
                               {"switch_allocation", pipeline.switch_allocation}, {"crossbar", pipeline.crossbar},
                               {"egress_scheduling", pipeline.egress_scheduling}})
    stages[key].check(c);
  if (credit_block_bytes == 0) fail("credit_block_bytes must be positive");
  if (cell_bytes == 0) fail("cell_bytes must be positive");
  if (alpha <= 0) fail("alpha must be positive");
  if (speedup < 1 || speedup > ports) fail("speedup must be in 1..ports");
  spec["vls"].check(vls);
  for (int v : sl_to_vl)
    if (v < 0 || v >= vls) fail("sl_to_vl entries must be in 0..vls-1");
  if (sl_to_vl.size() > 16) fail("sl_to_vl has at most 16 entries (SL 0..15)");
  if (credit_return_latency.in_seconds() < 0) fail("credit_return_latency must not be negative");
  spec["allocator_iterations"].check(allocator_iterations);
  hw::make_allocator(allocator, {ports, ports, allocator_iterations, seed});  // throws listing the names
  pfc.validate();
  ecn.curve.validate();
  wred.curve.validate();
}

int SwitchParams::vl_of(int sl) const {
  if (sl >= 0 && sl < static_cast<int>(sl_to_vl.size())) return sl_to_vl[sl];
  return sl % vls;
}

std::string_view to_string(ForwardingMode m) {
  switch (m) {
    case ForwardingMode::cut_through: return "cut_through";
    case ForwardingMode::store_and_forward: return "store_and_forward";
    case ForwardingMode::adaptive: return "adaptive";
  }
  return "?";
}

std::string_view to_string(BufferOrganisation b) {
  switch (b) {
    case BufferOrganisation::input_fifo: return "input_fifo";
    case BufferOrganisation::voq: return "voq";
    case BufferOrganisation::output_queued: return "output_queued";
    case BufferOrganisation::shared_memory: return "shared_memory";
  }
  return "?";
}

namespace {

// An output's egress scheduler, or none with one VL: every scheduler serves the one VL
// whenever it has a head, whatever its tables and history (tests/test_egress_scheduler.cpp,
// OneClassIsServedWheneverReady), so the output sends it without asking. The tables are
// checked either way.
std::unique_ptr<hw::EgressScheduler> make_scheduler(const SwitchParams& p) {
  if (p.egress_scheduler == EgressSchedulerKind::ib_vl_arb) {
    hw::IbVlArbParams a = p.vl_arb;
    a.vls = p.vls;
    if (a.high.empty() && a.low.empty())
      for (int v = 0; v < p.vls; ++v) a.low.push_back({v, 1});
    a.validate();
    return p.vls == 1 ? nullptr : hw::make_ib_vl_arbiter(a);
  }
  hw::TcSchedulerParams t = p.tc;
  t.classes = p.vls;
  t.strict.resize(p.vls, false);
  t.weights.resize(p.vls, 1);
  t.validate();
  return p.vls == 1 ? nullptr : hw::make_tc_scheduler(t);
}

}  // namespace

Switch::Switch(sc_core::sc_module_name name, const SwitchParams& params, PacketPool& pool, stats::Registry& stats)
    : sc_module(name),
      in("in", params.ports),
      out("out", params.ports),
      params_(params),
      pool_(pool),
      clock_(params.core_clock),
      route_policy_(params.routing, params.seed),
      rng_(params.seed),
      wake_([this] { on_edge(); }, false, this) {
  params_.validate();
  stats.attach(std::string(this->name()) + ".forwarded_packets", "packets granted to an egress port", "packets",
               forwarded_);
  const int n = params_.ports, v = params_.vls;
  to_allocator_ = clock_.cycles(static_cast<std::uint64_t>(params_.pipeline.to_allocator()));
  grant_to_wire_ = clock_.cycles(static_cast<std::uint64_t>(params_.pipeline.grant_to_wire()));
  plan_.ahead = grant_to_wire_ + clock_.period();
  credit_return_latency_ = to_sc(params_.credit_return_latency);
  if (every_edge_for_test_) plan_.mode = sw::WakePlanner::Mode::every_edge;
  input_queued_ = params_.buffer == BufferOrganisation::input_fifo || params_.buffer == BufferOrganisation::voq;
  plan_.fold_admission = !plan_.every_edge() && to_allocator_ > sc_core::SC_ZERO_TIME;
  inputs_.resize(n);
  outputs_.resize(n);
  plan_.out_due.assign(n, end_of_time_);  // no heads
  egress_queued_.assign(n, 0);
  const std::size_t queues = params_.buffer == BufferOrganisation::voq ? static_cast<std::size_t>(n) * n * v
                                                                        : static_cast<std::size_t>(n) * v;
  queues_.resize(queues);
  out_queues_.assign(n, {});
  read_free_.assign(n, sc_core::SC_ZERO_TIME);
  heads_.assign(n, std::vector<std::uint32_t>(v, 0));
  has_head_.assign(n, 0);
  blocked_.assign(static_cast<std::size_t>(n) * v, 0);
  any_blocked_.assign(n, 0);
  for (PortSet* set : {&out_heads_, &arriving_, &stalling_, &tx_changing_, &pausing_, &crossing_}) set->resize(n);
  requests_per_output_.assign(n, 0);
  allocator_ = make_switch_allocator({this->name(), params_.allocator, {n, n, params_.allocator_iterations, params_.seed},
                                      params_.allocator_impl, params_.rtl_variant, params_.core_clock,
                                      params_.rtl_trace_dir});
  if (params_.buffer == BufferOrganisation::shared_memory)
    shared_ = std::make_unique<hw::SharedBuffer>(params_.shared_buffer.in_bytes());
  const std::string base = this->name();
  for (int p = 0; p < n; ++p) {
    in[p].register_fw(this, &Switch::ingress, p);
    out[p].register_bw(this, &Switch::egress_bw, p);
    auto& ip = inputs_[p];
    ip.pfc.assign(v, hw::PfcIngress(params_.pfc));
    ip.credits_held = hw::CreditLedger(v);
    ip.pause_sent_at.assign(v, sc_core::SC_ZERO_TIME);
    auto& o = outputs_[p];
    o.scheduler = make_scheduler(params_);
    o.stall_since.assign(v, sc_core::SC_ZERO_TIME);
    o.stall_s.assign(v, 0.0);
    const std::string port = base + ".port" + std::to_string(p);
    PortStats s;
    stats.attach(port + ".egress_packets", "packets sent on the egress link", "packets", o.egress_packets);
    stats.attach(port + ".egress_payload_bytes", "payload bytes sent on the egress link", "B", o.egress_bytes);
    s.conflicts = &stats.counter(port + ".arbitration_conflicts", "requests for this output that lost allocation", "requests");
    s.high_water = &stats.counter(port + ".ingress_high_water", "largest bytes accounted to this input", "B");
    s.crc_drops = &stats.counter(port + ".crc_drops", "packets dropped at ingress after a link bit error", "packets");
    for (int vl = 0; vl < v; ++vl) {
      const std::string pv = port + ".vl" + std::to_string(vl);
      s.drops.push_back(&stats.counter(pv + ".drops", "packets dropped at ingress admission", "packets"));
      s.pause_sent.push_back(&stats.counter(pv + ".pause_sent", "PFC PAUSE frames sent upstream (incl. resume)", "frames"));
      s.pause_received.push_back(&stats.counter(pv + ".pause_received", "PFC PAUSE frames received from downstream", "frames"));
      s.marks.push_back(&stats.counter(pv + ".ecn_marks", "packets marked CE (RoCE) or FECN (IB)", "packets"));
    }
    stats_.push_back(s);
  }
}

void Switch::set_routes(int dst, std::vector<int> ports) {
  for (int port : ports)
    if (port < 0 || port >= params_.ports)
      throw std::invalid_argument(std::string(name()) + ": route to port " + std::to_string(port) + " outside 0.." +
                                  std::to_string(params_.ports - 1));
  if (dst >= static_cast<int>(route_entry_.size())) route_entry_.resize(dst + 1, kNoRoute);
  if (ports.size() <= 1) {
    route_entry_[dst] = ports.empty() ? kNoRoute : ports[0];
    return;
  }
  const auto [it, added] = route_group_index_.try_emplace(ports, static_cast<std::int32_t>(route_groups_.size()));
  if (added) route_groups_.push_back(std::move(ports));
  route_entry_[dst] = -2 - it->second;
}

void Switch::attach_egress(int port, const Link* link, std::uint64_t downstream_buffer_per_vl) {
  outputs_.at(port).tx.attach(&out[port], link, params_.vls, params_.credit_block_bytes, downstream_buffer_per_vl);
}

void Switch::attach_ingress(int port, const Link* link) {
  InputPort& ip = inputs_.at(port);
  ip.link = link;
  ip.fc = link->params().flow_control;
  ip.pause_refresh = sc_time(params_.pause_quanta * 256.0 / link->timing().data_rate().bps(), sc_core::SC_SEC);
  plan_folding(ip);
}

void Switch::end_of_elaboration() {
  plan_folding_for_output_buffer();
  for (auto& o : outputs_) o.tx.resolve_receiver();
  // Credits and PAUSE frames go upstream without reading the socket each time.
  for (int p = 0; p < params_.ports; ++p)
    if (inputs_[p].link) inputs_[p].upstream = FabricCall::to_other_end(in[p].operator->());
}

std::uint64_t Switch::packets_buffered() const { return in_switch_; }
void Switch::occupancy(std::vector<std::uint64_t>& ingress, std::vector<std::uint64_t>& egress) const {
  const sc_time now = sim_now();
  ingress.resize(inputs_.size());
  egress.resize(outputs_.size());
  for (std::size_t p = 0; p < inputs_.size(); ++p) ingress[p] = inputs_[p].bytes;
  for (std::size_t p = 0; p < outputs_.size(); ++p) egress[p] = outputs_[p].bytes;
  // Buffer releases due by now that no wake has applied yet (a release wakes the
  // switch only where it can change a decision) have left the buffer all the same.
  for (const Release& r : releases_)
    if (r.at <= now) ingress[r.in] -= r.charged;
}

double Switch::egress_paused_seconds(int port, int vl) const {
  const auto& tx = outputs_.at(port).tx;
  return tx.attached() ? tx.paused_seconds(vl, sim_now()) : 0.0;
}

double Switch::credit_stall_seconds(int port, int vl) const {
  const auto& o = outputs_.at(port);
  double s = o.stall_s.at(vl);
  if (o.open_stalls & (1u << vl)) s += (sim_now() - o.stall_since[vl]).to_seconds();
  return s;
}

int Switch::queue_index(int in_port, int out_port, int vl) const {
  const int n = params_.ports, v = params_.vls;
  switch (params_.buffer) {
    case BufferOrganisation::input_fifo: return in_port * v + vl;
    case BufferOrganisation::voq: return (in_port * n + out_port) * v + vl;
    default: return out_port * v + vl;
  }
}

tlm::tlm_sync_enum Switch::ingress(int port, Packet& p, tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != END_TAIL) return tlm::TLM_ACCEPTED;
  if (!has_route(p.dst)) throw std::runtime_error(std::string(name()) + ": no route to endpoint " + std::to_string(p.dst));
  auto& ip = inputs_[port];
  Entry e;
  e.packet = &p;
  e.header_at = p.header_at;
  e.tail_at = p.tail_at;
  e.ready = p.header_at;
  e.header_edge = clock_.edge_at_or_after(p.header_at);
  e.frame_bytes = p.frame_bytes;
  e.charged = (e.frame_bytes + params_.cell_bytes - 1) / params_.cell_bytes * params_.cell_bytes;
  e.in = static_cast<std::int16_t>(port);
  e.out = -1;
  e.vl = p.vl;
  e.corrupted = p.corrupted;
  if (ip.fc == FlowControl::credit)
    ip.credits_held.hold(p.vl, (e.frame_bytes + params_.credit_block_bytes - 1) / params_.credit_block_bytes);
  if (plan_.fold_admission) e.ready = pipeline_ready(e);  // it does not depend on when admission runs
  ip.arrivals.push_back(entries_, entries_.add(e));
  if (ip.arrivals.size() == 1) ip.first_header = e.header_at;
  arriving_.insert(port);
  ++in_switch_;
  ++received_;
  wake_for_arrival(port, e.header_edge);
  (void)delay;
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum Switch::egress_bw(int port, Packet& p, tlm::tlm_phase& phase, sc_time& delay) {
  const sc_time at = sim_now() + delay;
  auto& o = outputs_[port];
  tx_changing_.insert(port);
  if (phase == CREDIT_RETURN) {
    o.tx.credit_returned(at, p.vl, p.credit_blocks);
    // A credit nothing waits for takes effect at the next wake (TxPort::update), not its own.
    if (!plan_.edge_decides) return tlm::TLM_ACCEPTED;
  } else if (phase == PFC_PAUSE) {
    o.tx.pause_received(at, p.vl, p.pause_quanta);
    plan_.pause_received = true;
    stats_[port].pause_received[p.vl]->add();
  }
  wake_at(clock_.edge_at_or_after(at));
  return tlm::TLM_ACCEPTED;
}

void Switch::on_edge() {
  ++activations_;
  const sc_time now = sim_now();
  const sc_time next_edge = clock_.edge_after(now);
  process_releases(now);
  admit_arrivals(now, next_edge);  // header edge at or before now (a wake is on an edge)
  if (!crossing_.empty()) cross_to_output_queues(now);
  tx_changing_.for_each([&](int op) {
    TxPort& tx = outputs_[op].tx;
    tx.update(now);
    if (tx.settled()) tx_changing_.erase(op);
  });
  schedule_egress(now);
  schedule_next(now, next_edge);
}

void Switch::process_releases(const sc_time& now) {
  while (!releases_.empty() && releases_.front().at <= now) {
    const Release r = releases_.front();
    releases_.pop_front();
    auto& ip = inputs_[r.in];
    if (ip.folded_on_count) ip.stale();  // only such a folded wake can move (fold_admission_wake)
    ip.bytes -= r.charged;
    if (shared_) shared_->free(r.charged);
    if (ip.fc != FlowControl::pfc) continue;
    if (ip.pfc[r.vl].release(r.charged) == hw::PfcAction::send_resume) send_pause(r.in, r.vl, 0, now);
    note_pausing(r.in);
  }
  // PFC refresh: a PAUSE still needed is re-sent before its quanta run out.
  pausing_.for_each([&](int p) {
    auto& ip = inputs_[p];
    for (int vl = 0; vl < params_.vls; ++vl)
      if (ip.pfc[vl].pausing() && now >= ip.pause_sent_at[vl] + ip.pause_refresh) send_pause(p, vl, params_.pause_quanta, now);
  });
}

void Switch::note_pausing(int in_port) {
  const auto& pfc = inputs_[in_port].pfc;
  if (std::any_of(pfc.begin(), pfc.end(), [](const hw::PfcIngress& c) { return c.pausing(); })) pausing_.insert(in_port);
  else pausing_.erase(in_port);
}

void Switch::admit_arrivals(const sc_time& now, const sc_time& limit) {
  // Every arrival whose header edge is before `limit`, in the order edge-by-edge admission
  // takes them: by header edge, then input, then arrival (folded admissions can span
  // several edges).
  due_.clear();
  arriving_.for_each([&](int port) {
    const InputPort& ip = inputs_[port];
    if (ip.first_header >= limit) return;  // its header edge is not before it either
    ip.arrivals.walk(entries_, [&](const Entry& e) {
      if (e.header_edge >= limit) return false;
      due_.push_back({e.header_edge, port});
      return true;
    });
  });
  // Filled by input, then arrival: a stable insertion sort (a few per wake; std::stable_sort
  // would allocate its buffer on every wake).
  for (std::size_t i = 1; plan_.fold_admission && i < due_.size(); ++i)
    for (std::size_t j = i; j > 0 && due_[j] < due_[j - 1]; --j) std::swap(due_[j], due_[j - 1]);
  for (const DueArrival& d : due_) {
    auto& ip = inputs_[d.in];
    const std::uint32_t i = ip.arrivals.pop_front(entries_);
    ip.stale();  // and admit() below changes the buffer
    if (ip.arrivals.empty()) {
      ip.first_header = end_of_time_;
      arriving_.erase(d.in);
    } else {
      ip.first_header = entries_[ip.arrivals.front()].header_at;
    }
    const bool admitted = admit(entries_[i], plan_.fold_admission ? d.edge : now);
    if (ip.fc == FlowControl::pfc) note_pausing(d.in);  // PFC may have paused (or undone) on it
    if (admitted) {
      enqueue(i);
    } else {
      entries_.remove(i);
      --in_switch_;
      ++dropped_;
    }
  }
}

sc_time Switch::pipeline_ready(const Entry& e) const {
  // Ingress pipeline: from the first edge after the header (CT) or tail (SAF).
  const bool saf = params_.forwarding == ForwardingMode::store_and_forward;
  return (saf ? clock_.edge_at_or_after(e.tail_at) : e.header_edge) + to_allocator_;
}

bool Switch::admit(Entry& e, const sc_time& now) {
  Packet& p = *e.packet;
  auto& ip = inputs_[e.in];
  if (e.corrupted) {
    // CRC check failed: drop, and give the buffer space back once the tail is in.
    stats_[e.in].crc_drops->add();
    ++drops_.crc;
    return_credit(e.in, p.vl, e.frame_bytes, e.tail_at > now ? e.tail_at - now : sc_core::SC_ZERO_TIME);
    pool_.release(&p);
    return false;
  }
  // Route lookup: one of the equal-cost ports, chosen when the header is in.
  if (e.out < 0) e.out = static_cast<std::int16_t>(route(p, now));
  auto& o = outputs_[e.out];
  const int in_vl = p.vl;
  e.vl = static_cast<std::uint8_t>(params_.vl_of(p.sl));
  const FlowControl fc = ip.fc;
  // Bytes queued for the packet's output and VL: only shared-memory thresholds, WRED and
  // ECN read it (a cache line less per packet without them).
  auto queued = [&] { return o.vl_bytes[e.vl]; };
  // Physical space where this organisation keeps the packet.
  bool fits = true;
  switch (params_.buffer) {
    case BufferOrganisation::input_fifo:
    case BufferOrganisation::voq: fits = ip.bytes + e.charged <= params_.input_buffer.in_bytes(); break;
    case BufferOrganisation::output_queued: fits = o.bytes + e.charged <= params_.output_buffer.in_bytes(); break;
    case BufferOrganisation::shared_memory:
      // Dynamic thresholds bound each queue in lossy mode (Choudhury-Hahne).
      fits = fc != FlowControl::none || shared_->admit(queued(), e.charged, params_.alpha);
      break;
  }
  if (fault_ == AccountingFault::overfill_buffer) fits = true;
  bool headroom_exceeded = false;
  if (fc == FlowControl::credit) {
    // Credits are the admission: the sender held space for the whole frame.
    fits = true;
  } else if (fc == FlowControl::pfc) {
    hw::PfcAction action = hw::PfcAction::none;
    // A packet the physical buffer cannot take still counts as a headroom drop when
    // PFC would have refused it too; otherwise the lossless class lost it.
    const auto& t = ip.pfc[in_vl].thresholds();
    if (fits) headroom_exceeded = !ip.pfc[in_vl].admit(e.charged, action);
    else headroom_exceeded = ip.pfc[in_vl].occupancy() + e.charged > t.xoff_bytes + t.headroom_bytes;
    fits = fits && !headroom_exceeded;
    if (action == hw::PfcAction::send_pause) send_pause(e.in, in_vl, params_.pause_quanta, now);
    if (fits && fault_ == AccountingFault::drop_lossless) {
      ip.pfc[in_vl].release(e.charged);
      fits = false;
    }
  } else {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    if (fits && params_.wred.enabled && params_.wred.curve.decide(queued(), u(rng_))) fits = false;
  }
  if (fits && shared_ && shared_->free_bytes() < e.charged) {
    if (fc == FlowControl::credit)
      throw std::logic_error(std::string(name()) + ": shared buffer exhausted under credit flow control; "
                             "shared_buffer must cover ports x input_buffer");
    // A PFC class that passed its own accounting still loses the packet: undo it.
    if (fc == FlowControl::pfc) ip.pfc[in_vl].release(e.charged);
    fits = false;
  }
  if (!fits) {
    count_drop(fc, headroom_exceeded);
    stats_[e.in].drops[in_vl]->add();
    pool_.release(&p);
    return false;
  }
  if (shared_) shared_->allocate(e.charged);
  ip.bytes += e.charged;
  if (ip.bytes > ip.high_water) {
    stats_[e.in].high_water->add(ip.bytes - ip.high_water);
    ip.high_water = ip.bytes;
  }
  // RED marking on the egress queue depth the packet joins (DCQCN, IB CC).
  if (params_.ecn.enabled) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const bool ib = ip.link->timing().params().framing == hw::Framing::infiniband;
    if ((ib || p.ecn != Ecn::not_ect) && params_.ecn.curve.decide(queued(), u(rng_))) {
      if (ib) p.fecn = true; else p.ecn = Ecn::ce;
      stats_[e.in].marks[in_vl]->add();
    }
  }
  e.ready = pipeline_ready(e);
  e.packet->vl = static_cast<std::uint8_t>(in_vl);
  return true;
}

void Switch::enqueue(std::uint32_t i) {
  const Entry& e = entries_[i];
  auto& o = outputs_[e.out];
  o.vl_bytes[e.vl] += e.charged;
  o.bytes += e.charged;
  o.high_water = std::max(o.high_water, o.bytes);
  egress_queued_[e.out] = o.bytes;
  if (params_.buffer != BufferOrganisation::output_queued) {
    link(i);
    return;
  }
  // Charged to its output queue now; it crosses into it in cross_to_output_queues.
  InputPort& ip = inputs_[e.in];
  ip.crossing.push_back(entries_, i);
  crossing_.insert(e.in);
}

void Switch::link(std::uint32_t i) {
  const Entry& e = entries_[i];
  const int q = queue_index(e.in, e.out, e.vl);
  auto& queue = queues_[q];
  const std::uint32_t prev_head = queue.front();
  const int prev_out = prev_head != kNoNode ? entries_[prev_head].out : -1;
  // Output-side queues take packets from many inputs: keep them in ready order.
  queue.insert_sorted(entries_, i, [](const Entry& x) -> const sc_time& { return x.ready; });
  if (queue.front() != prev_head) head_changed(q, prev_out);
}

// Output queueing behind a crossbar with speedup S < N is combined input-output
// queueing: at most S packets per output (and per input) per cell time (Oie, Murata,
// Kubota, Miyahara, IEEE Trans. Commun. 1992; Chuang, Goel, McKeown, Prabhakar, IEEE JSAC
// 1999). A packet crosses through its output's write port at S x the ingress rate as soon
// as it is ready, its input has sent the one before and the port is free; until then it
// waits at its input, and the packets behind it with it. A port is granted on the first
// edge a request is in and it frees by (a cycle ahead, as the egress decides), round
// robin among the inputs asking by then, so it never idles for a later request.
void Switch::cross_to_output_queues(const sc_time& now) {
  const sc_time horizon = now + to_allocator_;
  // The first edge a port busy until `t` can be granted on, a cycle ahead.
  auto ahead = [&](const sc_time& t) { return clock_.edge_at_or_after(t > clock_.period() ? t - clock_.period() : t); };
  auto head = [&](int p) -> Entry& { return entries_[inputs_[p].crossing.front()]; };
  // The first edge input p's next packet can cross on: it is ready and its input free.
  auto asks = [&](int p) { return std::max(head(p).ready, ahead(read_free_[p])); };
  for (;;) {
    // The next write port to grant: the first edge one of its requests is in by and the
    // port frees by (lower output first).
    int port = -1;
    sc_time edge = end_of_time_;
    crossing_.for_each([&](int p) {
      const int o = head(p).out;
      const sc_time t = std::max(asks(p), ahead(outputs_[o].write_free));
      if (t < edge || (t == edge && o < port)) {
        edge = t;
        port = o;
      }
    });
    next_crossing_ = edge;
    if (port < 0 || edge > horizon) return;
    // Round robin among the inputs asking by then, from the one after the last granted.
    OutputPort& o = outputs_[port];
    int input = -1;
    crossing_.for_each([&](int p) {
      if (head(p).out != port || asks(p) > edge) return;
      if (input < 0 || (input < o.cross_next && p >= o.cross_next)) input = p;
    });
    o.cross_next = (input + 1) % params_.ports;
    InputPort& ip = inputs_[input];
    const std::uint32_t i = ip.crossing.pop_front(entries_);
    if (ip.crossing.empty()) crossing_.erase(input);
    Entry& e = entries_[i];
    const sc_time write = std::max({e.ready, read_free_[input], o.write_free});
    e.ready = edge;
    o.write_free = write + to_sc(ip.link->timing().serialization(e.frame_bytes) / static_cast<double>(params_.speedup));
    read_free_[input] = o.write_free;
    link(i);
  }
}

void Switch::head_changed(int q, int prev_out) {
  const auto& queue = queues_[q];
  auto find = [&](int op) {
    auto& list = out_queues_[op];
    return std::find_if(list.begin(), list.end(), [q](const Head& h) { return h.queue == q; });
  };
  auto remove = [&](int op) {
    auto& list = out_queues_[op];
    list.erase(find(op));
    if (list.empty()) out_heads_.erase(op);
  };
  if (queue.empty()) {
    remove(prev_out);
  } else {
    const Entry& e = entries_[queue.front()];
    const auto blocks = static_cast<std::uint32_t>(outputs_[e.out].tx.credit_blocks(e.packet->payload_bytes));
    const Head head{e.ready, q, e.in, e.vl, blocks, e.frame_bytes};
    if (prev_out < 0) {
      queues_[q].seq = next_seq_++;
      out_queues_[e.out].push_back(head);
    } else if (e.out == prev_out) {
      *find(e.out) = head;
    } else {
      // An input FIFO's next head may leave on another output: it keeps its place in the order.
      remove(prev_out);
      auto& list = out_queues_[e.out];
      list.insert(std::upper_bound(list.begin(), list.end(), queues_[q].seq,
                                   [&](std::uint64_t seq, const Head& other) { return seq < queues_[other.queue].seq; }),
                  head);
    }
    out_heads_.insert(e.out);
    // The output it joined takes it in; the one it left (or was replaced on) recounts.
    if (e.out != prev_out) {
      outputs_[e.out].heads_ready = std::min(outputs_[e.out].heads_ready, e.ready);
      refresh_due(e.out);
    }
  }
  if (prev_out >= 0) refresh_heads_ready(prev_out);
}

void Switch::refresh_heads_ready(int op) {
  sc_time ready = end_of_time_;
  for (const Head& h : out_queues_[op]) ready = std::min(ready, h.ready);
  outputs_[op].heads_ready = ready;
  refresh_due(op);
}

void Switch::return_credit(int in_port, int vl, std::uint32_t frame_bytes, const sc_time& delay) {
  auto& ip = inputs_[in_port];
  if (ip.fc != FlowControl::credit) return;
  Packet credit;
  credit.kind = PacketKind::credit_update;
  credit.vl = static_cast<std::uint8_t>(vl);
  credit.credit_blocks = (frame_bytes + params_.credit_block_bytes - 1) / params_.credit_block_bytes;
  ip.credits_held.give_back(vl, credit.credit_blocks);
  if (fault_ == AccountingFault::credit_return_short && credit.credit_blocks > 0) --credit.credit_blocks;
  tlm::tlm_phase phase = CREDIT_RETURN;
  sc_time d = delay + credit_return_latency_;
  inputs_[in_port].upstream(credit, phase, d);
}

void Switch::count_drop(FlowControl fc, bool headroom_exceeded) {
  // Lossless classes lose a packet only when PFC headroom overflowed.
  if (fc == FlowControl::none) ++drops_.lossy;
  else if (headroom_exceeded) ++drops_.headroom;
  else ++drops_.lossless;
}

std::vector<BufferBound> Switch::buffer_bounds() const {
  std::vector<BufferBound> b;
  const auto buffer = [](int p, const char* what) { return "port" + std::to_string(p) + " " + what; };
  for (int p = 0; p < params_.ports; ++p) {
    const auto& ip = inputs_[p];
    const bool credit = ip.link && ip.fc == FlowControl::credit;
    // On credit links the bound is the credit allotment (credit conservation checks
    // it); PFC and lossy admission bound the buffer the organisation writes to.
    if (credit || !ip.link) continue;
    if (input_queued()) b.push_back({buffer(p, "input buffer"), ip.high_water, params_.input_buffer.in_bytes()});
    if (params_.buffer == BufferOrganisation::output_queued)
      b.push_back({buffer(p, "output queue"), outputs_[p].high_water, params_.output_buffer.in_bytes()});
  }
  return b;
}

void Switch::send_pause(int in_port, int vl, std::uint16_t quanta, const sc_time& now) {
  Packet frame;
  frame.kind = PacketKind::pfc_pause;
  frame.vl = static_cast<std::uint8_t>(vl);
  frame.pause_quanta = quanta;
  tlm::tlm_phase phase = PFC_PAUSE;
  sc_time delay = sc_core::SC_ZERO_TIME;
  inputs_[in_port].pause_sent_at[vl] = now;
  stats_[in_port].pause_sent[vl]->add();
  inputs_[in_port].upstream(frame, phase, delay);
}

}  // namespace fabricsim::tlm_fabric
