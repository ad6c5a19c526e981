#include "sim/config.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "hw/arbiter.h"
#include "sim/config_reader.h"

namespace fabricsim::sim {

namespace {

using hw::Bandwidth;
using hw::Frequency;
using hw::Length;
using hw::Size;
using hw::Time;

template <class E>
using NameTable = std::vector<std::pair<std::string, E>>;

// An enum chosen by name; the error lists every valid name.
template <class E>
E choose(ConfigMap& m, const std::string& key, E def, const NameTable<E>& table) {
  std::vector<std::string> names;
  std::string def_name;
  for (const auto& [n, e] : table) {
    names.push_back(n);
    if (e == def) def_name = n;
  }
  const std::string v = m.choice(key, def_name, names);
  for (const auto& [n, e] : table)
    if (n == v) return e;
  return def;
}

template <class E>
NameTable<E> table_of(const std::vector<E>& all) {
  NameTable<E> t;
  for (E e : all) t.emplace_back(std::string(hw::to_string(e)), e);
  return t;
}

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

const Time kMaxTime = Time::seconds(10);

void read_simulation(ConfigMap m, SimulationParams& s) {
  s.seed = static_cast<std::uint64_t>(m.integer("seed", 1, 0, INT64_MAX));
  s.duration = m.time("duration", s.duration, Time::ns(1), kMaxTime);
  s.warmup = m.time("warmup", s.warmup, Time::seconds(0), kMaxTime);
  if (!(s.warmup < s.duration)) m.fail("warmup", "must be shorter than simulation.duration (" + hw::to_string(s.duration) + ")");
  m.finish();
}

void read_link(ConfigMap m, tlm_fabric::LinkParams& l, std::uint32_t& credit_block) {
  auto& p = l.phy;
  p.framing = choose(m, "framing", p.framing, table_of(hw::all_framings()));
  p.lanes = static_cast<int>(m.integer("lanes", p.lanes, 1, 16));
  p.lane_rate = m.bandwidth("lane_rate", p.lane_rate, Bandwidth::gbps(0.001), Bandwidth::gbps(1000));
  p.modulation = choose(m, "modulation", p.modulation, table_of(hw::all_modulations()));
  p.encoding = choose(m, "encoding", p.encoding, table_of(hw::all_encodings()));
  p.fec = choose(m, "fec", p.fec, table_of(hw::all_fec_kinds()));
  p.fec_interleave = static_cast<int>(m.integer("fec_interleave", p.fec_interleave, 1, 4));
  p.fec_decoder_latency = m.time("fec_decoder_latency", p.fec_decoder_latency, Time::seconds(0), Time::us(10));
  p.cable_length = m.length("cable_length", p.cable_length, Length::metres(0), Length::metres(100000));
  p.propagation_per_metre = m.time("propagation_per_metre", p.propagation_per_metre, Time::ns(0.1), Time::ns(100));
  l.flow_control_bytes = static_cast<std::uint32_t>(
      m.size("flow_control_bytes", Size::bytes(l.flow_control_bytes), Size::bytes(1), Size::kib(1)).in_bytes());
  credit_block = static_cast<std::uint32_t>(
      m.size("credit_block", Size::bytes(credit_block), Size::bytes(1), Size::kib(4)).in_bytes());
  m.finish();
}

void read_switch(ConfigMap m, tlm_fabric::SwitchParams& s) {
  s.ports = static_cast<int>(m.integer("ports", s.ports, 2, 256));
  s.core_clock = m.frequency("core_clock", s.core_clock, Frequency::hertz(1e6), Frequency::ghz(10));
  s.pipeline_cycles = static_cast<int>(m.integer("pipeline_cycles", s.pipeline_cycles, 0, 100000));
  s.forwarding = choose(m, "forwarding", s.forwarding,
                        NameTable<tlm_fabric::ForwardingMode>{{"cut_through", tlm_fabric::ForwardingMode::cut_through},
                                                              {"store_and_forward", tlm_fabric::ForwardingMode::store_and_forward}});
  s.input_buffer = m.size("input_buffer", s.input_buffer, Size::bytes(64), Size::kib(1024 * 1024));
  s.credit_return_latency = m.time("credit_return_latency", s.credit_return_latency, Time::seconds(0), Time::us(100));
  s.arbiter = m.choice("arbiter", s.arbiter, hw::arbiter_names());
  m.finish();
}

void read_nic(ConfigMap m, tlm_fabric::NicParams& n) {
  n.mtu = m.size("mtu", n.mtu, Size::bytes(64), Size::bytes(9216));
  n.rx_buffer = m.size("rx_buffer", n.rx_buffer, Size::bytes(64), Size::kib(1024 * 1024));
  n.credit_return_latency = m.time("credit_return_latency", n.credit_return_latency, Time::seconds(0), Time::us(100));
  m.finish();
}

void read_topology(ConfigMap m, TopologyParams& t, ConfigMap switch_section, int ports) {
  t.kind = choose(m, "kind", t.kind, NameTable<TopologyKind>{{"single_switch", TopologyKind::single_switch}});
  t.endpoints = static_cast<int>(m.integer("endpoints", t.endpoints, 1, 256));
  // Blame the key the user wrote: endpoints if given, else switch.ports.
  if (t.endpoints > ports)
    (m.has("endpoints") ? m : switch_section).fail(m.has("endpoints") ? "endpoints" : "ports", "a single switch with switch.ports = " + std::to_string(ports) + " can attach at most " +
                            std::to_string(ports) + " endpoints, got " + std::to_string(t.endpoints));
  m.finish();
}

void read_traffic(ConfigMap m, TrafficParams& t, ConfigMap topology, int endpoints, const SimulationParams& sim) {
  t.pattern = choose(m, "pattern", t.pattern,
                     NameTable<TrafficPattern>{{"none", TrafficPattern::none},
                                               {"uniform", TrafficPattern::uniform},
                                               {"permutation", TrafficPattern::permutation},
                                               {"explicit", TrafficPattern::explicit_flows}});
  t.load = m.number("load", t.load, 1e-6, 1.0);
  t.message_size = m.size("message_size", t.message_size, Size::bytes(1), Size::kib(1024 * 1024));
  t.arrival = choose(m, "arrival", t.arrival,
                     NameTable<testbench::ArrivalProcess>{{"poisson", testbench::ArrivalProcess::poisson},
                                                          {"periodic", testbench::ArrivalProcess::periodic}});
  t.messages = static_cast<std::uint64_t>(m.integer("messages", 0, 0, INT64_MAX));
  auto flows = m.list_of_maps("flows");
  if (!flows.empty() && t.pattern != TrafficPattern::explicit_flows)
    m.fail("flows", "flows are only read with pattern: explicit");
  if (t.pattern == TrafficPattern::explicit_flows && flows.empty())
    m.fail("pattern", "pattern: explicit needs a non-empty 'flows' list");
  if ((t.pattern == TrafficPattern::uniform || t.pattern == TrafficPattern::permutation) && endpoints < 2)
    (m.has("pattern") ? m : topology).fail(m.has("pattern") ? "pattern" : "endpoints", "pattern " + std::string(to_string(t.pattern)) + " needs at least 2 endpoints");
  for (auto& f : flows) {
    FlowParams fp;
    fp.src = static_cast<int>(f.required_integer("src", 0, endpoints - 1));
    fp.dst = static_cast<int>(f.required_integer("dst", 0, endpoints - 1));
    if (fp.src == fp.dst) f.fail("dst", "a flow must go to another endpoint (src = dst = " + std::to_string(fp.src) + ")");
    fp.load = f.number("load", t.load, 1e-6, 1.0);
    fp.message_size = f.size("message_size", t.message_size, Size::bytes(1), Size::kib(1024 * 1024));
    fp.messages = static_cast<std::uint64_t>(f.integer("messages", static_cast<std::int64_t>(t.messages), 0, INT64_MAX));
    fp.start = f.time("start", fp.start, Time::seconds(0), kMaxTime);
    if (!(fp.start < sim.duration)) f.fail("start", "must be before simulation.duration (" + hw::to_string(sim.duration) + ")");
    f.finish();
    t.flows.push_back(fp);
  }
  m.finish();
}

void read_output(ConfigMap m, OutputParams& o) {
  o.directory = m.string("directory", o.directory);
  if (o.directory.empty()) m.fail("directory", "must not be empty");
  o.packet_csv = m.boolean("packet_csv", o.packet_csv);
  m.finish();
}

// Each receive buffer must hold one credit block and one whole MTU frame,
// otherwise a transmitter can never collect the credits to start a packet.
void check_buffers(const FabricConfig& c, ConfigMap& top, std::uint32_t credit_block) {
  const std::uint64_t frame = hw::PhyTiming(c.link.phy).frame_bytes(c.nic.mtu.in_bytes());
  const std::uint64_t need = std::max<std::uint64_t>((frame + credit_block - 1) / credit_block, 1) * credit_block;
  const std::string why = "must hold one " + hw::to_string(c.nic.mtu) + " MTU frame (" + std::to_string(frame) +
                          "B with " + std::string(hw::to_string(c.link.phy.framing)) + " framing) in " +
                          std::to_string(credit_block) + "B credit blocks: at least " + std::to_string(need) + "B";
  auto check = [&](const char* section, const char* key, hw::Size size) {
    if (size.in_bytes() / credit_block * credit_block >= need) return;
    ConfigMap s = top.map(section);
    if (s.has(key)) s.fail(key, why + ", got " + hw::to_string(size));
    top.map("nic").fail("mtu", std::string("too large for ") + section + "." + key + " = " + hw::to_string(size) + ": it " + why);
  };
  check("switch", "input_buffer", c.switch_params.input_buffer);
  check("nic", "rx_buffer", c.nic.rx_buffer);
}

FabricConfig build(YAML::Node root, const std::string& name, const std::vector<std::string>& overrides) {
  auto source = std::make_shared<ConfigSource>();
  source->file = name;
  for (const auto& o : overrides) source->overridden.insert(apply_override(root, o));
  FabricConfig c;
  c.file = name;
  ConfigMap top(root, "", source);
  std::uint32_t credit_block = c.switch_params.credit_block_bytes;
  read_simulation(top.map("simulation"), c.simulation);
  read_link(top.map("link"), c.link, credit_block);
  read_switch(top.map("switch"), c.switch_params);
  read_nic(top.map("nic"), c.nic);
  c.switch_params.credit_block_bytes = credit_block;
  c.nic.credit_block_bytes = credit_block;
  check_buffers(c, top, credit_block);
  read_topology(top.map("topology"), c.topology, top.map("switch"), c.switch_params.ports);
  read_traffic(top.map("traffic"), c.traffic, top.map("topology"), c.topology.endpoints, c.simulation);
  read_output(top.map("output"), c.output);
  top.finish();
  c.echo = to_json(root);
  return c;
}

}  // namespace

FabricConfig load_config(const std::string& file, const std::vector<std::string>& overrides) {
  return build(load_yaml_file(file), file, overrides);
}

FabricConfig load_config_text(const std::string& yaml, const std::string& name,
                              const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1), "",
                      "YAML syntax error: " + e.msg);
  }
  return build(root, name, overrides);
}

std::string_view to_string(TrafficPattern p) {
  switch (p) {
    case TrafficPattern::none: return "none";
    case TrafficPattern::uniform: return "uniform";
    case TrafficPattern::permutation: return "permutation";
    case TrafficPattern::explicit_flows: return "explicit";
  }
  return "?";
}

std::string_view to_string(testbench::ArrivalProcess a) {
  return a == testbench::ArrivalProcess::poisson ? "poisson" : "periodic";
}

}  // namespace fabricsim::sim
