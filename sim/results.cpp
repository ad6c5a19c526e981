// run_simulation: elaborate, simulate, and turn the statistics registry and
// link counters into results.json (layout in docs/results.md, schema_version 3).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "sim/config_reader.h"
#include "sim/fabric.h"
#include "sim/gather.h"
#include "sim/huge_pages.h"
#include "sim/invariants.h"
#include "sim/process_exit.h"
#include "sim/training_config.h"
#include "tlm/csv_row.h"
#include "tlm/distributed.h"

namespace fabricsim::sim {

using sc_core::sc_time;
using tlm_fabric::to_sc;

namespace {

// One endpoint's QPs: a row each in qps.csv (`qp_log`, when given), and a summary over
// its requesters (the QPs with requests posted) for results.json: goodput in the
// measurement window and congestion-control rate as distributions, and Jain's fairness
// index of the goodputs ((sum x)^2 / (n sum x^2): 1 when every requester got the same).
nlohmann::json qp_results(int endpoint, const std::vector<tlm_fabric::QpReport>& qps, double window_s,
                          std::ostream* qp_log) {
  stats::Distribution goodput, rate;
  double sum = 0, sum_squares = 0;
  std::size_t requesters = 0;
  tlm_fabric::CsvRow row;
  for (const auto& q : qps) {
    const double gbps = window_s > 0 ? q.window_acked_bytes * 8.0 / window_s / 1e9 : 0.0;
    if (qp_log) {
      row.clear();
      row.add(endpoint).add(q.qpn).add(q.peer).add(q.peer_qpn).add(q.sl).add(q.posted).add(q.acked_bytes).add(gbps, 9);
      row.add(q.retransmitted).add(q.timeouts).add(q.cnps_received).add(q.rate_gbps, 9);
      const std::string_view line = row.line();
      qp_log->write(line.data(), static_cast<std::streamsize>(line.size()));
    }
    if (q.posted == 0) continue;
    ++requesters;
    goodput.add(gbps);
    rate.add(q.rate_gbps);
    sum += gbps;
    sum_squares += gbps * gbps;
  }
  return {{"count", qps.size()},
          {"requesters", requesters},
          {"goodput_gbps", goodput.summary()},
          {"jain_fairness", sum_squares > 0 ? nlohmann::json(sum * sum / (static_cast<double>(requesters) * sum_squares))
                                            : nlohmann::json(nullptr)},
          {"cc_rate_gbps", rate.summary()}};
}

// One endpoint's entry in results.json "endpoints": throughput and latency; its qps.csv
// rows into `qp_log`.
nlohmann::json endpoint_entry(const Fabric& fabric, const stats::Registry& registry, tlm_fabric::Nic& nic,
                              double window_s, std::ostream* qp_log) {
  const std::string base = nic.name();
  const stats::Registry::Scope own = registry.scope(base + ".");
  auto counter = [&](std::string_view s) { return own.find_counter(s)->value(); };
  auto dist = [&](std::string_view s) { return own.find_distribution(s)->summary(); };
  // Normalised to the link's data rate in wire bytes, like the offered load.
  const double rate = fabric.uplink(nic.id()).timing().data_rate().bps();
  const auto load = [&](const char* c) { return window_s > 0 ? counter(c) * 8.0 / window_s / rate : 0.0; };
  auto& rdma = nic.rdma();
  const sc_time now = sc_core::sc_time_stamp();
  const nlohmann::json qps = qp_results(nic.id(), rdma.report(now), window_s, qp_log);
  auto rc = [&](const char* s) { return counter(std::string("rdma.") + s); };
  const nlohmann::json rdma_json{
      {"qps", qps},
      {"completions", rc("completions")},
      {"retransmitted_packets", rc("retransmitted_packets")},
      {"timeouts", rc("timeouts")},
      {"acks_sent", rc("acks_sent")},
      {"naks_sent", rc("naks_sent")},
      {"cnps_sent", rc("cnps_sent")},
      {"cnps_received", rc("cnps_received")},
      {"duplicates", rc("duplicates")},
      {"completion_latency_ns", dist("rdma.completion_latency")},
      {"pcie_upstream_utilisation", now.to_seconds() > 0 ? rdma.dma().upstream_busy_s() / now.to_seconds() : 0.0},
      {"pcie_downstream_utilisation", now.to_seconds() > 0 ? rdma.dma().downstream_busy_s() / now.to_seconds() : 0.0}};
  return {{"name", base},
          {"id", nic.id()},
          {"tx_packets", counter("tx_packets")},
          {"rx_packets", counter("rx_packets")},
          {"rx_messages", counter("rx_messages")},
          {"rx_out_of_order", counter("rx_out_of_order")},
          {"rx_throughput_gbps", window_s > 0 ? counter("rx_window_payload_bytes") * 8.0 / window_s / 1e9 : 0.0},
          {"accepted_load", load("rx_window_wire_bytes")},
          {"injected_load", load("tx_window_wire_bytes")},
          {"send_queue_messages", nic.send_queue_depth()},
          {"packet_latency_ns", dist("packet_latency")},
          {"network_latency_ns", dist("network_latency")},
          {"message_latency_ns", dist("message_latency")},
          {"rx_crc_drops", counter("rx_crc_drops")},
          {"rdma", rdma_json}};
}

// Every endpoint's entry, and qps.csv: each computed where its NIC runs.
nlohmann::json endpoint_results(const Fabric& fabric, const stats::Registry& registry, double window_s,
                                std::ostream* qp_log) {
  std::vector<Entry> mine;
  std::ostringstream rows;
  for (const auto& nic : fabric.nics()) {
    if (!nic) continue;  // another process runs it
    rows.str("");
    nlohmann::json entry = endpoint_entry(fabric, registry, *nic, window_s, qp_log ? &rows : nullptr);
    mine.emplace_back(nic->id(), nlohmann::json::array({std::move(entry), rows.str()}));
  }
  nlohmann::json endpoints = nlohmann::json::array();
  for (auto& e : gather_entries(mine)) {
    if (qp_log) *qp_log << e[1].get_ref<const std::string&>();
    endpoints.push_back(std::move(e[0]));
  }
  return endpoints;
}

// Per connected switch port: link utilisation and per-VL flow-control counters (each
// switch's computed where it runs, its ingress links' counters gathered); `dropped`: the
// packets they dropped.
nlohmann::json port_results(const Fabric& fabric, const stats::Registry& registry, double end_s, std::uint64_t& dropped) {
  std::vector<Entry> mine;
  const int vls = fabric.config().switch_params.vls;
  for (std::size_t s = 0; s < fabric.switches().size(); ++s) {
    if (!fabric.runs_switch(static_cast<int>(s))) continue;
    const auto& sw = *fabric.switches()[s];
    nlohmann::json ports = nlohmann::json::array();
    for (std::size_t p = 0; p < fabric.port_links()[s].size(); ++p) {
      const PortLinks& pl = fabric.port_links()[s][p];
      if (!pl.egress) continue;
      const std::string name = std::string(sw.name()) + ".port" + std::to_string(p);
      const stats::Registry::Scope own = registry.scope(name + ".");
      nlohmann::json per_vl = nlohmann::json::array();
      for (int vl = 0; vl < vls; ++vl) {
        const std::string pv = "vl" + std::to_string(vl) + ".";
        auto counter = [&](const char* stat) { return own.find_counter(pv + stat)->value(); };
        per_vl.push_back({{"vl", vl},
                          {"drops", counter("drops")},
                          {"pause_sent", counter("pause_sent")},
                          {"pause_received", counter("pause_received")},
                          {"egress_paused_ns", sw.egress_paused_seconds(static_cast<int>(p), vl) * 1e9},
                          {"credit_stall_ns", sw.credit_stall_seconds(static_cast<int>(p), vl) * 1e9},
                          {"ecn_marks", counter("ecn_marks")}});
      }
      ports.push_back({{"name", name},
                       {"crc_drops", own.find_counter("crc_drops")->value()},
                       {"peer", pl.peer},
                       {"tier", pl.tier},
                       {"ingress_utilisation", fabric.link_counters(pl.ingress_link).busy.to_seconds() / end_s},
                       {"egress_utilisation", fabric.link_counters(pl.egress_link).busy.to_seconds() / end_s},
                       {"ingress_packets", fabric.link_counters(pl.ingress_link).packets},
                       {"egress_packets", fabric.link_counters(pl.egress_link).packets},
                       {"vls", per_vl}});
    }
    mine.emplace_back(s, std::move(ports));
  }
  nlohmann::json ports = nlohmann::json::array();
  for (auto& of_switch : gather_entries(mine))
    for (auto& port : of_switch) {
      dropped += port["crc_drops"].get<std::uint64_t>();
      for (const auto& vl : port["vls"]) dropped += vl["drops"].get<std::uint64_t>();
      ports.push_back(std::move(port));
    }
  return ports;
}

// Link utilisation per tier and its imbalance (max / mean): ECMP collisions show here.
nlohmann::json tier_results(const Fabric& fabric, double end_s) {
  std::map<std::string, std::vector<double>> by_tier;
  for (std::size_t s = 0; s < fabric.switches().size(); ++s)
    for (const PortLinks& pl : fabric.port_links()[s])
      if (pl.egress_link >= 0) by_tier[pl.tier].push_back(fabric.link_counters(pl.egress_link).busy.to_seconds() / end_s);
  nlohmann::json tiers = nlohmann::json::object();
  for (const auto& [tier, u] : by_tier) {
    double sum = 0, mx = 0, mn = 1e300;
    for (double x : u) {
      sum += x;
      mx = std::max(mx, x);
      mn = std::min(mn, x);
    }
    const double mean = sum / static_cast<double>(u.size());
    tiers[tier] = {{"links", u.size()}, {"mean_utilisation", mean}, {"max_utilisation", mx},
                   {"min_utilisation", mn}, {"imbalance", mean > 0 ? mx / mean : 0.0}};
  }
  return tiers;
}

// Checks every run: conservation fabric-wide and per switch, RDMA message
// integrity, and order on single-path routing.
nlohmann::json scoreboard(const Fabric& fabric, const nlohmann::json& packets, const nlohmann::json& endpoints,
                          const FabricConfig& config) {
  nlohmann::json checks = nlohmann::json::array();
  bool ok = true;
  auto check = [&](const std::string& name, bool pass, const std::string& detail) {
    checks.push_back({{"check", name}, {"ok", pass}, {"detail", detail}});
    ok = ok && pass;
  };
  const auto in = packets["injected"].get<std::uint64_t>(), del = packets["delivered"].get<std::uint64_t>(),
             drop = packets["dropped"].get<std::uint64_t>(), fly = packets["in_flight"].get<std::uint64_t>();
  check("packet conservation", in == del + drop + fly,
        "injected " + std::to_string(in) + " = delivered " + std::to_string(del) + " + dropped " + std::to_string(drop) +
            " + in flight " + std::to_string(fly));
  // Each switch and NIC checked where it runs.
  std::vector<Entry> unbalanced;
  for (std::size_t s = 0; s < fabric.switches().size(); ++s) {
    if (!fabric.runs_switch(static_cast<int>(s))) continue;
    const auto& sw = fabric.switches()[s];
    const auto r = sw->packets_received(), f = sw->packets_forwarded(), d = sw->packets_dropped(),
               b = sw->packets_buffered();
    if (r != f + d + b)
      unbalanced.emplace_back(s, nlohmann::json::array({std::string(sw->name()) + " conservation",
                                                        "received " + std::to_string(r) + " != forwarded " +
                                                            std::to_string(f) + " + dropped " + std::to_string(d) +
                                                            " + buffered " + std::to_string(b)}));
  }
  for (const auto& u : gather_entries(unbalanced)) check(u[0].get<std::string>(), false, u[1].get<std::string>());
  std::uint64_t corrupt = 0, messages = 0, out_of_order = 0;
  for (const auto& nic : fabric.nics()) {
    if (!nic) continue;  // another process runs it
    corrupt += nic->rdma().corrupt_messages();
    messages += nic->rdma().delivered_messages();
  }
  corrupt = tlm_fabric::distributed::sum_over_processes(corrupt);
  messages = tlm_fabric::distributed::sum_over_processes(messages);
  check("rdma message integrity", corrupt == 0,
        std::to_string(messages) + " messages delivered, " + std::to_string(corrupt) + " with a wrong byte count");
  // Per-flow paths (D-mod-k, ECMP) and no loss: raw packets must arrive in PSN order.
  const auto algo = config.routing.algorithm;
  if ((algo == hw::RoutingAlgorithm::ecmp || algo == hw::RoutingAlgorithm::d_mod_k) && drop == 0) {
    for (const auto& e : endpoints) out_of_order += e["rx_out_of_order"].get<std::uint64_t>();
    check("in-order delivery on single-path routing", out_of_order == 0,
          std::to_string(out_of_order) + " raw packets out of order");
  }
  for (const auto& inv : check_invariants(fabric)) check(inv.check, inv.ok, inv.detail);
  return {{"ok", ok}, {"checks", checks}};
}

// The statistics and the fabric that reports into them.
struct Model {
  explicit Model(const FabricConfig& config) : fabric("fabric", config, registry) {}
  stats::Registry registry;
  Fabric fabric;
};

}  // namespace

// results.json as `std::setw(2) << results` writes it (the same serializer, so the same
// bytes), made as one string and written at once: the std::ostream adapter makes a
// write call per token.
void write_results(const std::filesystem::path& dir, const nlohmann::json& results, const stats::Registry* stats) {
  write_file_atomically(dir / "results.json", [&](std::ostream& out) {
    if (!stats) {
      const std::string text = results.dump(2);
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      out << "\n";
      return;
    }
    // The same bytes with "stats" among the sections in key order, written from the registry.
    const char* separator = "{";
    bool stats_written = false;
    auto member = [&](const std::string& key) {
      out << separator << "\n  " << nlohmann::json(key).dump() << ": ";
      separator = ",";
    };
    auto write_stats = [&] {
      member("stats");
      stats->write_json(out, 1);
      stats_written = true;
    };
    for (const auto& [key, value] : results.items()) {
      if (!stats_written && key > "stats") write_stats();
      member(key);
      stats::write_nested_json(out, value.dump(2), 1);
    }
    if (!stats_written) write_stats();
    out << "\n}\n";
  });
}

std::vector<std::string> RunFiles::file_names(const FabricConfig& config) {
  const bool sampled = config.output.sample_interval.in_seconds() > 0;
  std::vector<std::string> names;
  if (config.output.packet_csv) names.push_back("packets.csv");
  names.push_back("qps.csv");
  if (sampled) names.insert(names.end(), {"qp_rates.csv", "occupancy.csv"});
  return names;
}

RunFiles::RunFiles(const std::filesystem::path& dir, const FabricConfig& config) : dir_(dir) {
  std::filesystem::remove(dir / "results.json");
  const std::vector<std::string> names = file_names(config);
  for (const char* name : {"packets.csv", "qps.csv", "qp_rates.csv", "occupancy.csv"})
    if (std::find(names.begin(), names.end(), name) == names.end()) std::filesystem::remove(dir / name);
  // An earlier run's trace files: this run writes its own after the run.
  tlm_fabric::TraceOptions every_trace;
  every_trace.perfetto = every_trace.vcd = true;
  for (const auto& name : tlm_fabric::FabricTrace::file_names(every_trace)) std::filesystem::remove(dir / name);
  for (const auto& name : names) {
    files_.push_back(std::make_unique<OutputFile>(dir / name));
  }
  const auto file = [&](const char* name) -> OutputFile* {
    for (const auto& f : files_)
      if (std::filesystem::path(f->name()).filename() == name) return f.get();
    return nullptr;
  };
  packets_ = file("packets.csv");
  qps_ = file("qps.csv");
  qp_rates_ = file("qp_rates.csv");
  occupancy_ = file("occupancy.csv");
}

RunLogs RunFiles::logs() const {
  auto out = [](OutputFile* f) -> std::ostream* { return f; };
  return {out(packets_), out(qps_), out(qp_rates_), out(occupancy_), &stats_};
}

void RunFiles::finish(nlohmann::json& results) {
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& f : files_) {
    f->close();
    listed.push_back(std::filesystem::path(f->name()).filename().string());
  }
  results["files"] = listed;
  write_results(dir_, results, stats_);
}

namespace {

// Runs the model for `duration`, or until a workload stops it. With a progress line, in
// slices that end on the same timeline as one sc_start(duration): each runs every event
// up to its end, so the results are the same (tests/test_sweep.cpp checks it).
void simulate(const sc_time& duration, Progress* progress) {
  if (!progress || !progress->enabled()) {
    tlm_fabric::simulate_for(duration);
    return;
  }
  const sc_time slice = duration / 200.0 > sc_time(1, sc_core::SC_NS) ? duration / 200.0 : sc_time(1, sc_core::SC_NS);
  const double total_ns = duration.to_seconds() * 1e9;
  while (sc_core::sc_get_status() != sc_core::SC_STOPPED && sc_core::sc_time_stamp() < duration) {
    const sc_time left = duration - sc_core::sc_time_stamp();
    tlm_fabric::simulate_for(left < slice ? left : slice);
    progress->update(sc_core::sc_time_stamp().to_seconds() * 1e9, total_ns, "");
  }
  progress->update(sc_core::sc_time_stamp().to_seconds() * 1e9, total_ns, "", true);
  progress->finish();
}

// The training steps as a text table.
std::string training_table(const FabricConfig& config, const nlohmann::json& steps) {
  std::ostringstream t;
  t << "training step (" << config.collective.training.buckets.size() << " gradient buckets, "
    << (config.collective.training.overlap ? "overlapped" : "not overlapped") << "):\n";
  char line[160];
  for (const auto& s : steps) {
    std::snprintf(line, sizeof line, "  step %.1f us = compute %.1f us + exposed communication %.1f us (%.1f%%); "
                  "communication busy %.1f us\n", s["step_time_us"].get<double>(), s["compute_us"].get<double>(),
                  s["exposed_communication_us"].get<double>(), 100 * s["communication_fraction"].get<double>(),
                  s["communication_us"].get<double>());
    t << line;
  }
  return t.str();
}

// results.json "collective" (and "training" for a training step) into `r`.
void add_collective_results(nlohmann::json& r, const Fabric& fabric, const testbench::CollectiveRunner& co,
                            const FabricConfig& config) {
  r["collective"] = {{"op", to_string(config.collective.op)},
                     {"algorithm", to_string(config.collective.algorithm)},
                     {"ranks", fabric.place_ranks()},
                     {"finished", co.finished()},
                     {"sizes", co.report()},
                     {"table", co.table()}};
  if (config.collective.training.enabled) {
    r["training"] = {{"buckets", config.collective.training.buckets.size()},
                     {"overlap", config.collective.training.overlap},
                     {"steps", co.training_report()}};
    r["collective"]["table"] = training_table(config, r["training"]["steps"]);
  }
  if (!co.finished())
    r["collective"]["error"] = "the collective did not finish within simulation.duration; raise it or lower sizes";
}

// results.json "fast_forward": what it skipped, or why it skipped nothing.
nlohmann::json fast_forward_results(const Fabric& fabric, const FabricConfig& config) {
  const SimulationParams& s = config.simulation;
  testbench::FastForwardReport skipped;
  if (const auto* co = fabric.collective()) skipped = co->fast_forward_report();
  if (const auto* ch = fabric.chakra()) skipped = ch->fast_forward_report();
  std::string why = s.fast_forward_off;
  if (why.empty() && skipped.transfers == 0)
    why = "the graphs under way never had every transfer stream steady within simulation.fast_forward_tolerance "
          "over simulation.fast_forward_window transfers";
  return {{"applied", skipped.transfers > 0},
          {"reason", why.empty() ? nlohmann::json(nullptr) : nlohmann::json(why)},
          {"window", s.fast_forward.window},
          {"tolerance", s.fast_forward.tolerance},
          {"transfers_skipped", skipped.transfers},
          {"bytes_skipped", skipped.bytes},
          {"engaged", skipped.engaged},
          {"resumed", skipped.resumed},
          {"iterations_replayed", skipped.iterations},
          {"with_skipped_transfers",
           {"collective", "chakra", "training", "flows", "packets", "throughput", "endpoints", "ports", "tiers"}},
          {"packets_simulated_only", {"latency", "timeseries"}}};
}

// Activations (how often a switch or NIC process woke) measure the simulator's
// effort, not the modelled hardware: they go to "simulator", so a change that
// wakes less keeps every model figure identical. Returns their total.
std::uint64_t count_activations(const Fabric& fabric, nlohmann::json& per_process) {
  std::uint64_t activations = 0;
  per_process = nlohmann::json::object();
  auto count = [&](const std::string& name, std::uint64_t n) {
    activations += n;
    per_process[name] = n;
  };
  for (const auto& sw : fabric.switches())
    if (sw) count(sw->name(), sw->activations());
  for (const auto& nic : fabric.nics())
    if (nic) count(nic->name(), nic->activations());
  return activations;
}

// Network and packet latency over every NIC.
nlohmann::json latency_results(const Fabric& fabric, const stats::Registry& registry) {
  // Over several processes, process 0 holds every NIC's statistics (the others, their own).
  stats::Distribution network, packet;
  for (std::size_t e = 0; e < fabric.nics().size(); ++e) {
    const stats::Registry::Scope own = registry.scope(fabric.nic_name(static_cast<int>(e)) + ".");
    if (const auto* d = own.find_distribution("network_latency")) network.merge(*d);
    if (const auto* d = own.find_distribution("packet_latency")) packet.merge(*d);
  }
  return {{"network_latency_ns", network.summary()}, {"packet_latency_ns", packet.summary()}};
}

// output.latency_breakdown: the parts of the latency of the packets delivered after
// warm-up, and of the hops each switch, tier and output port forwarded.
// The sums of the blocks this process runs (the others' zero), summed over the processes:
// every block's in every process.
std::vector<tlm_fabric::LatencySums> sums_over_processes(std::vector<tlm_fabric::LatencySums> sums) {
  if (!tlm_fabric::distributed::active()) return sums;
  std::vector<std::uint64_t> values;
  for (const auto& s : sums) {
    values.push_back(s.packets);
    values.insert(values.end(), s.ticks.begin(), s.ticks.end());
  }
  tlm_fabric::distributed::sum_over_processes(values);
  auto at = values.begin();
  for (auto& s : sums) {
    s.packets = *at++;
    for (auto& t : s.ticks) t = *at++;
  }
  return sums;
}

nlohmann::json latency_breakdown_results(const Fabric& fabric) {
  std::vector<tlm_fabric::LatencySums> nics;
  for (const auto& nic : fabric.nics())
    nics.push_back(nic ? nic->latency_sums() : tlm_fabric::LatencySums{});
  tlm_fabric::LatencySums delivered;
  for (const auto& sums : sums_over_processes(std::move(nics))) delivered += sums;
  // Every switch's ports, one after another.
  std::vector<tlm_fabric::LatencySums> ports_sums;
  std::vector<std::size_t> port_offset;
  for (std::size_t s = 0; s < fabric.switches().size(); ++s) {
    port_offset.push_back(ports_sums.size());
    if (const auto& sw = fabric.switches()[s]) ports_sums.insert(ports_sums.end(), sw->latency_sums().begin(), sw->latency_sums().end());
    else ports_sums.resize(ports_sums.size() + fabric.port_links()[s].size());  // a sum per output port
  }
  ports_sums = sums_over_processes(std::move(ports_sums));
  std::map<std::string, tlm_fabric::LatencySums> tiers;
  nlohmann::json switches = nlohmann::json::object();
  const auto& tier_names = switch_tier_names();
  for (std::size_t s = 0; s < fabric.switches().size(); ++s) {
    const int level = fabric.graph().switches[s].level;
    const std::string tier =
        level < static_cast<int>(tier_names.size()) ? tier_names[static_cast<std::size_t>(level)] : "level" + std::to_string(level);
    tlm_fabric::LatencySums own;
    nlohmann::json ports = nlohmann::json::object();
    const auto first = ports_sums.begin() + static_cast<std::ptrdiff_t>(port_offset[s]);
    const std::vector<tlm_fabric::LatencySums> per_port(first, first + static_cast<std::ptrdiff_t>(
                                                                           fabric.port_links()[s].size()));
    for (std::size_t p = 0; p < per_port.size(); ++p) {
      if (per_port[p].packets == 0) continue;
      own += per_port[p];
      ports[std::to_string(p)] = per_port[p].to_json(false);
    }
    tiers[tier] += own;
    nlohmann::json sw = own.to_json(false);
    sw["tier"] = tier;
    sw["ports"] = std::move(ports);
    switches[fabric.switch_name(static_cast<int>(s))] = std::move(sw);
  }
  nlohmann::json by_tier = nlohmann::json::object();
  for (const auto& [tier, sums] : tiers) by_tier[tier] = sums.to_json(false);
  return {{"delivered", delivered.to_json(true)}, {"tiers", by_tier}, {"switches", switches}};
}

/// Packet and load totals over the endpoints.
struct EndpointTotals {
  std::uint64_t injected = 0, delivered = 0, dropped = 0;
  double accepted_sum = 0, offered_sum = 0;
};

EndpointTotals endpoint_totals(const nlohmann::json& endpoints) {
  EndpointTotals t;
  for (const auto& e : endpoints) {
    t.dropped += e["rx_crc_drops"].get<std::uint64_t>();
    t.injected += e["tx_packets"].get<std::uint64_t>();
    t.delivered += e["rx_packets"].get<std::uint64_t>();
    t.accepted_sum += e["accepted_load"].get<double>();
    t.offered_sum += e["injected_load"].get<double>();
  }
  return t;
}

// The run's identity: versions, configuration, seed, simulated time, topology size.
nlohmann::json results_header(const FabricConfig& config, const Fabric& fabric, double end_s) {
  nlohmann::json r;
  r["schema_version"] = kResultsSchemaVersion;
  r["fabricsim_version"] = "0.1.0";
  r["config_file"] = config.file;
  r["config"] = config.echo;
  r["seed"] = config.simulation.seed;
  r["warnings"] = config.warnings;
  r["simulated_time_ns"] = end_s * 1e9;
  r["measurement_window_ns"] = {config.simulation.warmup.in_ns(), end_s * 1e9};
  r["topology"] = {{"kind", to_string(config.topology.kind)},
                   {"switches", fabric.switches().size()},
                   {"endpoints", fabric.graph().endpoints()},
                   {"aggregation_ports", fabric.nics().size() - static_cast<std::size_t>(fabric.graph().endpoints())}};
  r["switch_parameters"] = overridden_switches(config);
  return r;
}

// results.json "chakra": the executor's report, its means over ranks, its table, and
// why it did not finish. The communication fraction is the exposed communication over
// the iteration time (docs/results.md).
nlohmann::json chakra_results(const chakra::Executor& ex) {
  nlohmann::json c = ex.report();
  double compute = 0, exposed = 0;
  for (const auto& rank : c["per_rank"]) {
    compute += rank["compute_us"].get<double>();
    exposed += rank["exposed_communication_us"].get<double>();
  }
  const double ranks = static_cast<double>(std::max<std::size_t>(1, c["per_rank"].size()));
  const double iteration = c["iteration_time_us"].get<double>();
  c["compute_mean_us"] = compute / ranks;
  c["exposed_communication_mean_us"] = exposed / ranks;
  c["communication_fraction"] = iteration > 0 ? exposed / ranks / iteration : 0.0;
  c["table"] = ex.table();
  if (!ex.finished() && !c.contains("error"))
    c["error"] = "the trace did not finish within simulation.duration; raise it";
  return c;
}

nlohmann::json perftest_results(const FabricConfig& config, const testbench::Perftest& pt) {
  nlohmann::json p = {{"test", to_string(config.perftest.kind)}, {"finished", pt.finished()}, {"sizes", pt.report()},
                      {"table", pt.table()}};
  if (!pt.finished()) p["error"] = "perftest did not finish within simulation.duration; raise it or lower iterations";
  return p;
}

/// A scope entry (switch.rtl_trace_scope) that names no RTL block of the elaborated fabric
/// records nothing: most likely a typo, so say so before the run.
void warn_unmatched_scopes(const FabricConfig& config, Fabric& fabric) {
  const tlm_fabric::WaveformOptions& w = config.switch_params.waveform;
  if (!w.enabled() || w.scopes.empty()) return;
  std::vector<tlm_fabric::RtlBlockName> blocks;
  for (const auto& sw : fabric.switches())
    for (auto& b : sw->rtl_blocks()) blocks.push_back(std::move(b));
  for (const auto& nic : fabric.nics())
    for (auto& b : nic->rtl_blocks()) blocks.push_back(std::move(b));
  for (const auto& s : tlm_fabric::unmatched_scopes(w, blocks))
    std::cerr << "fabricsim: warning: switch.rtl_trace_scope '" << s << "' matches no RTL block of the fabric "
              << (blocks.empty() ? std::string("(it has none)")
                                 : "(e.g. " + blocks.front().hierarchy + ", model " + blocks.front().model + ")")
              << "; nothing is recorded for it\n";
}

/// The fabric trace's scopes that match nothing in the fabric: a warning each (the trace
/// leaves them out; with no other scope it holds nothing).
void warn_unmatched_trace_scopes(const Fabric& fabric) {
  const tlm_fabric::FabricTrace* trace = fabric.trace();
  if (trace == nullptr) return;
  std::string examples;
  for (const auto& name : trace->scope_examples()) examples += (examples.empty() ? "" : ", ") + name;
  for (const auto& s : trace->unmatched_scopes())
    std::cerr << "fabricsim: warning: output.trace_scope '" << s
              << "' matches no switch, switch port or NIC of the fabric (e.g. " << examples
              << "); nothing is recorded for it\n";
}

/// After the run: endpoint and flow filters that kept no packet in scope leave a trace
/// without packets, a warning naming them.
void warn_empty_trace_filters(const FabricConfig& config, const Fabric& fabric) {
  const tlm_fabric::FabricTrace* trace = fabric.trace();
  if (trace == nullptr || trace->kept_packets()) return;
  const tlm_fabric::TraceOptions& t = config.output.trace;
  std::string keys;
  auto add = [&keys](const std::string& text) { keys += (keys.empty() ? "" : ", ") + text; };
  for (int e : t.endpoints) add("output.trace_endpoint " + std::to_string(e));
  for (const auto& [src, dst] : t.flows) add("output.trace_flow " + std::to_string(src) + ":" + std::to_string(dst));
  std::cerr << "fabricsim: warning: " << keys << ": no packet of theirs crossed a switch port or NIC "
            << (t.scopes.empty() ? std::string("in the run") : "in output.trace_scope") << "; the trace holds no packet\n";
}

/// Writes the fabric trace's files (output.trace) and lists them; null when it is off.
nlohmann::json finish_trace(const FabricConfig& config, Fabric& fabric) {
  if (!config.output.trace.enabled()) return nullptr;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& rec : fabric.finish_trace())
    files.push_back({{"kind", rec.kind}, {"file", rec.file}, {"events", rec.events}, {"limit_reached", rec.limit_reached}});
  return files;
}

/// Closes the RTL blocks' waveforms (a VCD is converted now) and lists them; null when
/// switch.rtl_trace is off, so results without waveforms keep their shape.
nlohmann::json finish_waveforms(const FabricConfig& config, Fabric& fabric) {
  if (!config.switch_params.waveform.enabled()) return nullptr;
  nlohmann::json out = nlohmann::json::array();
  auto add = [&out](const tlm_fabric::RtlWaveformRecord& rec) {
    out.push_back({{"block", rec.block}, {"file", rec.file}, {"limit_reached", rec.limit_reached}});
  };
  for (const auto& sw : fabric.switches())
    for (const auto& rec : sw->finish_waveforms()) add(rec);
  for (const auto& nic : fabric.nics())
    for (const auto& rec : nic->finish_waveforms()) add(rec);
  return out;
}

}  // namespace

nlohmann::json run_simulation(const FabricConfig& config, const RunLogs& logs, Progress* progress,
                              ModelTeardown teardown) {
  // A workload that ends the run itself (perftest) calls sc_stop: not news.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  const auto elaboration_start = std::chrono::steady_clock::now();
  std::unique_ptr<Model> model;
  try {
    model = std::make_unique<Model>(config);
  } catch (const std::exception& e) {
    // Every process meets the same error: its configuration's, or a block's agreed in Fabric's constructor.
    if (tlm_fabric::distributed::active()) throw tlm_fabric::distributed::AgreedError(e.what());
    throw;
  }
  const double elaboration =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - elaboration_start).count();
  const std::optional<std::uint64_t> elaboration_peak = peak_resident_bytes();
  const stats::Registry& registry = model->registry;
  Fabric& fabric = model->fabric;
  warn_unmatched_scopes(config, fabric);
  if (logs.packets) fabric.set_packet_log(*logs.packets);
  if (logs.qp_rates) fabric.set_qp_rate_log(*logs.qp_rates);
  if (logs.occupancy) fabric.set_occupancy_log(*logs.occupancy);
  if (config.output.trace.enabled()) {
    fabric.set_trace(config.output.trace, config.output.directory);
    warn_unmatched_trace_scopes(fabric);
  }
  // The model is built: back it with huge pages before the first packet moves.
  const std::size_t huge_page_bytes = use_huge_pages();
  const auto wall_start = std::chrono::steady_clock::now();
  simulate(to_sc(config.simulation.duration), progress);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  fabric.finish_packet_log();
  // Admissions a switch folded into a wake after the end, due before it. A run that ends
  // at its duration leaves the events at the end itself alone (the kernel's rule); a run
  // the model stopped ran every wake due at that instant first.
  const bool stopped = sc_core::sc_get_status() == sc_core::SC_STOPPED;
  for (const auto& sw : fabric.switches())
    if (sw) sw->settle_admissions(sc_core::sc_time_stamp(), stopped);
  if (tlm_fabric::distributed::active()) gather_over_processes(model->registry, fabric);

  nlohmann::json waveforms = finish_waveforms(config, fabric);
  const nlohmann::json trace = finish_trace(config, fabric);
  warn_empty_trace_filters(config, fabric);
  const double end_s = sc_core::sc_time_stamp().to_seconds();
  const double window_s = end_s - config.simulation.warmup.in_seconds();
  nlohmann::json r = results_header(config, fabric, end_s);

  if (logs.qps) *logs.qps << "endpoint,qpn,peer,peer_qpn,sl,posted_requests,acked_bytes,goodput_gbps,"
                             "retransmitted_packets,timeouts,cnps_received,cc_rate_gbps\n";
  nlohmann::json endpoints = endpoint_results(fabric, registry, window_s, logs.qps);
  if (logs.qps) logs.qps->flush();
  if (logs.qp_rates) logs.qp_rates->flush();
  if (logs.occupancy) logs.occupancy->flush();
  EndpointTotals totals = endpoint_totals(endpoints);
  nlohmann::json ports = port_results(fabric, registry, end_s, totals.dropped);
  std::uint64_t hops = 0;
  for (std::size_t k = 0; k < fabric.all_links().size(); ++k) hops += fabric.link_counters(static_cast<int>(k)).packets;
  // Left out of the tree when the caller writes it from the registry, which outlives the run.
  const bool stats_streamed =
      logs.stats && teardown == ModelTeardown::skip && config.switch_params.waveform.dir.empty();
  nlohmann::json all_stats = stats_streamed ? nlohmann::json() : registry.to_json();
  nlohmann::json per_process;
  const std::uint64_t activations = count_activations(fabric, per_process);
  const double n_ep = static_cast<double>(fabric.nics().size());
  // In flight = packets still held anywhere (pool slots not yet released):
  // counted independently, so injected = delivered + dropped + in_flight is a check.
  r["packets"] = {{"injected", totals.injected},
                  {"delivered", totals.delivered},
                  {"dropped", totals.dropped},
                  {"in_flight", tlm_fabric::distributed::sum_over_processes(std::uint64_t{fabric.pool().in_use()})}};
  r["throughput"] = {{"accepted_load", totals.accepted_sum / n_ep},
                     {"injected_load", totals.offered_sum / n_ep},
                     {"offered_load", config.traffic.pattern == TrafficPattern::none ? nlohmann::json(nullptr)
                                                                                      : nlohmann::json(config.traffic.load)}};
  r["latency"] = latency_results(fabric, registry);
  if (config.output.latency_breakdown) r["latency_breakdown"] = latency_breakdown_results(fabric);
  // The large sections move into the results (no second copy at the peak, which is here).
  r["endpoints"] = std::move(endpoints);
  r["ports"] = std::move(ports);
  r["tiers"] = tier_results(fabric, end_s);
  r["flows"] = fabric.flows().to_json();
  if (stats_streamed)
    *logs.stats = &registry;
  else
    r["stats"] = std::move(all_stats);
  r["scoreboard"] = scoreboard(fabric, r["packets"], r["endpoints"], config);
  if (!fabric.stall_report().is_null()) r["stall"] = fabric.stall_report();
  r["timeseries"] = fabric.timeseries();
  if (!trace.is_null()) r["trace"] = trace;
  if (const auto* co = fabric.collective()) add_collective_results(r, fabric, *co, config);
  if (const auto* pt = fabric.perftest()) r["perftest"] = perftest_results(config, *pt);
  if (const auto* ch = fabric.chakra()) {
    r["chakra"] = chakra_results(*ch);
    if (config.training_job) r["chakra"]["job"] = training_job_summary(*config.training_job, *fabric.chakra_trace());
  }
  if (config.simulation.fast_forward_asked) r["fast_forward"] = fast_forward_results(fabric, config);
  // Read last, with the rest of the results built: what the run took but the writing.
  const std::optional<std::uint64_t> peak_memory = peak_resident_bytes();
  r["simulator"] = {{"wall_time_s", wall},
                    {"elaboration_s", elaboration},
                    {"elaboration_peak_memory_bytes",
                     elaboration_peak ? nlohmann::json(*elaboration_peak) : nlohmann::json(nullptr)},
                    {"process_activations", activations},
                    {"activations", per_process},
                    {"delta_cycles", tlm_fabric::delta_count()},
                    {"packet_hops", hops},
                    {"packet_hops_per_wall_second", wall > 0 ? hops / wall : 0.0},
                    {"huge_page_bytes", huge_page_bytes},
                    {"malloc_huge_pages", malloc_huge_pages()},
                    {"peak_memory_bytes", peak_memory ? nlohmann::json(*peak_memory) : nlohmann::json(nullptr)},
                    {"lanes", tlm_fabric::WakeQueue::instance().lanes()},
                    {"parallel_windows", tlm_fabric::WakeQueue::instance().windows()},
                    {"build", FABRICSIM_BUILD_FLAVOUR}};
  if (!waveforms.is_null()) r["simulator"]["waveforms"] = std::move(waveforms);
  if (const auto* t = fabric.trace()) r["simulator"]["trace_events_held_max"] = t->held_high_water();
  // RTL waveforms (switch.rtl_trace) are finished above; a traced model is still taken
  // apart, so a block that failed to close its file reports it from its destructor.
  if (teardown == ModelTeardown::skip && config.switch_params.waveform.dir.empty())
    leave_to_process_exit(std::move(model));
  return r;
}

std::string summary_table(const nlohmann::json& r) {
  std::ostringstream out;
  for (const char* workload : {"perftest", "collective", "chakra"}) {
    if (!r.contains(workload)) continue;
    out << r[workload]["table"].get<std::string>();
    if (r[workload].contains("error")) out << "error: " << r[workload]["error"].get<std::string>() << "\n";
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %10s %10s %12s %12s %12s %12s\n", "endpoint", "tx pkts", "rx pkts",
                "rx Gb/s", "p50 ns", "p99 ns", "max ns");
  out << line;
  const auto& eps = r["endpoints"];
  // Large fabrics: the first 16 endpoints, then the fabric-wide summary.
  for (std::size_t i = 0; i < eps.size() && i < 16; ++i) {
    const auto& e = eps[i];
    const auto& l = e["network_latency_ns"];
    std::snprintf(line, sizeof line, "%-10s %10llu %10llu %12.2f %12.1f %12.1f %12.1f\n",
                  e["name"].get<std::string>().c_str(), e["tx_packets"].get<unsigned long long>(),
                  e["rx_packets"].get<unsigned long long>(), e["rx_throughput_gbps"].get<double>(),
                  l["p50"].get<double>(), l["p99"].get<double>(), l["max"].get<double>());
    out << line;
  }
  if (eps.size() > 16) out << "... (" << eps.size() - 16 << " more endpoints in results.json)\n";
  const auto& l = r["latency"]["network_latency_ns"];
  std::snprintf(line, sizeof line, "all endpoints: network latency p50 %.1f ns, p99 %.1f ns, p99.9 %.1f ns, max %.1f ns\n",
                l["p50"].get<double>(), l["p99"].get<double>(), l["p99.9"].get<double>(), l["max"].get<double>());
  out << line;
  if (r.contains("flows") && r["flows"]["count"].get<std::size_t>() > 0) {
    const auto& f = r["flows"];
    std::snprintf(line, sizeof line,
                  "flows: %zu completed; FCT p50 %.2f us, p99 %.2f us; slowdown p50 %.2f, p99 %.2f, p99.9 %.2f\n",
                  f["count"].get<std::size_t>(), f["fct_us"]["p50"].get<double>(), f["fct_us"]["p99"].get<double>(),
                  f["slowdown"]["p50"].get<double>(), f["slowdown"]["p99"].get<double>(),
                  f["slowdown"]["p99.9"].get<double>());
    out << line;
  }
  const auto& t = r["throughput"];
  std::snprintf(line, sizeof line, "accepted load %.4f of line rate (injected %.4f)\n", t["accepted_load"].get<double>(),
                t["injected_load"].get<double>());
  out << line;
  const auto& p = r["packets"];
  out << "packets: injected " << p["injected"] << ", delivered " << p["delivered"] << ", dropped " << p["dropped"]
      << ", in flight " << p["in_flight"] << "\n";
  for (const auto& c : r["scoreboard"]["checks"])
    if (!c["ok"].get<bool>()) out << "SCOREBOARD FAILED: " << c["check"].get<std::string>() << ": " << c["detail"].get<std::string>() << "\n";
  if (r.contains("stall")) {
    const auto& st = r["stall"];
    out << "STALLED at " << st["time_ns"].get<double>() / 1e3 << " us: " << st["diagnosis"].get<std::string>() << "\n";
    if (!st["cycle"].empty()) {
      out << "  cycle:";
      for (const auto& n : st["cycle"]) out << " " << n.get<std::string>();
      out << "\n  " << st["advice"].get<std::string>() << "\n";
    }
  }
  const auto& s = r["simulator"];
  std::snprintf(line, sizeof line, "simulated %.3f us in %.3f s wall (%.0f packet-hops/s)\n",
                r["simulated_time_ns"].get<double>() / 1e3, s["wall_time_s"].get<double>(),
                s["packet_hops_per_wall_second"].get<double>());
  out << line;
  return out.str();
}

nlohmann::json overridden_switches(const FabricConfig& config) {
  // A tier's section first, then a named switch's, which holds its tier's keys too.
  nlohmann::json out = nlohmann::json::object();
  for (const char* prefix : {"switch.tiers.", "switch.instances."})
    for (const auto& [section, o] : config.switch_overrides.items()) {
      if (section.rfind(prefix, 0) != 0) continue;
      for (const auto& name : o["switches"]) out[name.get<std::string>()] = {{"override", section}, {"keys", o["keys"]}};
    }
  return out;
}

std::string route_tables(const FabricConfig& config) {
  const TopologyGraph g = build_graph(config.topology);
  const auto routes = minimal_routes(g);
  const nlohmann::json overridden = overridden_switches(config);
  auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  std::ostringstream out;
  out << "# topology " << to_string(config.topology.kind) << ": " << g.switches.size() << " switches, "
      << g.endpoints() << " endpoints; routing " << hw::to_string(config.routing.algorithm) << "\n";
  for (std::size_t s = 0; s < g.switches.size(); ++s) {
    out << g.switches[s].name << " (radix " << g.switches[s].radix << ")\n";
    if (const auto o = overridden.find(g.switches[s].name); o != overridden.end())
      for (const auto& [key, v] : (*o)["keys"].items())
        out << "  " << (*o)["override"].get<std::string>() << ": " << key << " = " << text(v["value"]) << " (switch section: "
            << (v["switch"].is_null() ? "default" : text(v["switch"])) << ")\n";
    for (int e = 0; e < g.endpoints(); ++e) {
      out << "  ep" << e << " ->";
      for (int p : routes.ports(static_cast<int>(s), e)) out << " p" << p;
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace fabricsim::sim
