#include "sim/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "hw/allocator.h"
#include "hw/credit.h"
#include "hw/flow_control.h"
#include "hw/seed.h"
#include "sim/config_params.h"
#include "sim/config_reader.h"
#include "sim/huge_pages.h"
#include "sim/training_config.h"
#include "tlm/rtl_arbiter.h"
#include "tlm/rtl_credit_manager.h"
#include "tlm/rtl_packet_fifo.h"
#include "tlm/rtl_vl_arbiter.h"
#include "tlm/switch_params.h"

namespace fabricsim::sim {

namespace {

using hw::Bandwidth;
using hw::Frequency;
using hw::Length;
using hw::Size;
using hw::Time;

nlohmann::json to_json(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (auto it = n.begin(); it != n.end(); ++it) j[it->first.Scalar()] = to_json(it->second);
    return j;
  }
  if (n.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& e : n) j.push_back(to_json(e));
    return j;
  }
  if (n.IsScalar()) return n.Scalar();
  return nullptr;
}

void read_simulation(ConfigMap m, SimulationParams& s) {
  const hw::ParamBlock& spec = simulation_params();
  s.seed = static_cast<std::uint64_t>(m.integer(spec["seed"], static_cast<std::int64_t>(s.seed)));
  s.duration = m.time(spec["duration"], s.duration);
  s.warmup = m.time(spec["warmup"], s.warmup);
  s.watchdog = m.time(spec["watchdog"], s.watchdog);
  s.threads = static_cast<int>(m.integer(spec["threads"], s.threads));
  s.engine = m.choice(spec["engine"], s.engine, tlm_fabric::engine_names());
  if (s.engine == tlm_fabric::Engine::kernel && s.threads > 1)
    m.fail("threads", "the kernel engine (simulation.engine: kernel) runs on one thread; set simulation.threads to 1, got " +
                          std::to_string(s.threads));
  s.max_memory = m.size(spec["max_memory"], Size::bytes(s.max_memory)).in_bytes();
  s.fast_forward.on = m.boolean(spec["fast_forward"], s.fast_forward.on);
  s.fast_forward.window = static_cast<int>(m.integer(spec["fast_forward_window"], s.fast_forward.window));
  s.fast_forward.tolerance = m.number(spec["fast_forward_tolerance"], s.fast_forward.tolerance);
  s.fast_forward_asked = s.fast_forward.on;
  if (!(s.warmup < s.duration)) m.fail("warmup", "must be shorter than simulation.duration (" + hw::to_string(s.duration) + ")");
  m.finish();
}

// PHY keys that may differ per cable (topology.links overrides them).
void read_phy(ConfigMap& m, hw::PhyParams& p) {
  const hw::ParamBlock& spec = hw::phy_params();
  p.lanes = static_cast<int>(m.integer(spec["lanes"], p.lanes));
  p.lane_rate = m.bandwidth(spec["lane_rate"], p.lane_rate);
  p.modulation = m.choice(spec["modulation"], p.modulation, hw::modulation_names());
  p.encoding = m.choice(spec["encoding"], p.encoding, hw::encoding_names());
  p.fec = m.choice(spec["fec"], p.fec, hw::fec_names());
  p.fec_interleave = static_cast<int>(m.integer(spec["fec_interleave"], p.fec_interleave));
  p.fec_decoder_latency = m.time(spec["fec_decoder_latency"], p.fec_decoder_latency);
  p.cable_length = m.length(spec["cable_length"], p.cable_length);
  p.propagation_per_metre = m.time(spec["propagation_per_metre"], p.propagation_per_metre);
}

void read_link(ConfigMap m, tlm_fabric::LinkParams& l, std::uint32_t& credit_block) {
  const hw::ParamBlock& spec = tlm_fabric::link_params();
  l.phy.framing = m.choice(spec["framing"], l.phy.framing, hw::framing_names());
  read_phy(m, l.phy);
  l.flow_control_bytes = static_cast<std::uint32_t>(m.size(spec["flow_control_bytes"], Size::bytes(l.flow_control_bytes)).in_bytes());
  l.flow_control = m.choice(spec["flow_control"], l.flow_control, tlm_fabric::flow_control_names());
  l.pfc_response_delay = m.time(spec["pfc_response_delay"], l.pfc_response_delay);
  l.drop_rate = m.number(spec["drop_rate"], l.drop_rate);
  l.ber = m.number(spec["ber"], l.ber);
  credit_block = static_cast<std::uint32_t>(m.size(spec["credit_block"], Size::bytes(credit_block)).in_bytes());
  l.credit_manager_impl = m.choice(spec["credit_manager_impl"], l.credit_manager_impl, tlm_fabric::allocator_impl_names());
  l.credit_manager_rtl_variant = m.string(spec["credit_manager_rtl_variant"], l.credit_manager_rtl_variant);
  if (l.credit_manager_impl != tlm_fabric::AllocatorImpl::tlm) {
    if (l.flow_control != tlm_fabric::FlowControl::credit)
      m.fail("credit_manager_impl", "the credit manager counts link credits: it needs flow_control credit, got " +
                                        std::string(tlm_fabric::to_string(l.flow_control)));
    // The VL count is the switch's (checked once it is read).
    const auto problem = tlm_fabric::check_rtl_credit_manager(l.credit_manager_rtl_variant, 0, credit_block);
    if (!problem.what.empty()) m.fail(problem.key, problem.what);
  }
  m.finish();
}

void read_pipeline(ConfigMap m, tlm_fabric::PipelineStages& p) {
  const hw::ParamBlock& spec = tlm_fabric::switch_params("switch.pipeline");
  for (const auto& [key, member] : tlm_fabric::PipelineStages::kStages)
    p.*member = static_cast<int>(m.integer(spec[key], p.*member));
  m.finish();
}

// RED curve (ECN marking or WRED dropping) in bytes of egress queue depth.
/// `section`: switch.ecn or switch.wred.
void read_marking(ConfigMap m, const char* section, tlm_fabric::MarkingParams& k) {
  const hw::ParamBlock& spec = tlm_fabric::switch_params(section);
  k.enabled = m.boolean(spec["enabled"], k.enabled);
  k.curve.kmin_bytes = m.size(spec["kmin"], Size::bytes(k.curve.kmin_bytes)).in_bytes();
  k.curve.kmax_bytes = m.size(spec["kmax"], Size::bytes(k.curve.kmax_bytes)).in_bytes();
  k.curve.pmax = m.number(spec["pmax"], k.curve.pmax);
  if (k.curve.kmax_bytes < k.curve.kmin_bytes) m.fail("kmax", "must not be below kmin (" + hw::to_string(Size::bytes(k.curve.kmin_bytes)) + ")");
  // Kmax = 0 would act on every packet that joins a non-empty queue.
  if (k.enabled && k.curve.kmax_bytes == 0) m.fail("kmax", "must be above 0 when enabled");
  m.finish();
}

void read_pfc(ConfigMap m, tlm_fabric::SwitchParams& s) {
  auto& t = s.pfc;
  const hw::ParamBlock& spec = tlm_fabric::switch_params("switch.pfc");
  t.xoff_bytes = m.size(spec["xoff"], Size::bytes(t.xoff_bytes)).in_bytes();
  t.xon_bytes = m.size(spec["xon"], Size::bytes(t.xon_bytes)).in_bytes();
  t.headroom_bytes = m.size(spec["headroom"], Size::bytes(t.headroom_bytes)).in_bytes();
  s.pause_quanta = static_cast<std::uint16_t>(m.integer(spec["pause_quanta"], s.pause_quanta));
  if (t.xon_bytes >= t.xoff_bytes) m.fail("xon", "must be below xoff (" + hw::to_string(Size::bytes(t.xoff_bytes)) + ")");
  m.finish();
}

void read_vl_arbitration(ConfigMap m, hw::IbVlArbParams& a, int vls) {
  const hw::ParamBlock& spec = tlm_fabric::switch_params("switch.vl_arbitration");
  const hw::ParamBlock& entry_spec = tlm_fabric::switch_params("switch.vl_arbitration.high[i]");
  auto table = [&](const char* key, std::vector<hw::VlArbEntry>& entries) {
    for (auto& e : m.list_of_maps(key)) {
      hw::VlArbEntry entry;
      entry.vl = static_cast<int>(e.required_integer(entry_spec["vl"], vls - 1));
      entry.weight = static_cast<int>(e.integer(entry_spec["weight"], 1));
      e.finish();
      entries.push_back(entry);
    }
    if (entries.size() > 64) m.fail(key, "at most 64 entries");
  };
  table("high", a.high);
  table("low", a.low);
  a.high_limit = static_cast<int>(m.integer(spec["high_limit"], a.high_limit));
  m.finish();
}

void read_tc_scheduler(ConfigMap m, hw::TcSchedulerParams& t, int vls) {
  const hw::ParamBlock& spec = tlm_fabric::switch_params("switch.tc_scheduler");
  t.strict = m.boolean_list("strict", t.strict, static_cast<std::size_t>(vls));
  std::vector<std::int64_t> w(t.weights.begin(), t.weights.end());
  w = m.integer_list(spec["weights"], w, static_cast<std::size_t>(vls));
  t.weights.assign(w.begin(), w.end());
  t.quantum_bytes = static_cast<std::uint32_t>(m.size(spec["quantum"], Size::bytes(t.quantum_bytes)).in_bytes());
  m.finish();
}

/// `<block>_impl` / `<block>_rtl_variant` / the size key a check_rtl_arbiter problem blames.
std::string rtl_arbiter_key(const tlm_fabric::RtlArbiterProblem& p, const std::string& block, const char* size_key) {
  using Key = tlm_fabric::RtlArbiterProblem::Key;
  return p.key == Key::size ? size_key : block + (p.key == Key::rtl_variant ? "_rtl_variant" : "_impl");
}

std::uint64_t to_ps(hw::Time t) { return static_cast<std::uint64_t>(std::llround(t.in_ps())); }

/// A key holding one scalar or a list of them (`what` names the scalar in the error).
std::vector<std::string> scalar_list(ConfigMap& m, const char* key, const char* what) {
  std::vector<std::string> out;
  if (!m.present(key)) return out;
  const YAML::Node node = m.node(key);
  auto add = [&](const YAML::Node& n) {
    if (!n.IsScalar() || n.Scalar().empty()) m.fail(key, std::string("expected ") + what + ", or a list of them");
    out.push_back(n.Scalar());
  };
  if (node.IsSequence()) {
    for (const auto& n : node) add(n);
  } else {
    add(node);
  }
  return out;
}

/// `<prefix>from` and `<prefix>to` of `section`: the window of a `what` (waveform, trace) in ps.
void read_window(ConfigMap& m, const hw::ParamBlock& spec, const std::string& section, const std::string& prefix,
                 const char* what, std::uint64_t& from_ps, std::uint64_t& to_ps_out) {
  const hw::Time from = m.time(spec[prefix + "from"], hw::Time::seconds(0));
  from_ps = to_ps(from);
  if (!m.present(prefix + "to")) return;
  const hw::Time to = m.time(spec[prefix + "to"], hw::Time::seconds(0));
  if (to < from)
    m.fail(prefix + "to", std::string("the ") + what + " window ends (" + hw::to_string(to) + ") before it starts (" +
                              section + "." + prefix + "from " + hw::to_string(from) + ")");
  to_ps_out = to_ps(to);
}

/// switch.rtl_trace (the folder, `fabricsim run --trace rtl`: OUT/waveforms) and the keys shaping what it
/// records; those need the folder, and an RTL block to record (checked in build()).
void read_waveform(ConfigMap& m, const hw::ParamBlock& spec, tlm_fabric::SwitchParams& s) {
  using namespace tlm_fabric;
  WaveformOptions& w = s.waveform;
  w.dir = m.string(spec["rtl_trace"], w.dir);
  for (const char* key : {"rtl_trace_format", "rtl_trace_scope", "rtl_trace_from", "rtl_trace_to", "rtl_trace_max_size"}) {
    if (!m.present(key)) continue;
    if (w.dir.empty()) m.fail(key, "needs the waveform folder switch.rtl_trace (fabricsim run --trace rtl)");
    if (rtl_allocator_models().empty()) m.fail(key, "this build has no RTL twins; rebuild with -DFABRICSIM_RTL=ON");
  }
  w.format = m.choice(spec["rtl_trace_format"], w.format, waveform_format_names());
  w.scopes = scalar_list(m, "rtl_trace_scope", "a glob or model name");
  read_window(m, spec, "switch", "rtl_trace_", "waveform", w.from_ps, w.to_ps);
  w.max_bytes = m.size(spec["rtl_trace_max_size"], hw::Size::bytes(w.max_bytes)).in_bytes();
}

/// switch.port_forwarding: {<port>: <mode>}, the ports whose arrivals another mode forwards.
/// The radix of the switches it applies to is checked once the topology is known.
void read_port_forwarding(ConfigMap& m, tlm_fabric::SwitchParams& s) {
  using tlm_fabric::ForwardingMode;
  s.port_forwarding.clear();
  if (!m.present("port_forwarding")) return;
  ConfigMap ports = m.map("port_forwarding");
  const std::vector<std::string> modes = hw::names_of(tlm_fabric::forwarding_mode_names());
  const auto max_ports = static_cast<int>(tlm_fabric::switch_params("switch")["ports"].hi<std::int64_t>());
  for (const auto& kv : m.node("port_forwarding")) {
    const std::string key = kv.first.Scalar();
    int port = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), port);
    if (ec != std::errc() || end != key.data() + key.size() || port < 0 || port >= max_ports)
      ports.fail(key, "unknown port '" + key + "': keys are switch port numbers 0.." + std::to_string(max_ports - 1) +
                          ", e.g. {0: store_and_forward}");
    const std::string mode = ports.choice(key, std::string(tlm_fabric::to_string(s.forwarding)), modes);
    s.port_forwarding[port] = *hw::value_of(tlm_fabric::forwarding_mode_names(), mode);
  }
  ports.finish();
}

void read_switch(ConfigMap m, tlm_fabric::SwitchParams& s, hw::Framing framing, InNetworkReduction& inr) {
  using namespace tlm_fabric;
  const hw::ParamBlock& spec = switch_params("switch");
  s.ports = static_cast<int>(m.integer(spec["ports"], s.ports));
  s.core_clock = m.frequency(spec["core_clock"], s.core_clock);
  read_pipeline(m.map("pipeline"), s.pipeline);
  s.forwarding = m.choice(spec["forwarding"], s.forwarding, forwarding_mode_names());
  read_port_forwarding(m, s);
  s.buffer = m.choice(spec["buffer"], s.buffer, buffer_organisation_names());
  s.input_buffer = m.size(spec["input_buffer"], s.input_buffer);
  s.output_buffer = m.size(spec["output_buffer"], s.output_buffer);
  s.shared_buffer = m.size(spec["shared_buffer"], s.shared_buffer);
  s.alpha = m.number(spec["alpha"], s.alpha);
  s.speedup = static_cast<int>(m.integer(spec["speedup"], s.speedup));  // above the radix acts as the radix
  s.cell_bytes = static_cast<std::uint32_t>(m.size(spec["cell_size"], Size::bytes(s.cell_bytes)).in_bytes());
  s.credit_return_latency = m.time(spec["credit_return_latency"], s.credit_return_latency);
  s.allocator = m.choice(spec["allocator"], s.allocator);
  s.allocator_iterations = static_cast<int>(m.integer(spec["allocator_iterations"], s.allocator_iterations));
  s.allocator_impl = m.choice(spec["allocator_impl"], s.allocator_impl, allocator_impl_names());
  s.rtl_variant = m.string(spec["rtl_variant"], s.rtl_variant);
  s.vl_arbiter_impl = m.choice(spec["vl_arbiter_impl"], s.vl_arbiter_impl, allocator_impl_names());
  s.vl_arbiter_rtl_variant = m.string(spec["vl_arbiter_rtl_variant"], s.vl_arbiter_rtl_variant);
  read_waveform(m, spec, s);
  s.write_arbiter_impl = m.choice(spec["write_arbiter_impl"], s.write_arbiter_impl, allocator_impl_names());
  s.write_arbiter_rtl_variant = m.string(spec["write_arbiter_rtl_variant"], s.write_arbiter_rtl_variant);
  if (s.write_arbiter_impl != AllocatorImpl::tlm) {
    // One requester per switch port: known here only for a single switch (switch.ports).
    const auto problem = check_rtl_arbiter("round_robin", s.write_arbiter_rtl_variant, m.has("ports") ? s.ports : 0);
    if (!problem.what.empty()) m.fail(rtl_arbiter_key(problem, "write_arbiter", "ports"), problem.what);
  }
  s.input_fifo_impl = m.choice(spec["input_fifo_impl"], s.input_fifo_impl, allocator_impl_names());
  s.input_fifo_rtl_variant = m.string(spec["input_fifo_rtl_variant"], s.input_fifo_rtl_variant);
  if (s.input_fifo_impl != AllocatorImpl::tlm) {
    if (s.buffer != BufferOrganisation::input_fifo)
      m.fail("input_fifo_impl", "the RTL packet FIFO is the input FIFO of switch.buffer input_fifo; switch.buffer is " +
                                    std::string(to_string(s.buffer)));
    // The depth depends on the links' flow control: checked once the link is read (build).
    const auto problem = check_rtl_packet_fifo(s.input_fifo_rtl_variant, 0);
    if (!problem.what.empty()) m.fail(problem.key, problem.what);
  }
  if (s.allocator_impl != AllocatorImpl::tlm) {
    // The radix is known here only for a single switch (switch.ports); the Switch checks the rest.
    const auto problem = check_rtl_allocator(s.allocator, s.rtl_variant, m.has("ports") ? s.ports : 0,
                                             s.allocator_iterations);
    if (!problem.what.empty()) m.fail(problem.key, problem.what);
  }
  inr.enabled = m.boolean(spec["in_network_reduction"], inr.enabled);
  if (inr.enabled && framing != hw::Framing::infiniband)
    m.fail("in_network_reduction", "in-network reduction (SHARP) is an InfiniBand switch capability; link.framing is " +
                                       std::string(hw::to_string(framing)) + " (RoCE / Ethernet switches do not reduce)");
  inr.latency = m.time(spec["reduction_latency"], inr.latency);
  inr.bandwidth = m.bandwidth(spec["reduction_bandwidth"], inr.bandwidth);
  s.vls = static_cast<int>(m.integer(spec["vls"], s.vls));
  const auto sl2vl = m.integer_list(spec["sl_to_vl"], {}, 16, s.vls - 1);
  s.sl_to_vl.assign(sl2vl.begin(), sl2vl.end());
  s.egress_scheduler = framing == hw::Framing::infiniband ? tlm_fabric::EgressSchedulerKind::ib_vl_arb
                                                          : tlm_fabric::EgressSchedulerKind::tc_dwrr;
  s.egress_scheduler = m.choice(spec["egress_scheduler"], s.egress_scheduler, egress_scheduler_names());
  read_vl_arbitration(m.map("vl_arbitration"), s.vl_arb, s.vls);
  read_tc_scheduler(m.map("tc_scheduler"), s.tc, s.vls);
  if (s.egress_scheduler == tlm_fabric::EgressSchedulerKind::tc_dwrr && s.vls > 8)
    m.fail("vls", "Ethernet has 8 traffic classes; tc_dwrr takes vls 1..8, got " + std::to_string(s.vls));
  if (s.egress_scheduler == tlm_fabric::EgressSchedulerKind::ib_vl_arb &&
      (!s.vl_arb.high.empty() || !s.vl_arb.low.empty())) {
    // A VL in neither table (or only with weight 0) would never be sent.
    for (int vl = 0; vl < s.vls; ++vl) {
      bool served = false;
      for (const auto* t : {&s.vl_arb.high, &s.vl_arb.low})
        for (const auto& e : *t) served = served || (e.vl == vl && e.weight > 0);
      if (!served)
        m.map("vl_arbitration").fail("", "VL " + std::to_string(vl) + " has no table entry with weight > 0, so its "
                                         "packets would never be sent; list every VL 0.." + std::to_string(s.vls - 1));
    }
  }
  if (s.vl_arbiter_impl != AllocatorImpl::tlm) {
    if (s.egress_scheduler != tlm_fabric::EgressSchedulerKind::ib_vl_arb)
      m.fail("vl_arbiter_impl", "the RTL VL arbiter twins ib_vl_arb; switch.egress_scheduler is " +
                                    std::string(hw::name_of(egress_scheduler_names(), s.egress_scheduler)));
    // No table: every VL weight 1 in the low table (Switch::make_egress_scheduler).
    const std::size_t rows = s.vl_arb.high.empty() && s.vl_arb.low.empty()
                                 ? static_cast<std::size_t>(s.vls)
                                 : std::max(s.vl_arb.high.size(), s.vl_arb.low.size());
    const auto problem = check_rtl_vl_arbiter(s.vl_arbiter_rtl_variant, s.vls > 1 ? s.vls : 0, static_cast<int>(rows));
    if (!problem.what.empty()) m.fail(problem.key, problem.what);
  }

  read_pfc(m.map("pfc"), s);
  read_marking(m.map("ecn"), "switch.ecn", s.ecn);
  read_marking(m.map("wred"), "switch.wred", s.wred);
  for (const char* key : {"tiers", "instances"})
    if (m.has(key)) m.node(key);  // read_switch_overrides, once the topology is known
  m.finish();
}


void read_transport(ConfigMap m, tlm_fabric::TransportParams& t) {
  const hw::ParamBlock& spec = tlm_fabric::transport_params();
  t.mode = m.choice(spec["retransmit"], t.mode, tlm_fabric::retransmit_mode_names());
  t.ack_every = static_cast<int>(m.integer(spec["ack_every"], t.ack_every));
  t.retransmit_timeout = m.time(spec["retransmit_timeout"], t.retransmit_timeout);
  t.window = static_cast<int>(m.integer(spec["window"], t.window));
  t.processing_latency = m.time(spec["processing_latency"], t.processing_latency);
  m.finish();
}

void read_pcie(ConfigMap m, tlm_fabric::HostParams& h) {
  auto& p = h.pcie;
  const hw::ParamBlock& spec = hw::pcie_params();
  p.generation = static_cast<int>(m.integer(spec["generation"], p.generation));
  p.width = static_cast<int>(m.integer(spec["width"], p.width));
  p.max_payload = static_cast<std::uint32_t>(m.size(spec["max_payload"], Size::bytes(p.max_payload)).in_bytes());
  p.max_read_request = static_cast<std::uint32_t>(m.size(spec["max_read_request"], Size::bytes(p.max_read_request)).in_bytes());
  p.read_tags = static_cast<int>(m.integer(spec["read_tags"], p.read_tags));
  p.tlp_overhead = static_cast<std::uint32_t>(m.size(spec["tlp_overhead"], Size::bytes(p.tlp_overhead)).in_bytes());
  p.host_read_latency = m.time(spec["host_read_latency"], p.host_read_latency);
  p.gpu_read_latency = m.time(spec["gpu_read_latency"], p.gpu_read_latency);
  p.host_write_latency = m.time(spec["host_write_latency"], p.host_write_latency);
  p.gpu_write_latency = m.time(spec["gpu_write_latency"], p.gpu_write_latency);
  p.doorbell_latency = m.time(spec["doorbell_latency"], p.doorbell_latency);
  try {
    p.validate();
  } catch (const std::invalid_argument& e) {
    m.fail("", e.what());
  }
  m.finish();
}

void read_cc(ConfigMap m, tlm_fabric::CcParams& c) {
  c.kind = m.choice(tlm_fabric::cc_params()["kind"], c.kind, hw::cc_kind_names());
  ConfigMap d = m.map("dcqcn");
  const hw::ParamBlock& dspec = hw::dcqcn_params();
  auto& q = c.dcqcn;
  q.g = d.number(dspec["g"], q.g);
  q.alpha_timer = d.time(dspec["alpha_timer"], q.alpha_timer);
  q.rate_timer = d.time(dspec["rate_timer"], q.rate_timer);
  q.byte_counter = d.size(dspec["byte_counter"], q.byte_counter);
  q.fast_recovery_steps = static_cast<int>(d.integer(dspec["fast_recovery_steps"], q.fast_recovery_steps));
  q.additive_increase = d.bandwidth(dspec["additive_increase"], q.additive_increase);
  q.hyper_increase = d.bandwidth(dspec["hyper_increase"], q.hyper_increase);
  q.min_rate = d.bandwidth(dspec["min_rate"], q.min_rate);
  q.cnp_interval = d.time(dspec["cnp_interval"], q.cnp_interval);
  d.finish();
  ConfigMap i = m.map("ib_cc");
  const hw::ParamBlock& ispec = hw::ib_cc_params();
  auto& b = c.ib;
  b.ccti_increase = static_cast<int>(i.integer(ispec["ccti_increase"], b.ccti_increase));
  b.ccti_limit = static_cast<int>(i.integer(ispec["ccti_limit"], b.ccti_limit));
  b.ccti_timer = i.time(ispec["ccti_timer"], b.ccti_timer);
  b.ipd_unit = i.time(ispec["ipd_unit"], b.ipd_unit);
  i.finish();
  m.finish();
}

void read_nic(ConfigMap m, tlm_fabric::NicParams& n, const tlm_fabric::SwitchParams& sw) {
  const hw::ParamBlock& spec = tlm_fabric::nic_params();
  n.mtu = m.size(spec["mtu"], n.mtu);
  n.rx_buffer = m.size(spec["rx_buffer"], n.rx_buffer);
  n.credit_return_latency = m.time(spec["credit_return_latency"], n.credit_return_latency);
  read_transport(m.map("transport"), n.transport);
  read_pcie(m.map("pcie"), n.host);
  n.host.memory = m.choice(spec["memory"], n.host.memory, hw::memory_target_names());
  n.host.poll_latency = m.time(spec["poll_latency"], n.host.poll_latency);
  n.host.inline_threshold =
      static_cast<std::uint32_t>(m.size(spec["inline_threshold"], Size::bytes(n.host.inline_threshold)).in_bytes());
  n.host.blueflame = m.boolean(spec["blueflame"], n.host.blueflame);
  read_cc(m.map("congestion_control"), n.cc);
  n.vl_arbiter_impl = m.choice(spec["vl_arbiter_impl"], n.vl_arbiter_impl, tlm_fabric::allocator_impl_names());
  n.vl_arbiter_rtl_variant = m.string(spec["vl_arbiter_rtl_variant"], n.vl_arbiter_rtl_variant);
  n.waveform = sw.waveform;
  if (n.vl_arbiter_impl != tlm_fabric::AllocatorImpl::tlm) {
    // One requester per VL (switch.vls).
    const auto problem = tlm_fabric::check_rtl_arbiter("round_robin", n.vl_arbiter_rtl_variant, sw.vls);
    if (!problem.what.empty())
      m.fail(rtl_arbiter_key(problem, "vl_arbiter", "vl_arbiter_impl"),
             problem.key == tlm_fabric::RtlArbiterProblem::Key::size ? "switch.vls: " + problem.what : problem.what);
  }
  m.finish();
}

// Rank -> endpoint order (sim/fabric.cpp place_ranks); `rail` needs the rail structure.
void read_placement(ConfigMap& m, const hw::ParamBlock& spec, FabricConfig& c) {
  c.placement = m.choice(spec["placement"], c.placement, rank_placement_names());
  if (c.placement == RankPlacement::rail && c.topology.kind != TopologyKind::rail_optimized)
    m.fail("placement", "rail placement orders ranks rail by rail and needs topology.kind rail_optimized, got " +
                            std::string(to_string(c.topology.kind)));
}

// `ranks` (0: every endpoint, else at least 2) and the rank count halving_doubling needs.
void read_ranks(ConfigMap& m, const hw::ParamBlock& spec, FabricConfig& c, int endpoints, const char* what) {
  c.collective_ranks = static_cast<int>(m.integer(spec["ranks"], c.collective_ranks, endpoints));
  if (c.collective_ranks == 1) m.fail("ranks", std::string(what) + " needs at least 2 ranks");
  const int n = c.collective_ranks ? c.collective_ranks : endpoints;
  if (c.collective.algorithm == testbench::CollectiveAlgorithm::halving_doubling && (n & (n - 1)) != 0)
    m.fail(m.has("ranks") ? "ranks" : "algorithm", "halving_doubling needs a power-of-two number of ranks, got " + std::to_string(n));
}

// `sizes`: a list, or "all" for `all_from`, 2 x all_from, ... up to `all_to` bytes.
void read_sizes(ConfigMap& m, const hw::ParamSpec& spec, std::vector<std::uint64_t>& sizes, std::uint64_t all_from,
                std::uint64_t all_to) {
  if (!m.has(spec.key)) return;
  sizes.clear();
  for (const Size s : m.size_list(spec, "all")) sizes.push_back(s.in_bytes());
  if (sizes.empty())
    for (std::uint64_t s = all_from; s <= all_to; s *= 2) sizes.push_back(s);
}

void read_collective(ConfigMap m, FabricConfig& c, int endpoints) {
  using testbench::CollectiveAlgorithm;
  using testbench::CollectiveOp;
  const hw::ParamBlock& spec = workload_params("collective");
  auto& p = c.collective;
  p.op = m.choice(spec["op"], p.op, testbench::collective_op_names());
  p.algorithm = m.choice(spec["algorithm"], p.op == CollectiveOp::alltoall ? CollectiveAlgorithm::direct : p.algorithm,
                         testbench::collective_algorithm_names());
  const bool tree_or_hd = p.algorithm == CollectiveAlgorithm::double_binary_tree ||
                          p.algorithm == CollectiveAlgorithm::halving_doubling ||
                          p.algorithm == CollectiveAlgorithm::sharp;
  if (tree_or_hd && p.op != CollectiveOp::allreduce)
    m.fail("algorithm", std::string(testbench::to_string(p.algorithm)) + " is an allreduce algorithm");
  if ((p.op == CollectiveOp::alltoall) != (p.algorithm == CollectiveAlgorithm::direct))
    m.fail("algorithm", "alltoall uses the direct algorithm, and direct is only for alltoall");
  if (p.algorithm == CollectiveAlgorithm::sharp) {
    // Aggregation traffic is the switches' own raw messages: no transport to recover a loss.
    if (!c.in_network_reduction.enabled)
      m.fail("algorithm", "sharp reduces in the switches: it needs switch.in_network_reduction: true");
    if (c.topology.kind == TopologyKind::back_to_back) m.fail("algorithm", "sharp needs a switch; back_to_back has none");
    if (c.link.drop_rate > 0 || c.link.ber > 0)
      m.fail("algorithm", "sharp aggregation traffic is not retransmitted: it needs link.drop_rate and link.ber 0");
    p.aggregation_latency = tlm_fabric::to_sc(c.in_network_reduction.latency);
    p.aggregation_bandwidth_bps = c.in_network_reduction.bandwidth.bps();
  }
  read_sizes(m, spec["sizes"], p.sizes, 8, 128u << 20);  // nccl-tests -b 8 -e 128M -f 2
  p.iterations = static_cast<int>(m.integer(spec["iterations"], p.iterations));
  p.channels = static_cast<int>(m.integer(spec["channels"], p.channels));
  p.tree_chunk = m.size(spec["tree_chunk"], Size::bytes(p.tree_chunk)).in_bytes();
  p.tree_slots = static_cast<int>(m.integer(spec["tree_slots"], p.tree_slots));
  p.reduce_bandwidth_bps = m.bandwidth(spec["reduce_bandwidth"], Bandwidth::bits_per_second(p.reduce_bandwidth_bps)).bps();
  p.step_latency = tlm_fabric::to_sc(m.time(spec["step_latency"], Time::seconds(p.step_latency.to_seconds())));
  p.sl = static_cast<int>(m.integer(spec["sl"], p.sl));
  read_ranks(m, spec, c, endpoints, "a collective");
  read_placement(m, spec, c);
  m.finish();
}

// A training step: AllReduce per gradient bucket, overlapped with the backward pass. The
// step's times and sizes have no params-struct default: the table's is the default.
void read_training(ConfigMap m, FabricConfig& c, int endpoints) {
  const hw::ParamBlock& spec = workload_params("training");
  auto& p = c.collective;
  auto& t = p.training;
  t.enabled = true;
  p.op = testbench::CollectiveOp::allreduce;
  auto time = [&](const char* key) { return tlm_fabric::to_sc(m.time(spec[key], hw::parse_time(spec[key].def))); };
  t.forward = time("forward");
  t.backward = time("backward");
  t.optimizer = time("optimizer");
  const Size gradients = m.size(spec["gradient_size"], hw::parse_size(spec["gradient_size"].def));
  const Size bucket = m.size(spec["bucket_size"], hw::parse_size(spec["bucket_size"].def));
  for (std::uint64_t left = gradients.in_bytes(); left > 0;) {
    const std::uint64_t b = std::min(left, bucket.in_bytes());
    t.buckets.push_back(b);
    left -= b;
  }
  if (t.buckets.size() > 10000) m.fail("bucket_size", "more than 10000 buckets; use larger buckets");
  t.steps = static_cast<int>(m.integer(spec["steps"], t.steps));
  t.overlap = m.boolean(spec["overlap"], t.overlap);
  p.algorithm = m.choice(spec["algorithm"], p.algorithm, testbench::collective_algorithm_names());
  p.channels = static_cast<int>(m.integer(spec["channels"], p.channels));
  p.reduce_bandwidth_bps = m.bandwidth(spec["reduce_bandwidth"], Bandwidth::bits_per_second(p.reduce_bandwidth_bps)).bps();
  read_ranks(m, spec, c, endpoints, "training");
  read_placement(m, spec, c);
  m.finish();
}

// A Chakra trace: read and checked here, so a malformed one is a configuration error at
// `chakra.trace` naming the trace file and node. A generated training job (its plan
// checked, its trace built when the run starts) takes the section without `trace`, to
// tune the run.
void read_chakra(ConfigMap m, FabricConfig& c, int endpoints, const std::string& config_file) {
  const std::vector<hw::ParamBlock>& blocks = chakra_param_blocks();
  const hw::ParamBlock& spec = blocks[0];
  auto& p = c.chakra.params;
  if (c.training_job) {
    if (m.has("trace"))
      m.fail("trace", "the generated training job (training.model) is the trace; give chakra.trace or training.model, "
                      "not both");
  } else {
    if (!m.present("trace")) m.fail("trace", "is required: the trace's path prefix (PREFIX.0.et, PREFIX.1.et, ...)");
    const std::string given = m.string(spec["trace"], "");
    const std::filesystem::path rel(given);
    c.chakra.prefix = (rel.is_absolute() ? rel : std::filesystem::path(config_file).parent_path() / rel).lexically_normal().string();
    try {
      c.chakra.trace = std::make_shared<const chakra::Trace>(chakra::read_trace(c.chakra.prefix));
    } catch (const chakra::TraceError& e) {
      m.fail("trace", e.what());
    }
  }
  const int n = c.training_job ? c.training_job->plan.world() : static_cast<int>(c.chakra.trace->ranks.size());
  if (n > endpoints)
    m.fail("trace", "the trace has " + std::to_string(n) + " ranks, more than the topology's " + std::to_string(endpoints) +
                        " endpoints");
  c.collective_ranks = n;
  using testbench::CollectiveAlgorithm;
  static const hw::EnumNames<CollectiveAlgorithm> algorithms{{CollectiveAlgorithm::ring, "ring"},
                                                             {CollectiveAlgorithm::double_binary_tree, "double_binary_tree"},
                                                             {CollectiveAlgorithm::halving_doubling, "halving_doubling"}};
  p.algorithm = m.choice(spec["algorithm"], p.algorithm, algorithms);
  p.channels = static_cast<int>(m.integer(spec["channels"], p.channels));
  p.chunk = m.size(spec["chunk"], Size::bytes(p.chunk)).in_bytes();
  p.tree_slots = static_cast<int>(m.integer(spec["tree_slots"], p.tree_slots));
  p.reduce_bandwidth_bps = m.bandwidth(spec["reduce_bandwidth"], Bandwidth::bits_per_second(p.reduce_bandwidth_bps)).bps();
  p.step_latency = tlm_fabric::to_sc(m.time(spec["step_latency"], Time::seconds(0)));
  p.sl = static_cast<int>(m.integer(spec["sl"], p.sl));
  if (c.training_job && m.has("gpu"))
    c.warnings.push_back(m.warning("gpu", "has no effect: the generated job's compute nodes carry durations from "
                                          "training.gpu"));
  p.gpu = read_gpu(m.map("gpu"), p.precision);
  if (c.training_job) {
    if (const std::string why = job_not_runnable(*c.training_job, p); !why.empty()) m.fail("algorithm", why);
  } else {
    try {
      chakra::check_runnable(*c.chakra.trace, p);
    } catch (const chakra::TraceError& e) {
      m.fail(m.has("algorithm") ? "algorithm" : "trace", e.what());
    }
  }
  read_placement(m, spec, c);
  m.finish();
}

// The servers of a rail layout are the topology's: GPU g of each on rail g. 0: no servers.
int topology_gpus_per_server(const TopologyParams& t) {
  if (t.kind == TopologyKind::rail_optimized) return t.rail.gpus_per_server;
  if (t.kind == TopologyKind::three_tier && t.three_tier.layout == HostLayout::rail) return t.three_tier.gpus_per_server;
  return 0;
}

// A generated job's tp and ep groups under packed placement (rank r on endpoint r): the
// groups whose ranks are not all in one server send their collectives over the fabric.
void warn_groups_across_servers(ConfigMap& top, FabricConfig& c) {
  if (!c.training_job || c.placement != RankPlacement::packed) return;
  const training::Plan& p = c.training_job->plan;
  const int g = c.server.gpus;
  auto count = [&](const std::vector<std::vector<int>>& groups, const char* key, const char* what) {
    std::size_t split = 0;
    for (const auto& ranks : groups)
      split += std::any_of(ranks.begin(), ranks.end(), [&](int r) { return r / g != ranks.front() / g; });
    if (split == 0) return;
    c.warnings.push_back(top.map("training").map("parallelism").warning(
        key, std::to_string(split) + " of " + std::to_string(groups.size()) + " " + key + " groups straddle servers of " +
                 std::to_string(g) + " GPUs (server.gpus) under packed placement: their " + what +
                 " enter the fabric instead of the scale-up domain"));
  };
  std::vector<std::vector<int>> tp, ep;
  for (int s = 0; s < p.pp; ++s)
    for (int d = 0; d < p.dp; ++d) {
      tp.emplace_back();
      for (int t = 0; t < p.tp; ++t) tp.back().push_back(p.rank(s, d, t));
    }
  if (p.ep > 1)
    for (int s = 0; s < p.pp; ++s)
      for (int t = 0; t < p.tp; ++t)
        for (int d = 0; d < p.dp / p.ep; ++d) {
          ep.emplace_back();
          for (int e = 0; e < p.ep; ++e) ep.back().push_back(p.rank(s, d * p.ep + e, t));
        }
  if (p.tp > 1) count(tp, "tp", "all-reduces");
  count(ep, "ep", "all-to-alls");
}

// `server:`. A rail layout fixes the server size (endpoint e is GPU e mod G of server
// e / G); the scale-up domain carries only a Chakra trace's (or generated job's)
// transfers, so it is warned about beside any other workload.
void read_server(ConfigMap& top, FabricConfig& c) {
  ConfigMap m = top.map("server");
  const std::vector<hw::ParamBlock>& blocks = server_param_blocks();
  ServerParams& s = c.server;
  const int topology_gpus = topology_gpus_per_server(c.topology);
  s.gpus = static_cast<int>(m.integer(blocks[0]["gpus"], s.gpus));
  if (topology_gpus > 0 && m.has("gpus") && s.gpus != topology_gpus)
    m.fail("gpus", "must be the topology's gpus_per_server (" + std::to_string(topology_gpus) + "): " +
                       std::string(to_string(c.topology.kind)) + " puts GPU g of each server on rail g; got " +
                       std::to_string(s.gpus) + " (or leave it out)");
  if (s.gpus == 0) s.gpus = topology_gpus > 0 ? topology_gpus : 1;
  s.scale_up = m.present("scale_up");
  ConfigMap u = m.map("scale_up");
  const hw::ParamBlock& us = blocks[1];
  s.domain.bandwidth_bps = u.bandwidth(us["bandwidth"], Bandwidth::bits_per_second(s.domain.bandwidth_bps)).bps();
  s.domain.latency = tlm_fabric::to_sc(u.time(us["latency"], Time::seconds(s.domain.latency.to_seconds())));
  u.finish();
  if (s.scale_up && !c.chakra_enabled)
    c.warnings.push_back(m.warning("scale_up", "has no effect: only a Chakra trace or a generated training job "
                                               "(training.model) sends over the scale-up domain; traffic, perftest, "
                                               "collective and the fixed-time training step go through the NICs"));
  else if (s.scale_up && s.gpus == 1)
    c.warnings.push_back(m.warning("scale_up", "has no effect: a server of one GPU (server.gpus 1) has no other GPU "
                                               "to reach over it"));
  else if (s.scale_up) {
    c.chakra.params.scale_up = s.domain;
    c.chakra.params.scale_up.gpus_per_server = s.gpus;
    warn_groups_across_servers(top, c);
  } else if (m.has("gpus") && topology_gpus == 0)
    c.warnings.push_back(m.warning("gpus", "has no effect without server.scale_up: GPUs of one server reach each "
                                           "other through their NICs, as GPUs of different servers do"));
  m.finish();
}

void read_perftest(ConfigMap m, testbench::PerftestParams& p, int endpoints) {
  const hw::ParamBlock& spec = workload_params("perftest");
  p.kind = m.choice(spec["test"], p.kind, testbench::perftest_kind_names());
  read_sizes(m, spec["sizes"], p.sizes, 2, 8u << 20);  // perftest -a
  p.iterations = static_cast<int>(m.integer(spec["iterations"], p.iterations));
  p.tx_depth = static_cast<int>(m.integer(spec["tx_depth"], p.tx_depth));
  p.client = static_cast<int>(m.integer(spec["client"], p.client, endpoints - 1));
  p.server = static_cast<int>(m.integer(spec["server"], p.server, endpoints - 1));
  if (p.client == p.server) m.fail("server", "must differ from client (" + std::to_string(p.client) + ")");
  p.sl = static_cast<int>(m.integer(spec["sl"], p.sl));
  m.finish();
}

void read_phy_overrides(ConfigMap m, hw::PhyParams& p) {
  read_phy(m, p);
  m.finish();
  try {
    hw::PhyTiming check(p);
  } catch (const std::invalid_argument& err) {
    m.fail("", err.what());
  }
}

void read_three_tier(ConfigMap& m, const hw::ParamBlock& spec, ThreeTierParams& p) {
  p.radix = static_cast<int>(m.integer(spec["radix"], p.radix));
  if (p.radix % 2) m.fail("radix", "must be even, got " + std::to_string(p.radix));
  p.oversubscription = m.number(spec["oversubscription"], p.oversubscription);
  p.pods = static_cast<int>(m.integer(spec["pods"], p.pods));
  if (p.pods > p.radix) m.fail("pods", "must be in 1..radix (" + std::to_string(p.radix) + "), or 0 for radix");
  p.leaves_per_pod = static_cast<int>(m.integer(spec["leaves_per_pod"], p.leaves_per_pod));
  if (p.leaves_per_pod > p.radix / 2)
    m.fail("leaves_per_pod", "must be in 1..radix/2 (" + std::to_string(p.radix / 2) + "), or 0 for radix/2");
  p.layout = m.choice(spec["layout"], p.layout, host_layout_names());
  if (p.layout != HostLayout::rail && m.has("gpus_per_server"))
    m.fail("gpus_per_server", "applies to layout: rail only");
  p.gpus_per_server = static_cast<int>(m.integer(spec["gpus_per_server"], p.gpus_per_server));
  if (p.layout == HostLayout::rail && p.leaves_in_pod() % p.gpus_per_server)
    m.fail("gpus_per_server", "must divide leaves_per_pod (" + std::to_string(p.leaves_in_pod()) +
                                  ") so that each rail has whole leaves in every pod, got " + std::to_string(p.gpus_per_server));
}

void read_topology(ConfigMap m, TopologyParams& t, ConfigMap switch_section, int ports, int vls,
                   const tlm_fabric::LinkParams& link, std::uint64_t max_memory) {
  t.kind = m.choice(topology_params()["kind"], t.kind, topology_kind_names());
  // Only the keys of the chosen kind are read; others are unknown keys.
  const hw::ParamBlock& spec = t.kind == TopologyKind::back_to_back
                                   ? topology_params()
                                   : topology_params("topology (kind: " + std::string(to_string(t.kind)) + ")");
  auto integer = [&](const char* key, int& v) { v = static_cast<int>(m.integer(spec[key], v)); };
  switch (t.kind) {
    case TopologyKind::single_switch:
      integer("endpoints", t.endpoints);
      // Blame the key the user wrote: endpoints if given, else switch.ports.
      if (t.endpoints > ports)
        (m.has("endpoints") ? m : switch_section)
            .fail(m.has("endpoints") ? "endpoints" : "ports",
                  "a single switch with switch.ports = " + std::to_string(ports) + " can attach at most " +
                      std::to_string(ports) + " endpoints, got " + std::to_string(t.endpoints));
      break;
    case TopologyKind::leaf_spine:
      integer("radix", t.leaf_spine.radix);
      t.leaf_spine.oversubscription = m.number(spec["oversubscription"], t.leaf_spine.oversubscription);
      integer("leaves", t.leaf_spine.leaves);
      if (t.leaf_spine.leaves == 1 || t.leaf_spine.leaves > t.leaf_spine.radix)
        m.fail("leaves", "must be in 2..radix (" + std::to_string(t.leaf_spine.radix) + "), or 0 for radix, got " +
                             std::to_string(t.leaf_spine.leaves));
      break;
    case TopologyKind::fat_tree:
      integer("k", t.fat_tree_k);  // k=24: 3456 hosts, 720 switches
      if (t.fat_tree_k % 2) m.fail("k", "must be even, got " + std::to_string(t.fat_tree_k));
      break;
    case TopologyKind::kary_ntree:
      integer("k", t.kary_ntree.k);
      integer("n", t.kary_ntree.n);
      if (std::pow(double(t.kary_ntree.k), double(t.kary_ntree.n)) > 65536)
        m.fail("n", "k^n must be at most 65536 endpoints, got k = " + std::to_string(t.kary_ntree.k) +
                        ", n = " + std::to_string(t.kary_ntree.n));
      break;
    case TopologyKind::back_to_back: break;  // two NICs on one cable
    case TopologyKind::rail_optimized:
      integer("servers", t.rail.servers);
      integer("gpus_per_server", t.rail.gpus_per_server);
      integer("radix", t.rail.radix);
      t.rail.oversubscription = m.number(spec["oversubscription"], t.rail.oversubscription);
      break;
    case TopologyKind::three_tier: read_three_tier(m, spec, t.three_tier); break;
    case TopologyKind::explicit_graph:
      integer("switches", t.explicit_graph.switches);
      integer("endpoints", t.explicit_graph.endpoints);
      t.explicit_graph.cables = m.name_pairs("cables");
      if (t.explicit_graph.cables.empty()) m.fail("cables", "an explicit topology needs a cables list");
      break;
  }
  tlm_fabric::LinkParams host = link;
  t.fabric_link = link;
  if (m.has("host_link")) read_phy_overrides(m.map("host_link"), host.phy);
  if (m.has("fabric_link")) read_phy_overrides(m.map("fabric_link"), t.fabric_link.phy);
  const int endpoints = t.endpoint_count();
  t.links.assign(static_cast<std::size_t>(std::max(endpoints, 0)), host);
  for (auto& o : m.list_of_maps("links")) {
    const int e = static_cast<int>(o.required_integer(topology_params("topology.links[i]")["endpoint"], endpoints - 1));
    read_phy(o, t.links[e].phy);
    o.finish();
    try {
      hw::PhyTiming check(t.links[e].phy);
    } catch (const std::invalid_argument& err) {
      o.fail("", err.what());
    }
  }
  // The graph itself: impossible shapes and unreachable endpoints are errors now.
  const char* blame = t.kind == TopologyKind::explicit_graph ? "cables"
                      : t.kind == TopologyKind::leaf_spine || t.kind == TopologyKind::rail_optimized ||
                              t.kind == TopologyKind::three_tier
                          ? "radix"
                      : t.kind == TopologyKind::fat_tree     ? "k"
                      : t.kind == TopologyKind::kary_ntree   ? "k"
                                                             : "kind";
  try {
    const TopologyGraph g = build_graph(t);
    // Refused before the tables are built: a fabric that cannot fit ends in a clear error
    // at once, not in an allocation failure minutes later.
    const std::uint64_t need = estimated_run_bytes(g, vls);
    const std::optional<std::uint64_t> available = available_memory_bytes();
    const std::uint64_t limit = max_memory > 0 ? max_memory : available.value_or(0);
    auto gib = [](std::uint64_t bytes) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
      return std::string(text);
    };
    if (limit > 0 && need > limit)
      throw std::invalid_argument(
          std::string(to_string(t.kind)) + " of " + std::to_string(g.switches.size()) + " switches and " +
          std::to_string(g.endpoints()) + " endpoints needs an estimated " + gib(need) + ", more than the " +
          gib(limit) +
          (max_memory > 0 ? " of simulation.max_memory" : " this machine has available (simulation.max_memory sets the limit)"));
    check_routes(g, minimal_routes(g));
  } catch (const std::invalid_argument& err) {
    m.fail(m.has(blame) ? blame : "kind", err.what());
  }
  m.finish();
}

void read_routing(ConfigMap m, hw::RoutingParams& r) {
  const hw::ParamBlock& spec = hw::routing_params();
  r.algorithm = m.choice(spec["algorithm"], r.algorithm, hw::routing_algorithm_names());
  r.hash_seed = static_cast<std::uint64_t>(m.integer(spec["hash_seed"], static_cast<std::int64_t>(r.hash_seed)));
  r.per_switch_hash = m.boolean(spec["per_switch_hash"], r.per_switch_hash);
  r.flowlet_timeout_s = m.time(spec["flowlet_timeout"], Time::seconds(r.flowlet_timeout_s)).in_seconds();
  m.finish();
}

// `sl`: one service level or a round-robin list of them.
std::vector<int> read_service_levels(ConfigMap& m, const hw::ParamSpec& spec, const std::vector<int>& def) {
  if (!m.present(spec.key)) return def;
  if (!m.node(spec.key).IsSequence())
    return {static_cast<int>(m.integer(spec.key, 0, spec.lo<std::int64_t>(), spec.hi<std::int64_t>()))};
  const auto levels = static_cast<std::size_t>(spec.hi<std::int64_t>() + 1);  // at most one entry per SL
  const auto v = m.integer_list(spec, {}, levels);
  if (v.empty()) m.fail(spec.key, "needs at least one service level, e.g. 0 or [0, 1, 2, 3]");
  return std::vector<int>(v.begin(), v.end());
}

std::vector<int> to_ints(const std::vector<std::int64_t>& v) { return std::vector<int>(v.begin(), v.end()); }

void read_message_sizes(ConfigMap& m, TrafficParams& t) {
  const hw::ParamBlock& spec = workload_params("traffic.message_sizes[i]");
  for (auto& e : m.list_of_maps("message_sizes")) {
    SizeWeight w;
    if (!e.has("size")) e.fail("", "missing required key 'size'");
    w.size = e.size(spec["size"], w.size);
    w.weight = e.number(spec["weight"], w.weight);
    e.finish();
    t.message_sizes.push_back(w);
  }
  if (!t.message_sizes.empty() && m.has("message_size"))
    m.fail("message_sizes", "give either message_size or message_sizes, not both");
}

void read_flows(std::vector<ConfigMap>& flows, TrafficParams& t, int endpoints, const SimulationParams& sim) {
  const hw::ParamBlock& spec = workload_params("traffic.flows[i]");
  for (auto& f : flows) {
    FlowParams fp;
    fp.src = static_cast<int>(f.required_integer(spec["src"], endpoints - 1));
    fp.dst = static_cast<int>(f.required_integer(spec["dst"], endpoints - 1));
    if (fp.src == fp.dst) f.fail("dst", "a flow must go to another endpoint (src = dst = " + std::to_string(fp.src) + ")");
    fp.load = f.number(spec["load"], t.load);
    fp.message_size = f.size(spec["message_size"], t.message_size);
    fp.messages = static_cast<std::uint64_t>(f.integer(spec["messages"], static_cast<std::int64_t>(t.messages)));
    fp.start = f.time(spec["start"], fp.start);
    fp.sls = read_service_levels(f, spec["sl"], t.sls);
    if (!(fp.start < sim.duration)) f.fail("start", "must be before simulation.duration (" + hw::to_string(sim.duration) + ")");
    f.finish();
    t.flows.push_back(fp);
  }
}

void read_traffic(ConfigMap m, TrafficParams& t, ConfigMap topology, int endpoints, const SimulationParams& sim) {
  const hw::ParamBlock& spec = workload_params("traffic");
  t.pattern = m.choice(spec["pattern"], t.pattern, traffic_pattern_names());
  t.load = m.number(spec["load"], t.load);
  t.message_size = m.size(spec["message_size"], t.message_size);
  read_message_sizes(m, t);
  t.arrival = m.choice(spec["arrival"], t.arrival, testbench::arrival_process_names());
  t.burst_length = m.number(spec["burst_length"], t.burst_length);
  t.transport = m.choice(spec["transport"], t.transport, traffic_transport_names());
  t.messages = static_cast<std::uint64_t>(m.integer(spec["messages"], static_cast<std::int64_t>(t.messages)));
  t.sls = read_service_levels(m, spec["sl"], t.sls);
  constexpr std::size_t kMaxListed = 256;
  const std::vector<std::int64_t> hotspots(t.hotspots.begin(), t.hotspots.end());
  t.hotspots = to_ints(m.integer_list(spec["hotspots"], hotspots, kMaxListed, endpoints - 1));
  if (t.hotspots.empty()) m.fail("hotspots", "needs at least one endpoint");
  t.hotspot_fraction = m.number(spec["hotspot_fraction"], t.hotspot_fraction);
  t.incast_target = static_cast<int>(m.integer(spec["incast_target"], t.incast_target, endpoints - 1));
  t.incast_senders = to_ints(m.integer_list(spec["incast_senders"], {}, kMaxListed, endpoints - 1));
  for (int s : t.incast_senders)
    if (s == t.incast_target) m.fail("incast_senders", "the incast target " + std::to_string(s) + " cannot also send");
  auto flows = m.list_of_maps("flows");
  if (!flows.empty() && t.pattern != TrafficPattern::explicit_flows)
    m.fail("flows", "flows are only read with pattern: explicit");
  if (t.pattern == TrafficPattern::explicit_flows && flows.empty())
    m.fail("pattern", "pattern: explicit needs a non-empty 'flows' list");
  if (t.pattern != TrafficPattern::none && t.pattern != TrafficPattern::explicit_flows && endpoints < 2)
    (m.has("pattern") ? m : topology).fail(m.has("pattern") ? "pattern" : "endpoints", "pattern " + std::string(to_string(t.pattern)) + " needs at least 2 endpoints");
  read_flows(flows, t, endpoints, sim);
  m.finish();
}

/// output.trace (the kinds) and the keys shaping the fabric trace; those need a kind.
void read_trace(ConfigMap& m, const hw::ParamBlock& spec, tlm_fabric::TraceOptions& t, int endpoints) {
  for (const auto& kind : scalar_list(m, "trace", "a trace kind (perfetto, vcd)")) {
    if (kind == "perfetto") t.perfetto = true;
    else if (kind == "vcd") t.vcd = true;
    else m.fail("trace", "unknown trace kind '" + kind + "'; allowed: perfetto, vcd (RTL waveforms: switch.rtl_trace, "
                         "fabricsim run --trace rtl)");
  }
  for (const char* key : {"trace_scope", "trace_endpoint", "trace_flow", "trace_from", "trace_to", "trace_max_size"})
    if (m.present(key) && !t.enabled()) m.fail(key, "needs the fabric trace output.trace (fabricsim run --trace perfetto|vcd)");
  t.scopes = scalar_list(m, "trace_scope", "a glob");
  auto endpoint = [&](const char* key, const std::string& text) {
    char* end = nullptr;
    const long e = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || e < 0 || e >= endpoints)
      m.fail(key, "'" + text + "' is not an endpoint (0.." + std::to_string(endpoints - 1) + ")");
    return static_cast<int>(e);
  };
  for (const auto& e : scalar_list(m, "trace_endpoint", "an endpoint")) t.endpoints.push_back(endpoint("trace_endpoint", e));
  for (const auto& f : scalar_list(m, "trace_flow", "a SRC:DST pair")) {
    const auto colon = f.find(':');
    if (colon == std::string::npos) m.fail("trace_flow", "'" + f + "' is not a SRC:DST pair of endpoints, e.g. 0:3");
    t.flows.emplace_back(endpoint("trace_flow", f.substr(0, colon)), endpoint("trace_flow", f.substr(colon + 1)));
    if (t.flows.back().first == t.flows.back().second)
      m.fail("trace_flow", "'" + f + "': a flow must go to another endpoint");
  }
  read_window(m, spec, "output", "trace_", "trace", t.from_ps, t.to_ps);
  t.max_bytes = m.size(spec["trace_max_size"], hw::Size::bytes(t.max_bytes)).in_bytes();
}

void read_output(ConfigMap m, OutputParams& o, int endpoints) {
  const hw::ParamBlock& spec = output_params();
  o.directory = m.string(spec["directory"], o.directory);
  if (o.directory.empty()) m.fail("directory", "must not be empty");
  o.packet_csv = m.boolean(spec["packet_csv"], o.packet_csv);
  o.latency_breakdown = m.boolean(spec["latency_breakdown"], o.latency_breakdown);
  o.sample_interval = m.time(spec["sample_interval"], o.sample_interval);
  // Below the kernel's time resolution the sampler would re-arm at zero delay forever.
  if (o.sample_interval.in_seconds() > 0 && o.sample_interval < Time::ns(1)) m.fail("sample_interval", "must be 0s (off) or at least 1ns, got " + hw::to_string(o.sample_interval));
  read_trace(m, spec, o.trace, endpoints);
  m.finish();
}

// Each receive buffer must hold one credit block and one whole MTU frame,
// otherwise a transmitter can never collect the credits to start a packet.
// Largest switch radix the topology builds (buffer pools scale with it).
int max_radix(const TopologyParams& t, int single_switch_ports) {
  if (t.kind == TopologyKind::single_switch) return single_switch_ports;
  int radix = 2;
  for (const auto& s : build_graph(t).switches) radix = std::max(radix, s.radix);
  return radix;
}

/// The RTL input FIFOs of `sp` (input_fifo_impl rtl / lockstep) are built deep enough for
/// its input buffer; errors point into `section`.
void check_input_fifo_depth(const FabricConfig& c, const tlm_fabric::SwitchParams& sp, ConfigMap section) {
  if (sp.input_fifo_impl == tlm_fabric::AllocatorImpl::tlm) return;
  const bool credit = c.link.flow_control == tlm_fabric::FlowControl::credit;
  const std::uint64_t depth = tlm_fabric::Switch::input_fifo_depth(sp, credit);
  const auto problem = tlm_fabric::check_rtl_packet_fifo(sp.input_fifo_rtl_variant, depth);
  if (!problem.what.empty())
    section.fail("input_buffer", section.path() + ".input_fifo_impl " + std::string(to_string(sp.input_fifo_impl)) +
                                     ": the input FIFOs are " + std::to_string(depth) + " words deep (" +
                                     (credit ? "the frames credits for input_buffer admit, in cells of cell_size"
                                             : "input_buffer / cell_size") + "): " + problem.what);
}

/// switch.port_forwarding of `sp` names ports every switch of `names` has (all of them
/// when empty); errors point into `section`.
void check_port_forwarding(const FabricConfig& c, const tlm_fabric::SwitchParams& sp, ConfigMap section,
                           const nlohmann::json& names) {
  if (sp.port_forwarding.empty()) return;
  const int port = sp.port_forwarding.rbegin()->first;
  if (c.topology.kind == TopologyKind::single_switch) {
    if (port >= sp.ports)
      section.map("port_forwarding").fail(std::to_string(port), "unknown port " + std::to_string(port) +
                                                                    ": the switch has ports 0.." + std::to_string(sp.ports - 1));
    return;
  }
  for (const auto& s : build_graph(c.topology).switches) {
    if (!names.empty() && std::find(names.begin(), names.end(), s.name) == names.end()) continue;
    if (port >= s.radix)
      section.map("port_forwarding").fail(std::to_string(port), "unknown port " + std::to_string(port) + ": switch " +
                                                                    s.name + " has ports 0.." + std::to_string(s.radix - 1));
  }
}

/// The buffer checks of one set of switch parameters `sp`; errors point into `sw` (the
/// `switch` section, a tier or a named switch).
void check_buffers(const FabricConfig& c, const tlm_fabric::SwitchParams& sp, ConfigMap sw, ConfigMap& top,
                   std::uint32_t credit_block) {
  const std::uint64_t frame = hw::PhyTiming(c.link.phy).frame_bytes(c.nic.mtu.in_bytes());
  const std::uint64_t need = std::max<std::uint64_t>((frame + credit_block - 1) / credit_block, 1) * credit_block;
  const int vls = sp.vls;
  const std::string why = "must hold one " + hw::to_string(c.nic.mtu) + " MTU frame (" + std::to_string(frame) +
                          "B with " + std::string(hw::to_string(c.link.phy.framing)) + " framing) in " +
                          std::to_string(credit_block) + "B credit blocks" + (vls > 1 ? " per VL" : "") +
                          ": at least " + std::to_string(need * vls) + "B";
  auto check = [&](ConfigMap s, const char* key, hw::Size size) {
    if (size.in_bytes() / vls / credit_block * credit_block >= need) return;
    if (s.has(key)) s.fail(key, why + ", got " + hw::to_string(size));
    top.map("nic").fail("mtu", "too large for " + s.path() + "." + key + " = " + hw::to_string(size) + ": it " + why);
  };
  if (c.link.flow_control == tlm_fabric::FlowControl::credit) {
    check(sw, "input_buffer", sp.input_buffer);
    check(top.map("nic"), "rx_buffer", c.nic.rx_buffer);
    // Worst case a credit block's packet takes a whole buffer cell.
    const int radix = max_radix(c.topology, sp.ports);
    const std::uint64_t cell_factor = std::max<std::uint64_t>(1, (sp.cell_bytes + credit_block - 1) / credit_block);
    const std::uint64_t need_pool = sp.input_buffer.in_bytes() * static_cast<std::uint64_t>(radix) * cell_factor;
    if (sp.buffer == tlm_fabric::BufferOrganisation::shared_memory && sp.shared_buffer.in_bytes() < need_pool)
      sw.fail("shared_buffer", "under credit flow control the shared pool must cover every input's credit "
                             "allotment in cells: radix " + std::to_string(radix) + " x input_buffer x " +
                             std::to_string(cell_factor) + " = " + hw::to_string(hw::Size::bytes(need_pool)) +
                             ", got " + hw::to_string(sp.shared_buffer));
  }
  const std::uint64_t cell = sp.cell_bytes;
  const std::uint64_t frame_cells = (frame + cell - 1) / cell * cell;
  if (c.link.flow_control == tlm_fabric::FlowControl::pfc &&
      sp.pfc.xoff_bytes + sp.pfc.headroom_bytes < frame_cells)
    sw.map("pfc").fail("headroom", "xoff + headroom must hold one MTU frame in whole cells (" +
                                                      std::to_string(frame_cells) + "B)");
  // Lossless: an input queue must take what PFC lets in on every priority (xoff +
  // headroom each), or it drops packets PFC admitted (the lossless-drops invariant).
  const bool input_queued = sp.buffer == tlm_fabric::BufferOrganisation::input_fifo ||
                            sp.buffer == tlm_fabric::BufferOrganisation::voq;
  const std::uint64_t pfc_need = static_cast<std::uint64_t>(vls) * (sp.pfc.xoff_bytes + sp.pfc.headroom_bytes);
  if (c.link.flow_control == tlm_fabric::FlowControl::pfc && input_queued && sp.input_buffer.in_bytes() < pfc_need) {
    const std::string what = "under PFC an input_fifo / voq input buffer must hold xoff + headroom on every VL (" +
                             std::to_string(vls) + " x (" + std::to_string(sp.pfc.xoff_bytes) + "B + " +
                             std::to_string(sp.pfc.headroom_bytes) + "B) = " + std::to_string(pfc_need) +
                             "B), else it drops packets PFC admitted";
    if (sw.has("input_buffer")) sw.fail("input_buffer", what + "; got " + hw::to_string(sp.input_buffer));
    sw.map("pfc").fail(sw.map("pfc").has("headroom") ? "headroom" : "xoff", what);
  }
  // Output-queued under PFC: PFC bounds what each input holds, not what one output
  // receives; every input may send its whole PFC allowance to the same output.
  const std::uint64_t oq_need = static_cast<std::uint64_t>(max_radix(c.topology, sp.ports)) * pfc_need;
  if (c.link.flow_control == tlm_fabric::FlowControl::pfc && sp.crosses_to_output_queues() &&
      sp.output_buffer.in_bytes() < oq_need)
    sw.fail("output_buffer", "under PFC an " + std::string(tlm_fabric::to_string(sp.buffer)) +
                                 " output buffer must hold what every input may send to it: radix " +
                                 std::to_string(max_radix(c.topology, sp.ports)) + " x " + std::to_string(vls) +
                                 " VL x (xoff + headroom) = " + hw::to_string(hw::Size::bytes(oq_need)) + ", got " +
                                 hw::to_string(sp.output_buffer) +
                                 "; else it drops packets PFC admitted (raise output_buffer, lower switch.pfc, or use "
                                 "voq / shared_memory)");
}

/// The switch keys one switch may not have on its own: the fabric's VLs and SL mapping,
/// the single switch's radix, the waveform options, the in-network reduction service,
/// and the override sections themselves.
bool fabric_wide_switch_key(const std::string& key) {
  static const std::set<std::string> keys{"ports", "vls", "sl_to_vl", "rtl_trace", "rtl_trace_format",
                                          "rtl_trace_scope", "rtl_trace_from", "rtl_trace_to", "rtl_trace_max_size",
                                          "in_network_reduction", "reduction_latency", "reduction_bandwidth",
                                          "tiers", "instances"};
  return keys.count(key) > 0;
}

/// `over` laid over `base`: maps merge key by key (a nested map such as pipeline or pfc
/// too), any other value replaces. The values keep their marks, so errors name their
/// lines. Only fresh keys of a fresh map are assigned: assigning to a node yaml-cpp
/// already holds would rewrite the base document through the shared reference.
YAML::Node overlay(const YAML::Node& base, const YAML::Node& over) {
  if (!base.IsMap() || !over.IsMap()) return over;
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : base) {
    const std::string key = kv.first.Scalar();
    const YAML::Node o = over[key];
    out[key] = o ? overlay(kv.second, o) : kv.second;
  }
  for (const auto& kv : over)
    if (!base[kv.first.Scalar()]) out[kv.first.Scalar()] = kv.second;
  return out;
}

/// One override's effective parameters and its section (errors and warnings point there).
using SwitchOverride = std::pair<tlm_fabric::SwitchParams, ConfigMap>;

/// switch.tiers and switch.instances: each read as the whole switch section with its keys
/// laid over (so every check of read_switch and check_buffers applies to the result).
std::vector<SwitchOverride> read_switch_overrides(const YAML::Node& root, const std::shared_ptr<ConfigSource>& source,
                                                  ConfigMap& top, FabricConfig& c, std::uint32_t credit_block) {
  std::vector<SwitchOverride> out;
  ConfigMap sw = top.map("switch");
  if (!sw.present("tiers") && !sw.present("instances")) return out;
  if (c.topology.kind == TopologyKind::single_switch || c.topology.kind == TopologyKind::back_to_back)
    sw.fail(sw.present("tiers") ? "tiers" : "instances",
            "the " + std::string(to_string(c.topology.kind)) + " topology has one switch or none: set its keys in switch");
  YAML::Node base(YAML::NodeType::Map);
  for (const auto& kv : root["switch"])
    if (kv.first.Scalar() != "tiers" && kv.first.Scalar() != "instances") base[kv.first.Scalar()] = kv.second;
  const TopologyGraph graph = build_graph(c.topology);
  const nlohmann::json base_keys = to_json(base).flatten();
  // Reads `layers` laid over the switch section, in order, as the section `path` of the
  // switches `names`.
  auto read = [&](const std::vector<YAML::Node>& layers, const std::string& path, const nlohmann::json& names) {
    YAML::Node merged = base;
    for (const auto& layer : layers) merged.reset(overlay(merged, layer));
    nlohmann::json& echo = c.switch_overrides[path];
    echo["switches"] = names;
    echo["keys"] = nlohmann::json::object();
    const nlohmann::json keys = to_json(merged).flatten();
    for (const auto& [pointer, value] : keys.items()) {
      const nlohmann::json was = base_keys.contains(pointer) ? base_keys[pointer] : nlohmann::json();
      std::string key = pointer.substr(1);
      std::replace(key.begin(), key.end(), '/', '.');
      if (was != value) echo["keys"][key] = {{"value", value}, {"switch", was}};
    }
    tlm_fabric::SwitchParams p;
    InNetworkReduction unused;
    read_switch(ConfigMap(merged, path, source), p, c.link.phy.framing, unused);
    p.seed = c.switch_params.seed;
    p.credit_block_bytes = c.switch_params.credit_block_bytes;
    check_buffers(c, p, ConfigMap(merged, path, source), top, credit_block);
    check_port_forwarding(c, p, ConfigMap(merged, path, source), names);
    check_input_fifo_depth(c, p, ConfigMap(merged, path, source));
    out.emplace_back(p, ConfigMap(merged, path, source));
    return p;
  };
  // One override map: a mapping of switch keys, none of them fabric-wide.
  auto checked = [&](ConfigMap parent, const std::string& key) {
    const YAML::Node n = parent.node(key);
    if (!n.IsMap()) parent.fail(key, "expected a mapping of switch keys, e.g. {buffer: voq}");
    ConfigMap keys(n, parent.path() + "." + key, source);
    for (const auto& kv : n)
      if (fabric_wide_switch_key(kv.first.Scalar()))
        keys.fail(kv.first.Scalar(), "is fabric-wide: set it in the switch section, not per tier or switch");
    return n;
  };
  std::map<int, YAML::Node> tier_nodes;
  if (sw.present("tiers")) {
    ConfigMap tiers = sw.map("tiers");
    const auto& names = switch_tier_names();
    for (std::size_t level = 0; level < names.size(); ++level) {
      if (!tiers.present(names[level])) continue;
      const bool present = std::any_of(graph.switches.begin(), graph.switches.end(),
                                       [&](const SwitchNode& s) { return s.level == static_cast<int>(level); });
      if (!present)
        tiers.fail(names[level], "the " + std::string(to_string(c.topology.kind)) + " topology has no " + names[level] +
                                     " switches");
      tier_nodes[static_cast<int>(level)] = checked(tiers, names[level]);
      nlohmann::json at_level = nlohmann::json::array();
      for (const auto& s : graph.switches)
        if (s.level == static_cast<int>(level)) at_level.push_back(s.name);
      c.tier_switch_params[static_cast<int>(level)] =
          read({tier_nodes[static_cast<int>(level)]}, "switch.tiers." + names[level], at_level);
    }
    tiers.finish();
  }
  if (sw.present("instances")) {
    ConfigMap instances = sw.map("instances");
    std::string some;
    for (const auto& s : graph.switches) {
      if (some.size() < 60) some += (some.empty() ? "" : ", ") + s.name;
      if (!instances.present(s.name)) continue;
      std::vector<YAML::Node> layers;
      if (tier_nodes.count(s.level)) layers.push_back(tier_nodes[s.level]);
      layers.push_back(checked(instances, s.name));
      c.instance_switch_params[s.name] = read(layers, "switch.instances." + s.name, nlohmann::json::array({s.name}));
    }
    for (const auto& kv : root["switch"]["instances"])
      if (!c.instance_switch_params.count(kv.first.Scalar()))
        instances.fail(kv.first.Scalar(), "no switch of that name in the " + std::string(to_string(c.topology.kind)) +
                                              " topology; its switches: " + some + " ... (fabricsim routes lists them)");
  }
  return out;
}

// The bytes of PFC headroom a port needs for the cable that needs the most (802.1Qbb
// delay budget, hw::pfc_headroom_bytes, FEC in the cable delay), with frames in cells
// of `cell`; and that cable.
std::pair<std::uint64_t, const tlm_fabric::LinkParams*> pfc_headroom_need(const FabricConfig& c, std::uint64_t cell) {
  std::uint64_t need = 0;
  const tlm_fabric::LinkParams* worst = nullptr;
  auto consider = [&](const tlm_fabric::LinkParams& l) {
    const hw::PhyTiming phy(l.phy);
    const std::uint64_t frame = (phy.frame_bytes(c.nic.mtu.in_bytes()) + cell - 1) / cell * cell;
    const std::uint64_t n = hw::pfc_headroom_bytes(phy.data_rate().bps(), (phy.propagation() + phy.fec_latency()).in_seconds(),
                                                   frame, l.pfc_response_delay.in_seconds());
    if (n > need) need = n, worst = &l;
  };
  for (const auto& l : c.topology.links) consider(l);
  if (c.topology.kind != TopologyKind::single_switch) consider(c.topology.fabric_link);
  return {need, worst};
}

// Flow control that does nothing or too little for the cables, of one set of switch
// parameters (warnings into `sw`: the run is legitimate, its lossless class may drop).
void check_switch_flow_control(FabricConfig& c, const tlm_fabric::SwitchParams& sp, ConfigMap sw) {
  using tlm_fabric::FlowControl;
  const FlowControl fc = c.link.flow_control;
  if (sp.wred.enabled && fc != FlowControl::none)
    c.warnings.push_back(sw.map("wred").warning(
        "enabled", "WRED drops only on lossy links (link.flow_control: none); on " +
                       std::string(fc == FlowControl::credit ? "credit" : "pfc") +
                       " links the switch never drops by WRED, so it has no effect"));
  if (fc != FlowControl::pfc || c.topology.kind == TopologyKind::back_to_back) return;
  const auto [need, worst] = pfc_headroom_need(c, sp.cell_bytes);
  if (!worst || sp.pfc.headroom_bytes >= need) return;
  c.warnings.push_back(sw.map("pfc").warning(
      "headroom", std::to_string(sp.pfc.headroom_bytes) + "B is below the " + std::to_string(need) +
                      "B a port needs for its longest cable (" + hw::to_string(worst->phy.cable_length) + " at " +
                      hw::to_string(hw::PhyTiming(worst->phy).data_rate()) + ": 2 x (propagation + FEC) x rate + "
                      "pfc_response_delay x rate + 2 MTU frames, IEEE 802.1Qbb): the lossless class drops what "
                      "arrives after a PAUSE beyond the headroom"));
}

// Flow control the link cannot carry out (an error), or that does nothing or too little
// for the cables, checked on the switch section and on every override that changes what
// the check reads (an override that does not warns with the switch section only).
void check_flow_control(FabricConfig& c, ConfigMap& top, const std::vector<SwitchOverride>& overrides) {
  using tlm_fabric::FlowControl;
  // PFC is an IEEE 802.1Qbb MAC control frame; InfiniBand links are flow-controlled by
  // credits per VL (IBTA vol. 1 sec. 7.9) and IB framing has no PAUSE frame.
  if (c.link.flow_control == FlowControl::pfc && c.link.phy.framing == hw::Framing::infiniband)
    top.map("link").fail("flow_control", "pfc sends Ethernet PAUSE frames (IEEE 802.1Qbb), which infiniband framing does "
                                         "not have (IB links use credits, IBTA vol. 1 sec. 7.9): use credit, or framing "
                                         "roce_v2 / ethernet");
  const tlm_fabric::SwitchParams& base = c.switch_params;
  check_switch_flow_control(c, base, top.map("switch"));
  for (const auto& [sp, section] : overrides) {
    const bool same = sp.wred.enabled == base.wred.enabled && sp.pfc.headroom_bytes == base.pfc.headroom_bytes &&
                      sp.cell_bytes == base.cell_bytes;
    if (!same) check_switch_flow_control(c, sp, section);
  }
}

// `chakra:`, exclusive with the other workloads but a generated training job, whose
// trace it runs; its traffic stays opt-in.
void read_chakra_section(ConfigMap& top, FabricConfig& c, const std::string& file) {
  c.chakra_enabled = top.present("chakra") || c.training_job.has_value();
  if (!c.chakra_enabled) return;
  for (const char* other : {"perftest", "collective", "training"})
    if (top.present(other) && !(c.training_job && std::string(other) == "training"))
      top.map(top.present("chakra") ? "chakra" : "training")
          .fail("", std::string("run either ") + (c.training_job ? "a generated training job" : "a chakra trace") +
                        " or a " + other + ", not both");
  read_chakra(top.map("chakra"), c, c.topology.endpoint_count(), file);
  c.traffic.pattern = TrafficPattern::none;
}

// Fast-forward skips the packets of collective transfers: it needs transfers to skip, and
// the fabric to carry nothing else that would have met their packets or drawn losses.
void check_fast_forward(FabricConfig& c, ConfigMap m) {
  SimulationParams& s = c.simulation;
  if (!s.fast_forward.on) return;
  if (!c.collective_enabled && !c.chakra_enabled)
    s.fast_forward_off = "no collective, training or Chakra transfers to fast-forward";
  else if (c.traffic.pattern != TrafficPattern::none)
    s.fast_forward_off = "traffic: shares the fabric; its packets would meet the skipped transfers' packets";
  else if (c.link.drop_rate > 0 || c.link.ber > 0)
    s.fast_forward_off = "link.drop_rate / link.ber lose frames: retransmissions keep transfer times from settling";
  else if (c.collective_enabled && c.collective.algorithm == testbench::CollectiveAlgorithm::sharp)
    s.fast_forward_off = "collective.algorithm sharp sends raw messages to the switches' aggregation nodes";
  if (s.fast_forward_off.empty()) return;
  s.fast_forward.on = false;
  c.warnings.push_back(m.warning("fast_forward", "has no effect: " + s.fast_forward_off));
}

FabricConfig build(ConfigDocument doc, const std::vector<Override>& overrides) {
  YAML::Node root = doc.root;
  const std::shared_ptr<ConfigSource> source = doc.source;
  const std::string name = source->file;
  ConfigMap(root, "", source);  // a top-level list or scalar is refused before --set rewrites it into a map
  for (const auto& o : overrides) source->overridden[apply_override(root, o.assignment, o.origin)] = o.origin;
  FabricConfig c;
  c.file = name;
  ConfigMap top(root, "", source);
  std::uint32_t credit_block = c.switch_params.credit_block_bytes;
  read_simulation(top.map("simulation"), c.simulation);
  read_link(top.map("link"), c.link, credit_block);
  read_switch(top.map("switch"), c.switch_params, c.link.phy.framing, c.in_network_reduction);
  c.link.waveform = c.switch_params.waveform;  // the credit managers honour switch.rtl_trace*
  if (c.link.credit_manager_impl != tlm_fabric::AllocatorImpl::tlm) {
    const auto problem = tlm_fabric::check_rtl_credit_manager(c.link.credit_manager_rtl_variant, c.switch_params.vls,
                                                              credit_block);
    if (!problem.what.empty()) top.map("switch").fail("vls", "link.credit_manager_impl " +
                                                                 std::string(to_string(c.link.credit_manager_impl)) +
                                                                 ": " + problem.what);
  }
  c.switch_params.seed = hw::mix_seed(c.simulation.seed, 1000);
  read_nic(top.map("nic"), c.nic, c.switch_params);
  for (const char* key : {"rtl_trace_format", "rtl_trace_scope", "rtl_trace_from", "rtl_trace_to", "rtl_trace_max_size"})
    if (top.map("switch").present(key) && !c.uses_rtl_blocks())
      top.map("switch").fail(key, "no RTL block to record: every `*_impl` key (switch.allocator_impl, "
                                  "switch.vl_arbiter_impl, switch.write_arbiter_impl, switch.input_fifo_impl, "
                                  "nic.vl_arbiter_impl, link.credit_manager_impl) is tlm (set one to rtl or lockstep)");
  c.switch_params.credit_block_bytes = credit_block;
  c.nic.credit_block_bytes = credit_block;
  check_input_fifo_depth(c, c.switch_params, top.map("switch"));
  read_topology(top.map("topology"), c.topology, top.map("switch"), c.switch_params.ports, c.switch_params.vls,
                c.link, c.simulation.max_memory);
  if (c.topology.kind != TopologyKind::single_switch && top.map("switch").has("ports"))
    top.map("switch").fail("ports", "is set by the topology for kind " + std::string(to_string(c.topology.kind)) +
                                        " (leaf_spine: radix, fat_tree: k, kary_ntree: k, n, rail_optimized: radix, three_tier: radix, explicit: cables)");
  check_buffers(c, c.switch_params, top.map("switch"), top, credit_block);
  check_port_forwarding(c, c.switch_params, top.map("switch"), nlohmann::json::array());
  const std::vector<SwitchOverride> switch_overrides = read_switch_overrides(root, source, top, c, credit_block);
  check_flow_control(c, top, switch_overrides);
  read_routing(top.map("routing"), c.routing);
  c.collective_enabled = top.present("collective");
  if (top.present("training") && is_training_job(top.map("training"))) {
    if (c.collective_enabled) top.map("training").fail("", "give either a training or a collective section, not both");
    c.training_job = read_training_job(top.map("training"), c.topology.endpoint_count());
    c.traffic.pattern = TrafficPattern::none;
  } else if (top.present("training")) {
    if (c.collective_enabled) top.map("training").fail("", "give either a training or a collective section, not both");
    read_training(top.map("training"), c, c.topology.endpoint_count());
    c.collective_enabled = true;
    c.traffic.pattern = TrafficPattern::none;
  }
  if (c.collective_enabled && !c.collective.training.enabled) {
    read_collective(top.map("collective"), c, c.topology.endpoint_count());
    c.traffic.pattern = TrafficPattern::none;
  }
  read_chakra_section(top, c, name);
  c.perftest_enabled = top.present("perftest");
  if (c.perftest_enabled && c.collective_enabled)
    top.map("perftest").fail("", "run either a perftest or a collective, not both");
  if (c.perftest_enabled) {
    read_perftest(top.map("perftest"), c.perftest, c.topology.endpoint_count());
    c.traffic.pattern = TrafficPattern::none;  // no background traffic unless asked for
  }
  read_server(top, c);
  read_traffic(top.map("traffic"), c.traffic, top.map("topology"), c.topology.endpoint_count(), c.simulation);
  read_output(top.map("output"), c.output, c.topology.endpoint_count());
  check_fast_forward(c, top.map("simulation"));
  top.finish();
  c.echo = to_json(root);
  return c;
}

std::vector<Override> from_set(const std::vector<std::string>& overrides) {
  std::vector<Override> out;
  for (const auto& o : overrides) out.push_back({o, ""});
  return out;
}

}  // namespace

const tlm_fabric::SwitchParams& FabricConfig::switch_params_for(const std::string& name, int level) const {
  if (const auto it = instance_switch_params.find(name); it != instance_switch_params.end()) return it->second;
  if (const auto it = tier_switch_params.find(level); it != tier_switch_params.end()) return it->second;
  return switch_params;
}

bool FabricConfig::uses_rtl_blocks() const {
  using tlm_fabric::AllocatorImpl;
  if (link.credit_manager_impl != AllocatorImpl::tlm || nic.vl_arbiter_impl != AllocatorImpl::tlm) return true;
  auto uses = [](const tlm_fabric::SwitchParams& s) {
    return s.allocator_impl != AllocatorImpl::tlm || s.vl_arbiter_impl != AllocatorImpl::tlm ||
           (s.crosses_to_output_queues() && s.write_arbiter_impl != AllocatorImpl::tlm) ||
           (s.buffer == tlm_fabric::BufferOrganisation::input_fifo && s.input_fifo_impl != AllocatorImpl::tlm);
  };
  if (uses(switch_params)) return true;
  for (const auto& [level, s] : tier_switch_params)
    if (uses(s)) return true;
  for (const auto& [name, s] : instance_switch_params)
    if (uses(s)) return true;
  return false;
}

FabricConfig load_config(const std::string& file, const std::vector<std::string>& overrides) {
  return build(load_document(file), from_set(overrides));
}

FabricConfig load_config_with_origins(const std::string& file, const std::vector<Override>& overrides) {
  return build(load_document(file), overrides);
}

FabricConfig load_config_text(const std::string& yaml, const std::string& name,
                              const std::vector<std::string>& overrides) {
  return build(parse_document(yaml, name), from_set(overrides));
}

FabricConfig load_config(const ConfigDocument& doc, const std::vector<std::string>& overrides) {
  return build(doc, from_set(overrides));
}

std::vector<double> parse_load_list(const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    double v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || !(v > 0 && v <= 1.0))
      throw ConfigError("--loads " + text, "", "expected comma-separated loads in (0, 1], got '" + item + "'");
    out.push_back(v);
  }
  if (out.empty()) throw ConfigError("--loads", "", "expected at least one load");
  return out;
}

const hw::EnumNames<TrafficPattern>& traffic_pattern_names() {
  static const hw::EnumNames<TrafficPattern> names{
      {TrafficPattern::none, "none"},       {TrafficPattern::uniform, "uniform"}, {TrafficPattern::permutation, "permutation"},
      {TrafficPattern::hotspot, "hotspot"}, {TrafficPattern::incast, "incast"},   {TrafficPattern::explicit_flows, "explicit"}};
  return names;
}

std::string_view to_string(TrafficPattern p) { return hw::name_of(traffic_pattern_names(), p); }

const hw::EnumNames<TrafficTransport>& traffic_transport_names() {
  static const hw::EnumNames<TrafficTransport> names{{TrafficTransport::raw, "raw"}, {TrafficTransport::rdma, "rdma"}};
  return names;
}

std::string_view to_string(TrafficTransport t) { return hw::name_of(traffic_transport_names(), t); }

const hw::EnumNames<RankPlacement>& rank_placement_names() {
  static const hw::EnumNames<RankPlacement> names{{RankPlacement::packed, "packed"},
                                                  {RankPlacement::spread, "spread"},
                                                  {RankPlacement::random, "random"},
                                                  {RankPlacement::rail, "rail"}};
  return names;
}

std::string_view to_string(RankPlacement p) { return hw::name_of(rank_placement_names(), p); }

}  // namespace fabricsim::sim
