#include "tlm/switch.h"

#include <algorithm>
#include <stdexcept>

#include "tlm/link.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

void SwitchParams::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (ports < 2 || ports > 256) fail("ports must be in 2..256");
  if (core_clock.in_hertz() <= 0) fail("core_clock must be positive");
  if (pipeline_cycles < 0 || pipeline_cycles > 100000) fail("pipeline_cycles must be in 0..100000");
  if (credit_block_bytes == 0) fail("credit_block_bytes must be positive");
  if (input_buffer.in_bytes() < credit_block_bytes) fail("input_buffer must hold at least one credit block");
  if (credit_return_latency.in_seconds() < 0) fail("credit_return_latency must not be negative");
  hw::make_arbiter(arbiter, ports);  // throws listing the valid names
}

std::string_view to_string(ForwardingMode m) {
  return m == ForwardingMode::cut_through ? "cut_through" : "store_and_forward";
}

Switch::Switch(sc_core::sc_module_name name, const SwitchParams& params, stats::Registry& stats)
    : sc_module(name),
      in("in", params.ports),
      out("out", params.ports),
      params_(params),
      clock_(params.core_clock),
      activations_(stats.counter(std::string(this->name()) + ".activations",
                                 "times the switch woke on a clock edge", "events")),
      forwarded_(stats.counter(std::string(this->name()) + ".forwarded_packets",
                               "packets granted to an egress port", "packets")) {
  params_.validate();
  pipeline_ = clock_.cycles(static_cast<std::uint64_t>(params_.pipeline_cycles));
  inputs_.resize(params_.ports);
  outputs_.resize(params_.ports);
  const std::string base = this->name();
  for (int p = 0; p < params_.ports; ++p) {
    in[p].register_fw(this, &Switch::ingress, p);
    out[p].register_bw(this, &Switch::egress_bw, p);
    const std::string port = base + ".port" + std::to_string(p);
    inputs_[p].max_occupancy = &stats.counter(port + ".input_buffer_high_water",
                                              "largest input buffer occupancy seen", "B");
    auto& o = outputs_[p];
    o.arbiter = hw::make_arbiter(params_.arbiter, params_.ports);
    o.packets = &stats.counter(port + ".egress_packets", "packets sent on the egress link", "packets");
    o.bytes = &stats.counter(port + ".egress_payload_bytes", "payload bytes sent on the egress link", "B");
    o.conflicts = &stats.counter(port + ".arbitration_conflicts",
                                 "requests that lost output arbitration", "requests");
  }
  SC_METHOD(on_edge);
  sensitive << wake_;
  dont_initialize();
}

void Switch::set_route(int dst, int port) {
  if (port < 0 || port >= params_.ports)
    throw std::invalid_argument(std::string(name()) + ": route to port " + std::to_string(port) +
                                " outside 0.." + std::to_string(params_.ports - 1));
  if (dst >= static_cast<int>(routes_.size())) routes_.resize(dst + 1, -1);
  routes_[dst] = port;
}

void Switch::attach_egress(int port, const hw::PhyTiming* link, std::uint64_t downstream_buffer_bytes) {
  outputs_.at(port).tx.attach(&out[port], link, params_.credit_block_bytes, downstream_buffer_bytes);
}

void Switch::attach_ingress(int port, const hw::PhyTiming* link) { inputs_.at(port).link = link; }

std::uint64_t Switch::packets_buffered() const {
  std::uint64_t n = 0;
  for (const auto& i : inputs_) n += i.queue.size();
  return n;
}

std::uint64_t Switch::packets_forwarded() const { return forwarded_.value(); }

tlm::tlm_sync_enum Switch::ingress(int port, Packet& p, tlm::tlm_phase& phase, sc_time& delay) {
  auto& ip = inputs_[port];
  const sc_time now = sc_core::sc_time_stamp();
  if (phase == BEGIN_HEADER) {
    const int dst_port = p.dst < static_cast<int>(routes_.size()) ? routes_[p.dst] : -1;
    if (dst_port < 0)
      throw std::runtime_error(std::string(name()) + ": no route to endpoint " + std::to_string(p.dst));
    ip.queue.push_back({&p, now + delay, now + delay, now + delay, dst_port});
    return tlm::TLM_ACCEPTED;
  }
  if (phase != END_TAIL) return tlm::TLM_ACCEPTED;
  Entry& e = ip.queue.back();
  e.tail_at = now + delay;
  const sc_time& arrival = params_.forwarding == ForwardingMode::cut_through ? e.header_at : e.tail_at;
  // The header enters the pipeline on the first edge after it is usable.
  e.ready = clock_.edge_at_or_after(arrival) + pipeline_;
  // Credit flow control guarantees space; an overflow is a model bug, never silent.
  ip.buffered_bytes += ip.link->frame_bytes(p.payload_bytes);
  if (ip.buffered_bytes > params_.input_buffer.in_bytes())
    throw std::logic_error(std::string(name()) + ".port" + std::to_string(port) +
                           ": input buffer overflow despite credit flow control");
  if (ip.buffered_bytes > ip.high_water) {
    ip.max_occupancy->add(ip.buffered_bytes - ip.high_water);
    ip.high_water = ip.buffered_bytes;
  }
  if (ip.queue.size() == 1) wake_at(e.ready);
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum Switch::egress_bw(int port, Packet& p, tlm::tlm_phase& phase, sc_time& delay) {
  if (phase == CREDIT_RETURN) {
    const sc_time at = sc_core::sc_time_stamp() + delay;
    outputs_[port].tx.credit_returned(at, p.credit_blocks);
    wake_at(clock_.edge_at_or_after(at));
  }
  return tlm::TLM_ACCEPTED;
}

void Switch::wake_at(const sc_time& t) {
  const sc_time now = sc_core::sc_time_stamp();
  wake_.notify(t > now ? t - now : sc_core::SC_ZERO_TIME);
}

void Switch::on_edge() {
  activations_.add();
  const sc_time now = sc_core::sc_time_stamp();
  const sc_time lookahead = now + clock_.period();
  for (auto& o : outputs_) o.tx.apply_credits(now);

  for (int op = 0; op < params_.ports; ++op) {
    auto& o = outputs_[op];
    // The egress scheduler decides one cycle ahead so back-to-back packets
    // leave at line rate without an idle gap per packet.
    if (!o.tx.attached() || o.tx.busy_until() > lookahead) continue;
    o.arbiter->clear();
    for (int ipn = 0; ipn < params_.ports; ++ipn) {
      const auto& ip = inputs_[ipn];
      if (ip.queue.empty() || ip.busy_until > lookahead) continue;
      const Entry& e = ip.queue.front();
      if (e.out_port != op || e.ready > now) continue;
      if (!o.tx.has_credits(e.packet->payload_bytes)) continue;
      o.arbiter->add_request({ipn, e.packet->id, e.packet->sl});
    }
    const int winner = o.arbiter->arbitrate();
    if (winner == hw::kNoGrant) continue;
    o.conflicts->add(static_cast<std::uint64_t>(o.arbiter->request_count() - 1));
    o.arbiter->update_state(winner);
    grant(winner, op, now);
  }
  schedule_next(now);
}

void Switch::grant(int in_port, int out_port, const sc_time& now) {
  auto& ip = inputs_[in_port];
  auto& o = outputs_[out_port];
  Entry e = ip.queue.front();
  ip.queue.pop_front();
  Packet& p = *e.packet;

  const hw::PhyTiming& egress = o.tx.link();
  const auto& fr = hw::framing_overhead(egress.params().framing);
  const sc_time out_tail_offset = to_sc(egress.serialization(fr.preamble_bytes + egress.frame_bytes(p.payload_bytes)));
  // Never let the egress tail overtake the ingress tail (speed mismatch).
  sc_time start = std::max({now, o.tx.busy_until(), ip.busy_until});
  if (e.tail_at > start + out_tail_offset) start = e.tail_at - out_tail_offset;

  ++p.hops;
  o.tx.send(p, start - now);
  o.packets->add();
  o.bytes->add(p.payload_bytes);
  forwarded_.add();

  // The input buffer slot is free once the tail has been read out.
  ip.busy_until = start + out_tail_offset;
  const std::uint64_t frame = ip.link->frame_bytes(p.payload_bytes);
  ip.buffered_bytes -= frame;
  Packet credit;
  credit.kind = PacketKind::credit_update;
  credit.vl = p.vl;
  credit.credit_blocks = (frame + params_.credit_block_bytes - 1) / params_.credit_block_bytes;
  tlm::tlm_phase phase = CREDIT_RETURN;
  sc_time delay = ip.busy_until - now + to_sc(params_.credit_return_latency);
  in[in_port]->nb_transport_bw(credit, phase, delay);
}

void Switch::schedule_next(const sc_time& now) {
  bool have = false;
  sc_time next;
  auto consider = [&](const sc_time& t) {
    if (t <= now) return;
    if (!have || t < next) next = t;
    have = true;
  };
  // A resource busy until t may be granted on the edge one period earlier.
  const sc_time period = clock_.period();
  auto consider_free = [&](const sc_time& busy_until) {
    if (busy_until > now + period) consider(busy_until - period);
  };
  for (const auto& ip : inputs_) {
    if (ip.queue.empty()) continue;
    const Entry& e = ip.queue.front();
    consider(e.ready);
    consider_free(ip.busy_until);
    consider_free(outputs_[e.out_port].tx.busy_until());
  }
  for (const auto& o : outputs_) {
    sc_time at;
    if (o.tx.next_credit(at)) consider(at);
  }
  if (have) wake_at(clock_.edge_at_or_after(next));
}

}  // namespace fabricsim::tlm_fabric
