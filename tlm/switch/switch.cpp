// Switch: parameters, construction, the forwarding table, what is read from outside,
// and the edge handler that runs the units in pipeline order.
#include "tlm/switch.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

#include "tlm/rtl_arbiter.h"
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
  for (const auto& [key, member] : PipelineStages::kStages) stages[key].check(pipeline.*member);
  if (credit_block_bytes == 0) fail("credit_block_bytes must be positive");
  if (cell_bytes == 0) fail("cell_bytes must be positive");
  if (alpha <= 0) fail("alpha must be positive");
  if (speedup < 1 || speedup > ports) fail("speedup must be in 1..ports");
  for (const auto& [port, mode] : port_forwarding)
    if (port < 0 || port >= ports)
      fail("port_forwarding names port " + std::to_string(port) + "; the switch has ports 0.." + std::to_string(ports - 1));
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

ForwardingMode SwitchParams::forwarding_of(int port) const {
  const auto it = port_forwarding.find(port);
  return it != port_forwarding.end() ? it->second : forwarding;
}

std::string_view to_string(ForwardingMode m) { return hw::name_of(forwarding_mode_names(), m); }
std::string_view to_string(BufferOrganisation b) { return hw::name_of(buffer_organisation_names(), b); }

namespace {

// Slots of a switch's statistics table: forwarded_packets, then per port its output's
// egress counts and its port_counters_.
constexpr std::uint32_t kEgressCounters = 2;

// The names of a switch's statistics after its own, the same for every switch with
// `ports` ports and `vls` VLs: built once for all of them.
std::shared_ptr<const stats::CounterLayout> counter_layout(int ports, int vls) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, std::shared_ptr<const stats::CounterLayout>> layouts;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& layout = layouts[{ports, vls}];
  if (layout) return layout;
  auto names = std::make_shared<stats::CounterLayout>();
  std::uint32_t slot = 0;
  auto add = [&](std::string name, const char* description, const char* unit) {
    names->push_back({std::move(name), {description, unit}, slot++});
  };
  add("forwarded_packets", "packets granted to an egress port", "packets");
  // Per port in slot order: the egress counts, then Switch::PortCounter, then
  // Switch::VlCounter per VL.
  for (int p = 0; p < ports; ++p) {
    const std::string port = "port" + std::to_string(p) + ".";
    add(port + "egress_packets", "packets sent on the egress link", "packets");
    add(port + "egress_payload_bytes", "payload bytes sent on the egress link", "B");
    add(port + "arbitration_conflicts", "requests for this output that lost allocation", "requests");
    add(port + "ingress_high_water", "largest bytes accounted to this input", "B");                  
    add(port + "crc_drops", "packets dropped at ingress after a link bit error", "packets");          
    add(port + "egress_high_water", "largest bytes queued for this output", "B");
    for (int vl = 0; vl < vls; ++vl) {
      const std::string pv = port + "vl" + std::to_string(vl) + ".";
      add(pv + "drops", "packets dropped at ingress admission", "packets");
      add(pv + "pause_sent", "PFC PAUSE frames sent upstream (incl. resume)", "frames");
      add(pv + "pause_received", "PFC PAUSE frames received from downstream", "frames");
      add(pv + "ecn_marks", "packets marked CE (RoCE) or FECN (IB)", "packets");
    }
  }
  std::sort(names->begin(), names->end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  layout = std::move(names);
  return layout;
}

}  // namespace

const stats::Counter& Switch::counter_in_slot(std::uint32_t slot) const {
  if (slot == 0) return forwarded_;
  const auto per_port = kEgressCounters + static_cast<std::uint32_t>(counters_per_port_);
  const std::uint32_t port = (slot - 1) / per_port, k = (slot - 1) % per_port;
  if (k < kEgressCounters) return k == 0 ? outputs_[port].egress_packets : outputs_[port].egress_bytes;
  return port_counters_[port * static_cast<std::uint32_t>(counters_per_port_) + k - kEgressCounters];
}

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
  if (params_.buffer != BufferOrganisation::voq) queues_.resize(static_cast<std::size_t>(n) * v);
  out_queues_.assign(n, {});
  read_free_.assign(n, sc_core::SC_ZERO_TIME);
  heads_.assign(n, std::vector<std::uint32_t>(v, 0));
  has_head_.assign(n, 0);
  blocked_.assign(static_cast<std::size_t>(n) * v, 0);
  any_blocked_.assign(n, 0);
  for (PortSet* set :
       {&out_heads_, &arriving_, &stalling_, &tx_changing_, &pausing_, &crossing_})
    set->resize(n);
  requests_per_output_.assign(n, 0);
  allocator_ = make_switch_allocator({this->name(), params_.allocator, {n, n, params_.allocator_iterations, params_.seed},
                                      params_.allocator_impl, params_.rtl_variant, params_.core_clock,
                                      params_.waveform, true, std::string(this->name()) + ".allocator"});
  if (params_.buffer == BufferOrganisation::input_fifo) make_input_fifos();
  if (params_.buffer == BufferOrganisation::shared_memory)
    shared_ = std::make_unique<hw::SharedBuffer>(params_.shared_buffer.in_bytes());
  counters_per_port_ = kPortCounters + kVlCounters * v;
  port_counters_.resize(static_cast<std::size_t>(n * counters_per_port_));
  stats.attach_table(std::string(this->name()) + ".", counter_layout(n, v),
                     [this](std::uint32_t slot) -> const stats::Counter& { return counter_in_slot(slot); });
  for (int p = 0; p < n; ++p) {
    in[p].register_fw(this, &Switch::ingress, p);
    out[p].register_bw(this, &Switch::egress_bw, p);
    auto& ip = inputs_[p];
    ip.forwarding = params_.forwarding_of(p);
    ip.pfc.assign(v, hw::PfcIngress(params_.pfc));
    ip.credits_held = hw::CreditLedger(v);
    ip.pause_sent_at.assign(v, sc_core::SC_ZERO_TIME);
    auto& o = outputs_[p];
    o.scheduler = make_egress_scheduler(params_, std::string(this->name()) + ".port" + std::to_string(p) + ".vl_arbiter");
    // The crossbar's round-robin arbiters: each write port's among the inputs, and with
    // VOQs each input's among the write ports that grant it (iSLIP's accept).
    auto crossbar_arbiter = [&](const char* what) {
      return make_arbiter_block({std::string(this->name()) + ".port" + std::to_string(p) + "." + what, "round_robin", n,
                                 params_.write_arbiter_impl, params_.write_arbiter_rtl_variant,
                                 "switch.write_arbiter_impl", params_.core_clock, params_.waveform});
    };
    if (params_.crosses_to_output_queues()) o.write_arbiter = crossbar_arbiter("write_arbiter");
    if (params_.buffer == BufferOrganisation::cioq) ip.accept_arbiter = crossbar_arbiter("accept_arbiter");
    o.stall_since.assign(v, sc_core::SC_ZERO_TIME);
    o.stall_s.assign(v, 0.0);
  }
}

void Switch::set_endpoint_homes(std::shared_ptr<const EndpointHomes> homes, int own_group) {
  homes_ = std::move(homes);
  route_entry_.assign(static_cast<std::size_t>(homes_->groups), kNoRoute);
  if (own_group >= 0) route_entry_.at(static_cast<std::size_t>(own_group)) = kHostPort;
}

void Switch::set_routes(int group, const std::vector<int>& ports) {
  for (int port : ports)
    if (port < 0 || port >= params_.ports)
      throw std::invalid_argument(std::string(name()) + ": route to port " + std::to_string(port) + " outside 0.." +
                                  std::to_string(params_.ports - 1));
  std::int32_t& entry = route_entry_.at(static_cast<std::size_t>(group));
  if (ports.size() <= 1) {
    entry = ports.empty() ? kNoRoute : ports[0];
    return;
  }
  // Most remote groups share one list (the up ports in a tree): the last one is tried first.
  if (last_route_group_ < 0 || route_groups_[last_route_group_] != ports) {
    const auto [it, added] = route_group_index_.try_emplace(ports, static_cast<std::int32_t>(route_groups_.size()));
    if (added) route_groups_.push_back(ports);
    last_route_group_ = it->second;
  }
  entry = -2 - last_route_group_;
}

Switch::SteadyRoute Switch::steady_route(int src, int dst, std::uint32_t flow) const {
  SteadyRoute r;
  if (!has_route(dst)) return r;
  const std::int32_t entry = route_entry_[homes_->group[dst]];
  if (entry >= 0 || entry == kHostPort) {  // one port, as route() reads it
    r.port = entry >= 0 ? entry : homes_->port[dst];
    return r;
  }
  const std::vector<int>& group = route_groups_[-2 - entry];
  r.first = route_policy_.steady_index({src, dst, flow}, group.size());
  if (route_policy_.single_path()) r.port = group[r.first];
  else r.spread = &group;
  return r;
}

void Switch::count_skipped(int port, std::uint64_t packets, std::uint64_t bytes) {
  received_ += packets;
  forwarded_.add(packets);
  OutputPort& o = outputs_.at(static_cast<std::size_t>(port));
  o.egress_packets.add(packets);
  o.egress_bytes.add(bytes);
}

void Switch::attach_egress(int port, const Link* link, std::uint64_t downstream_buffer_per_vl) {
  outputs_.at(port).tx.attach(&out[port], link, params_.vls, params_.credit_block_bytes, downstream_buffer_per_vl,
                              std::string(name()) + ".port" + std::to_string(port));
}

void Switch::attach_ingress(int port, const Link* link) {
  InputPort& ip = inputs_.at(port);
  ip.link = link;
  ip.fc = link->params().flow_control;
  if (!input_fifos_.empty() && ip.fc == FlowControl::credit) size_input_fifos_for_credits(port);
  ip.pause_refresh = sc_time(params_.pause_quanta * 256.0 / link->timing().data_rate().bps(), sc_core::SC_SEC);
  plan_folding(ip);
}

void Switch::end_of_elaboration() {
  plan_folding_for_output_buffer();
  make_input_fifo_blocks();
  for (auto& o : outputs_) o.tx.resolve_receiver();
  // Credits and PAUSE frames go upstream without reading the socket each time.
  for (int p = 0; p < params_.ports; ++p)
    if (inputs_[p].link) inputs_[p].upstream = FabricCall::to_other_end(in[p].operator->());
}

void Switch::set_trace(FabricTrace* trace) {
  const std::string device = name();
  bool any = false;
  for (int p = 0; p < params_.ports; ++p) {
    const int track = trace->add_port(device, device + ".port" + std::to_string(p), params_.vls);
    if (p == 0) trace_track_ = track;
    any = any || trace->on(track);
  }
  if (!any) return;  // out of scope: the switch records nothing
  trace_ = trace;
  for (int p = 0; p < params_.ports; ++p)
    if (outputs_[p].tx.attached() && trace->on(trace_track_ + p)) outputs_[p].tx.set_trace(trace, trace_track_ + p);
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

void Switch::on_edge() {
  ++activations_;
  const sc_time now = sim_now();
  const sc_time next_edge = clock_.edge_after(now);
  // Ingress unit: buffer releases due, then every arrival whose header edge has come.
  process_releases(now);
  admit_arrivals(now, next_edge);
  // Crossbar write ports (output_queued): admitted packets into their output queues.
  if (!crossing_.empty()) cross_to_output_queues(now);
  // Egress unit: credits and PAUSEs from downstream, then a VL per free output.
  update_transmitters(now);
  choose_vls(now);
  // Switch allocation (input queues; no request when no output chose a VL) or direct
  // service (output queues), each grant transmitted.
  if (!input_queued()) serve_output_queues(now);
  else if (!chosen_.empty()) allocate_input_queues(now);
  // Wake planner: the next edge with work.
  schedule_next(now, next_edge);
}

}  // namespace fabricsim::tlm_fabric
