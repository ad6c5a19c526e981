#include "sim/fabric.h"

#include "hw/seed.h"

#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <sstream>

namespace fabricsim::sim {

using sc_core::sc_time;
using tlm_fabric::to_sc;

namespace {

// Wire time of one message on a link: every MTU segment with its framing.
hw::Time message_wire_time(const hw::PhyTiming& link, std::uint64_t bytes, std::uint64_t mtu) {
  const std::uint64_t full = bytes / mtu;
  const std::uint64_t rest = bytes % mtu;
  std::uint64_t wire = full * link.wire_bytes(mtu);
  if (rest) wire += link.wire_bytes(rest);
  return link.serialization(wire);
}

}  // namespace

Fabric::Fabric(sc_core::sc_module_name name, const FabricConfig& config, stats::Registry& stats)
    : sc_module(name), config_(config) {
  const auto& sp = config_.switch_params;
  const int ports = sp.ports;
  const int n = config_.topology.endpoints;
  const sc_time measure_from = to_sc(config_.simulation.warmup);
  switch_ = std::make_unique<tlm_fabric::Switch>("sw0", sp, pool_, stats);
  std::vector<int> sl_to_vl(16);
  for (int sl = 0; sl < 16; ++sl) sl_to_vl[sl] = sp.vl_of(sl);
  for (int e = 0; e < n; ++e) {
    const std::string ep = "ep" + std::to_string(e);
    nics_.push_back(std::make_unique<tlm_fabric::Nic>(ep.c_str(), e, config_.nic, pool_, stats, measure_from));
    const auto& cable = config_.topology.links.at(static_cast<std::size_t>(e));
    up_.push_back(std::make_unique<tlm_fabric::Link>((ep + "_to_sw0").c_str(), cable));
    down_.push_back(std::make_unique<tlm_fabric::Link>(("sw0_to_" + ep).c_str(), cable));
    auto& nic = *nics_.back();
    auto& up = *up_.back();
    auto& down = *down_.back();
    nic.tx.bind(up.tx);
    up.rx.bind(switch_->in[e]);
    switch_->out[e].bind(down.tx);
    down.rx.bind(nic.rx);
    // Credits: each VL owns an equal share of the receiver's buffer.
    nic.attach_egress(&up, sp.vls, sl_to_vl, sp.input_buffer.in_bytes() / sp.vls);
    nic.attach_ingress(&down);
    switch_->attach_ingress(e, &up);
    switch_->attach_egress(e, &down, config_.nic.rx_buffer.in_bytes() / sp.vls);
    switch_->set_route(e, e);
  }
  for (int p = n; p < ports; ++p) {
    unused_.push_back(std::make_unique<tlm_fabric::UnconnectedPort>(("sw0_port" + std::to_string(p) + "_open").c_str()));
    switch_->out[p].bind(unused_.back()->from_egress);
    unused_.back()->to_ingress.bind(switch_->in[p]);
  }
  build_traffic();
  ingress_samples_.resize(ports);
  egress_samples_.resize(ports);
  if (config_.output.sample_interval.in_seconds() > 0) {
    SC_METHOD(sample);
    sensitive << sample_event_;
  }
}

void Fabric::sample() {
  const auto& sw = *switch_;
  sample_times_ns_.push_back(sc_core::sc_time_stamp().to_seconds() * 1e9);
  for (int p = 0; p < sw.params().ports; ++p) {
    ingress_samples_[p].push_back(sw.ingress_occupancy(p));
    egress_samples_[p].push_back(sw.egress_occupancy(p));
  }
  sample_event_.notify(to_sc(config_.output.sample_interval));
}

nlohmann::json Fabric::timeseries() const {
  nlohmann::json ports = nlohmann::json::array();
  for (std::size_t p = 0; p < ingress_samples_.size(); ++p)
    ports.push_back({{"name", std::string(switch_->name()) + ".port" + std::to_string(p)},
                     {"ingress_bytes", ingress_samples_[p]},
                     {"egress_bytes", egress_samples_[p]}});
  return {{"interval_ns", config_.output.sample_interval.in_ns()}, {"time_ns", sample_times_ns_}, {"ports", ports}};
}

void Fabric::set_packet_log(std::ostream* log) {
  for (auto& nic : nics_) nic->set_packet_log(log);
}

void Fabric::build_traffic() {
  const auto& t = config_.traffic;
  const int n = config_.topology.endpoints;
  const std::uint64_t mtu = config_.nic.mtu.in_bytes();
  const sc_time stop = to_sc(config_.simulation.duration);
  std::mt19937_64 rng(hw::mix_seed(config_.simulation.seed, 0));

  std::vector<testbench::Weighted> sizes;
  for (const auto& s : t.message_sizes) sizes.push_back({s.size.in_bytes(), s.weight});
  if (sizes.empty()) sizes.push_back({t.message_size.in_bytes(), 1.0});

  auto add = [&](int src, std::vector<testbench::Weighted> dsts, std::vector<testbench::Weighted> msg_sizes,
                 std::uint32_t flow, int sl, double load, std::uint64_t messages, hw::Time start) {
    testbench::GeneratorParams g;
    // Offered load is a fraction of the wire rate, framing included: 1.0 fills the link.
    double total = 0, wire = 0;
    for (const auto& s : msg_sizes) {
      total += s.weight;
      wire += s.weight * message_wire_time(up_[src]->timing(), s.value, mtu).in_seconds();
    }
    g.slot = to_sc(hw::Time::seconds(wire / total));
    if (g.slot == sc_core::SC_ZERO_TIME) g.slot = sc_core::sc_get_time_resolution();
    g.destinations = std::move(dsts);
    g.sizes = std::move(msg_sizes);
    g.flow = flow;
    g.sl = sl;
    g.load = load;
    g.arrival = t.arrival;
    g.burst_length = t.burst_length;
    g.start = to_sc(start);
    g.stop = stop;
    g.max_messages = messages;
    g.seed = hw::mix_seed(config_.simulation.seed, sources_.size() + 1);
    const std::string name = "gen" + std::to_string(sources_.size()) + "_ep" + std::to_string(src);
    sources_.push_back(std::make_unique<testbench::TrafficSource>(name.c_str(), *nics_[src], g));
  };
  auto others = [&](int s) {
    std::vector<testbench::Weighted> d;
    for (int x = 0; x < n; ++x)
      if (x != s) d.push_back({static_cast<std::uint64_t>(x), 1.0});
    return d;
  };
  const hw::Time zero = hw::Time::seconds(0);

  switch (t.pattern) {
    case TrafficPattern::none: break;
    case TrafficPattern::uniform:
      for (int s = 0; s < n; ++s) add(s, others(s), sizes, 0, t.sl, t.load, t.messages, zero);
      break;
    case TrafficPattern::permutation: {
      // A random derangement: every source sends to one other endpoint, each receives once.
      std::vector<int> perm(n);
      bool fixed_point = true;
      while (fixed_point) {
        std::iota(perm.begin(), perm.end(), 0);
        for (int i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng() % static_cast<std::uint64_t>(i + 1)]);
        fixed_point = false;
        for (int i = 0; i < n; ++i) fixed_point = fixed_point || perm[i] == i;
      }
      for (int s = 0; s < n; ++s)
        add(s, {{static_cast<std::uint64_t>(perm[s]), 1.0}}, sizes, 0, t.sl, t.load, t.messages, zero);
      break;
    }
    case TrafficPattern::hotspot:
      // Each source sends hotspot_fraction of its messages to the hotspots, the rest uniformly.
      for (int s = 0; s < n; ++s) {
        std::vector<testbench::Weighted> d = others(s);
        std::vector<testbench::Weighted> hot;
        for (int h : t.hotspots)
          if (h != s) hot.push_back({static_cast<std::uint64_t>(h), 0.0});
        if (hot.empty()) {
          add(s, d, sizes, 0, t.sl, t.load, t.messages, zero);
          continue;
        }
        for (auto& w : d) w.weight = (1.0 - t.hotspot_fraction) / static_cast<double>(d.size());
        for (auto& w : hot) w.weight = t.hotspot_fraction / static_cast<double>(hot.size());
        d.insert(d.end(), hot.begin(), hot.end());
        add(s, d, sizes, 0, t.sl, t.load, t.messages, zero);
      }
      break;
    case TrafficPattern::incast: {
      std::vector<int> senders = t.incast_senders;
      if (senders.empty())
        for (int s = 0; s < n; ++s)
          if (s != t.incast_target) senders.push_back(s);
      for (int s : senders)
        add(s, {{static_cast<std::uint64_t>(t.incast_target), 1.0}}, sizes, static_cast<std::uint32_t>(s), t.sl, t.load,
            t.messages, zero);
      break;
    }
    case TrafficPattern::explicit_flows:
      for (std::size_t f = 0; f < t.flows.size(); ++f) {
        const auto& fl = t.flows[f];
        add(fl.src, {{static_cast<std::uint64_t>(fl.dst), 1.0}}, {{fl.message_size.in_bytes(), 1.0}},
            static_cast<std::uint32_t>(f), fl.sl, fl.load, fl.messages, fl.start);
      }
      break;
  }
}

nlohmann::json run_simulation(const FabricConfig& config, std::ostream* packet_log) {
  stats::Registry registry;
  Fabric fabric("fabric", config, registry);
  if (packet_log) {
    *packet_log << tlm_fabric::Nic::packet_log_header();
    fabric.set_packet_log(packet_log);
  }
  const auto wall_start = std::chrono::steady_clock::now();
  sc_core::sc_start(to_sc(config.simulation.duration));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  const double end_s = sc_core::sc_time_stamp().to_seconds();
  const double window_s = end_s - config.simulation.warmup.in_seconds();
  nlohmann::json r;
  r["schema_version"] = kResultsSchemaVersion;
  r["fabricsim_version"] = "0.1.0";
  r["config_file"] = config.file;
  r["config"] = config.echo;
  r["seed"] = config.simulation.seed;
  r["simulated_time_ns"] = end_s * 1e9;
  r["measurement_window_ns"] = {config.simulation.warmup.in_ns(), end_s * 1e9};

  std::uint64_t injected = 0, delivered = 0, activations = 0, hops = 0;
  double accepted_sum = 0, offered_sum = 0;
  nlohmann::json endpoints = nlohmann::json::array();
  for (const auto& nic : fabric.nics()) {
    const std::string base = nic->name();
    auto counter = [&](const std::string& s) { return registry.find_counter(base + "." + s)->value(); };
    auto dist = [&](const std::string& s) { return registry.find_distribution(base + "." + s)->summary(); };
    injected += counter("tx_packets");
    delivered += counter("rx_packets");
    // Normalised to the link's data rate in wire bytes, like the offered load.
    const double rate = fabric.uplinks()[nic->id()]->timing().data_rate().bps();
    const double accepted = window_s > 0 ? counter("rx_window_wire_bytes") * 8.0 / window_s / rate : 0.0;
    const double offered = window_s > 0 ? counter("tx_window_wire_bytes") * 8.0 / window_s / rate : 0.0;
    accepted_sum += accepted;
    offered_sum += offered;
    nlohmann::json e;
    e["name"] = base;
    e["id"] = nic->id();
    e["tx_packets"] = counter("tx_packets");
    e["rx_packets"] = counter("rx_packets");
    e["rx_messages"] = counter("rx_messages");
    e["rx_out_of_order"] = counter("rx_out_of_order");
    e["rx_throughput_gbps"] = window_s > 0 ? counter("rx_window_payload_bytes") * 8.0 / window_s / 1e9 : 0.0;
    e["accepted_load"] = accepted;
    e["injected_load"] = offered;
    e["send_queue_messages"] = nic->send_queue_depth();
    e["packet_latency_ns"] = dist("packet_latency");
    e["network_latency_ns"] = dist("network_latency");
    e["message_latency_ns"] = dist("message_latency");
    endpoints.push_back(e);
  }
  const auto& sw = fabric.fabric_switch();
  const int vls = config.switch_params.vls;
  std::uint64_t dropped = 0;
  nlohmann::json ports = nlohmann::json::array();
  for (std::size_t p = 0; p < fabric.uplinks().size(); ++p) {
    const auto& in = fabric.uplinks()[p]->counters();
    const auto& out = fabric.downlinks()[p]->counters();
    hops += in.packets + out.packets;
    const std::string name = std::string(sw.name()) + ".port" + std::to_string(p);
    nlohmann::json per_vl = nlohmann::json::array();
    for (int vl = 0; vl < vls; ++vl) {
      const std::string pv = name + ".vl" + std::to_string(vl);
      const auto drops = registry.find_counter(pv + ".drops")->value();
      dropped += drops;
      per_vl.push_back({{"vl", vl},
                        {"drops", drops},
                        {"pause_sent", registry.find_counter(pv + ".pause_sent")->value()},
                        {"pause_received", registry.find_counter(pv + ".pause_received")->value()},
                        {"egress_paused_ns", sw.egress_paused_seconds(static_cast<int>(p), vl) * 1e9},
                        {"credit_stall_ns", sw.credit_stall_seconds(static_cast<int>(p), vl) * 1e9},
                        {"ecn_marks", registry.find_counter(pv + ".ecn_marks")->value()}});
    }
    ports.push_back({{"name", name},
                     {"ingress_utilisation", in.busy.to_seconds() / end_s},
                     {"egress_utilisation", out.busy.to_seconds() / end_s},
                     {"ingress_packets", in.packets},
                     {"egress_packets", out.packets},
                     {"accepted_load", endpoints[p]["accepted_load"]},
                     {"vls", per_vl}});
  }
  const nlohmann::json all_stats = registry.to_json();
  for (const auto& [name, value] : all_stats.items())
    if (name.size() > 12 && name.compare(name.size() - 12, 12, ".activations") == 0)
      activations += value["value"].get<std::uint64_t>();

  const double n_ep = static_cast<double>(fabric.nics().size());
  stats::Distribution network, packet;
  for (const auto& nic : fabric.nics()) {
    network.merge(*registry.find_distribution(std::string(nic->name()) + ".network_latency"));
    packet.merge(*registry.find_distribution(std::string(nic->name()) + ".packet_latency"));
  }
  r["latency"] = {{"network_latency_ns", network.summary()}, {"packet_latency_ns", packet.summary()}};
  // In flight = packets still held anywhere (pool slots not yet released):
  // counted independently, so injected = delivered + dropped + in_flight is a check.
  r["packets"] = {{"injected", injected},
                  {"delivered", delivered},
                  {"dropped", dropped},
                  {"in_flight", fabric.pool().in_use()}};
  r["throughput"] = {{"accepted_load", accepted_sum / n_ep},
                     {"injected_load", offered_sum / n_ep},
                     {"offered_load", config.traffic.load}};
  r["endpoints"] = endpoints;
  r["ports"] = ports;
  r["stats"] = all_stats;
  r["timeseries"] = fabric.timeseries();
  r["simulator"] = {{"wall_time_s", wall},
                    {"process_activations", activations},
                    {"packet_hops", hops},
                    {"packet_hops_per_wall_second", wall > 0 ? hops / wall : 0.0}};
  return r;
}

std::string summary_table(const nlohmann::json& r) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %10s %10s %12s %12s %12s %12s\n", "endpoint", "tx pkts", "rx pkts",
                "rx Gb/s", "p50 ns", "p99 ns", "max ns");
  out << line;
  for (const auto& e : r["endpoints"]) {
    const auto& l = e["network_latency_ns"];
    std::snprintf(line, sizeof line, "%-10s %10llu %10llu %12.2f %12.1f %12.1f %12.1f\n",
                  e["name"].get<std::string>().c_str(), e["tx_packets"].get<unsigned long long>(),
                  e["rx_packets"].get<unsigned long long>(), e["rx_throughput_gbps"].get<double>(),
                  l["p50"].get<double>(), l["p99"].get<double>(), l["max"].get<double>());
    out << line;
  }
  const auto& p = r["packets"];
  const auto& t = r["throughput"];
  std::snprintf(line, sizeof line, "accepted load %.4f of line rate (injected %.4f)\n", t["accepted_load"].get<double>(),
                t["injected_load"].get<double>());
  out << line;
  out << "packets: injected " << p["injected"] << ", delivered " << p["delivered"] << ", dropped "
      << p["dropped"] << ", in flight " << p["in_flight"] << "\n";
  const auto& s = r["simulator"];
  std::snprintf(line, sizeof line, "simulated %.3f us in %.3f s wall (%.0f packet-hops/s)\n",
                r["simulated_time_ns"].get<double>() / 1e3, s["wall_time_s"].get<double>(),
                s["packet_hops_per_wall_second"].get<double>());
  out << line;
  return out.str();
}

}  // namespace fabricsim::sim
