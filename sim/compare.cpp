#include "sim/compare.h"


#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "hw/units.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "sim/fabric.h"
#include "sim/output_file.h"
#include "sim/process_pool.h"
#include "sim/python_script.h"

namespace fabricsim::sim {

namespace fs = std::filesystem;

namespace {

constexpr int kCompareSchemaVersion = 1;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Workload sections a configuration may carry; compare replaces them with its own.
const char* const kWorkloadSections[] = {"traffic", "perftest", "collective", "training", "chakra"};

std::string fmt(double v, int decimals) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// One line of the comparison table: a metric and its value per configuration.
struct Row {
  std::string workload;
  std::string metric;
  std::string unit;
  int decimals = 2;
  std::vector<double> values;  // per configuration; NaN: not available
  std::string note;            // shown instead of values when set (e.g. a TODO)
  std::string summary;         // the metric without size-dependent parts (sweep summary)
};

/// The common topology of every run of one comparison point.
struct TopologySource {
  std::string text;  // YAML of the topology map (for the results and the run documents)
  std::string file;  // where its nodes come from, for error locations ("" : use `node` as given)
  std::function<YAML::Node()> load;  // a fresh node per run (a document is changed by --set)
  int switch_ports = 0;              // single_switch of a --sizes point: the switch's radix
};

/// The endpoints the latency and incast workloads use, from the topology graph.
struct Endpoints {
  int count = 0;
  int client = 0, server = 1;  // write_lat pair: on different leaves where there are leaves
  int path_switches = 0;       // switches the latency pair's packets cross
  int switches = 0;
};

Endpoints pick_endpoints(const TopologyParams& t) {
  Endpoints e;
  const TopologyGraph g = build_graph(t);
  e.count = g.endpoints();
  e.switches = static_cast<int>(g.switches.size());
  if (g.switches.empty() || e.count < 2) return e;
  const int home = g.host_switch[0];
  for (int i = 1; i < e.count; ++i)
    if (g.host_switch[i] != home) {
      e.server = i;
      break;
    }
  // Switches on the minimal path.
  e.path_switches = switch_distances(g, home)[g.host_switch[e.server]] + 1;
  return e;
}

// --job's training: and server: sections into `doc`, each node keeping its file and line
// for errors. A section in both the configuration and the job is refused.
void add_job_sections(ConfigDocument& doc, const std::string& job) {
  const ConfigDocument j = load_document(job);
  ConfigMap top(j.root, "", j.source);
  if (!top.present("training"))
    top.fail("training", "missing: --job takes the file's training: section (a generated job or a fixed-time step) "
                         "and its server: section");
  for (const char* key : {"training", "server"}) {
    if (!top.present(key)) continue;
    if (doc.root[key].IsDefined() && !doc.root[key].IsNull())
      ConfigMap(doc.root, "", doc.source).fail(key, "given here and in --job " + job + ": give it in one of them");
    const YAML::Node n = j.root[key];
    doc.source->add_nodes(n, j.source->file_of(n));
    doc.root[key] = n;
  }
}

// The configuration document with its workload sections removed and the common topology
// in; with `job` (the training workload of --job) that file's training: and server:.
ConfigDocument prepare_document(const std::string& config, const TopologySource& topo, const std::string& job = "") {
  ConfigDocument doc = load_document(config);
  if (!doc.root.IsMap()) throw ConfigError(config, "(top level)", "expected a mapping of keys to values");
  for (const char* k : kWorkloadSections) doc.root.remove(k);
  YAML::Node t = topo.load();
  if (!topo.file.empty() && topo.file != config) doc.source->add_nodes(t, topo.file);
  doc.root["topology"] = t;
  if (topo.switch_ports > 0) doc.root["switch"]["ports"] = topo.switch_ports;
  if (!job.empty()) add_job_sections(doc, job);
  return doc;
}

// A --sizes point builds servers of --gpus-per-server GPUs: a scale-up domain spans that many.
void set_server_size(ConfigDocument& doc, const CompareOptions& o) {
  const YAML::Node& root = doc.root;
  if (!root["server"].IsDefined() || !root["server"].IsMap() || !root["server"]["scale_up"].IsDefined()) return;
  const int g = o.shape.gpus_per_server;
  if (root["server"]["gpus"].IsDefined() && !root["server"]["gpus"].IsNull()) {
    ConfigMap server = ConfigMap(doc.root, "", doc.source).map("server");
    if (server.integer("gpus", g, 1, 1024) != g)
      server.fail("gpus", "differs from --gpus-per-server " + std::to_string(g) +
                              ", the server size compare --sizes builds each cluster of; give one value");
  }
  doc.root["server"]["gpus"] = g;
}

/// One simulation to run.
struct Job {
  std::string tag;        // file stem under runs/
  FabricConfig config;
  fs::path result_file;
  nlohmann::json result;  // filled after the run
  double wall_s = 0;
  double ideal_us = 0;    // incast: every sender's bytes through the target's link at line rate
  std::uint64_t expected_messages = 0;  // incast: messages the senders post
};

// Runs the jobs in child processes (a fresh SystemC kernel each), up to `parallel` at once.
void run_jobs(std::vector<Job>& jobs, int parallel) {
  std::size_t done = 0;
  run_process_pool(
      jobs.size(), parallel,
      [&](std::size_t i) {
        const Job& j = jobs[i];
        nlohmann::json r;
        try {
          r = run_simulation(j.config, {}, nullptr, ModelTeardown::skip);  // the job's process exits next
        } catch (const std::exception& e) {
          r = {{"error", e.what()}};
        }
        try {
          write_file_atomically(j.result_file, [&](std::ostream& out) { out << r.dump(1) << "\n"; });
          return 0;
        } catch (const std::exception& e) {
          std::fprintf(stderr, "fabricsim: compare: %s\n", e.what());
          return 1;
        }
      },
      [&](std::size_t i, int status, double wall_s) {
        Job& j = jobs[i];
        j.wall_s = wall_s;
        std::ifstream in(j.result_file);
        if (!exited_ok(status) || !in) {
          j.result = {{"error", "child process crashed (status " + std::to_string(status) + ")"}};
        } else {
          try {
            j.result = nlohmann::json::parse(in);
          } catch (const std::exception& e) {
            j.result = {{"error", std::string("unreadable results: ") + e.what()}};
          }
        }
        ++done;
        std::printf("compare: [%zu/%zu] %-40s %6.1f s%s\n", done, jobs.size(), j.tag.c_str(), j.wall_s,
                    j.result.contains("error") ? "  (error)" : "");
        std::fflush(stdout);
      });
}

double get(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : kNaN;
}

// Metrics of one run, by workload.
nlohmann::json metrics(const std::string& workload, const nlohmann::json& r, const Endpoints& ep, const Job& job) {
  nlohmann::json m = nlohmann::json::object();
  if (r.contains("error")) return {{"error", r["error"]}};
  if (workload == "latency") {
    if (!r.contains("perftest")) return {{"error", "no perftest results"}};
    if (r["perftest"].contains("error")) m["error"] = r["perftest"]["error"];
    nlohmann::json sizes = nlohmann::json::array();
    for (const auto& s : r["perftest"]["sizes"])
      sizes.push_back({{"bytes", s["bytes"]}, {"p50_us", s["t_typical_us"]}, {"p99_us", s["p99_us"]},
                       {"p99_9_us", s["p99_9_us"]}, {"avg_us", s["t_avg_us"]}, {"max_us", s["t_max_us"]}});
    m["sizes"] = sizes;
    m["client"] = ep.client;
    m["server"] = ep.server;
    m["path_switches"] = ep.path_switches;
  } else if (workload == "allreduce") {
    if (!r.contains("collective")) return {{"error", "no collective results"}};
    const auto& c = r["collective"];
    if (c.contains("error")) m["error"] = c["error"];
    if (!c["sizes"].empty()) {
      const auto& s = c["sizes"][0];
      m["bytes"] = s["bytes"];
      m["time_us"] = s["time_us"];
      m["algbw_GBps"] = s["algbw_GBps"];
      m["busbw_GBps"] = s["busbw_GBps"];
    }
    m["ranks"] = c["ranks"].size();
  } else if (workload == "incast") {
    std::uint64_t pauses = 0, marks = 0, retx = 0, timeouts = 0, cnps = 0, completions = 0;
    double paused_ns = 0;
    for (const auto& p : r["ports"])
      for (const auto& v : p["vls"]) {
        pauses += v["pause_sent"].get<std::uint64_t>();
        marks += v["ecn_marks"].get<std::uint64_t>();
        paused_ns += v["egress_paused_ns"].get<double>();
      }
    const int target = 0;
    double slowest_ns = 0, sum_ns = 0;
    for (const auto& e : r["endpoints"]) {
      const auto& rd = e["rdma"];
      retx += rd["retransmitted_packets"].get<std::uint64_t>();
      timeouts += rd["timeouts"].get<std::uint64_t>();
      cnps += rd["cnps_received"].get<std::uint64_t>();
      if (e["id"].get<int>() == target) continue;
      const auto& cl = rd["completion_latency_ns"];
      const auto n = rd["completions"].get<std::uint64_t>();
      completions += n;
      if (n > 0) {
        slowest_ns = std::max(slowest_ns, get(cl, "max"));
        sum_ns += get(cl, "mean") * static_cast<double>(n);
      }
    }
    m["drops"] = r["packets"]["dropped"];
    m["pause_frames"] = pauses;
    m["egress_paused_us"] = paused_ns / 1e3;
    m["ecn_marks"] = marks;
    m["cnps"] = cnps;
    m["retransmitted_packets"] = retx;
    m["timeouts"] = timeouts;
    m["messages"] = job.expected_messages;
    m["completed_messages"] = completions;
    m["slowest_completion_us"] = slowest_ns / 1e3;
    m["mean_completion_us"] = completions ? sum_ns / static_cast<double>(completions) / 1e3 : kNaN;
    m["ideal_us"] = job.ideal_us;
    m["senders"] = ep.count - 1;
    if (completions < job.expected_messages)
      m["error"] = std::to_string(job.expected_messages - completions) + " of " + std::to_string(job.expected_messages) +
                   " incast messages did not complete within simulation.duration";
  } else if (workload == "training" && r.contains("chakra") && r["chakra"].contains("job")) {
    // A generated job: per iteration, compute and exposed communication the mean over ranks.
    const auto& c = r["chakra"];
    if (c.contains("error")) m["error"] = c["error"];
    const double iterations = c["job"]["iterations"].get<double>();
    m["step_time_us"] = c["iteration_time_us"].get<double>() / iterations;
    m["compute_us"] = c["compute_mean_us"].get<double>() / iterations;
    m["exposed_communication_us"] = c["exposed_communication_mean_us"].get<double>() / iterations;
    m["communication_fraction"] = c["communication_fraction"];
    m["job"] = c["job"];
  } else if (workload == "training") {
    if (!r.contains("training") || r["training"]["steps"].empty()) return {{"error", "no training results"}};
    if (r.contains("collective") && r["collective"].contains("error")) m["error"] = r["collective"]["error"];
    const auto& s = r["training"]["steps"][0];
    m["step_time_us"] = s["step_time_us"];
    m["compute_us"] = s["compute_us"];
    m["communication_us"] = s["communication_us"];
    m["exposed_communication_us"] = s["exposed_communication_us"];
    m["communication_fraction"] = s["communication_fraction"];
  }
  return m;
}

// Table rows of one comparison point from the per-run metrics.
std::vector<Row> make_rows(const std::vector<std::string>& workloads, const std::vector<std::string>& labels,
                           const nlohmann::json& runs, const Endpoints& ep, const CompareOptions& o, bool training_known) {
  std::vector<Row> rows;
  auto value = [&](const std::string& label, const std::string& w, const std::function<double(const nlohmann::json&)>& f) {
    if (!runs.contains(label) || !runs[label].contains(w)) return kNaN;
    const auto& m = runs[label][w];
    try {
      return f(m);
    } catch (const std::exception&) {
      return kNaN;
    }
  };
  std::string generic;  // prefix of the size-independent summary name, set per workload below
  auto add = [&](const std::string& w, const std::string& metric, const std::string& unit, int decimals,
                 const std::function<double(const nlohmann::json&)>& f) {
    const auto colon = metric.find(": ");
    Row row{w, metric, unit, decimals, {}, "", colon == std::string::npos ? generic : generic + metric.substr(colon + 2)};
    for (const auto& l : labels) row.values.push_back(value(l, w, f));
    rows.push_back(row);
  };
  for (const auto& w : workloads) {
    if (w == "latency") {
      const std::string path = "ep" + std::to_string(ep.client) + "->ep" + std::to_string(ep.server) + ", " +
                               std::to_string(ep.path_switches) + " switch" + (ep.path_switches == 1 ? "" : "es");
      for (std::uint64_t bytes : {2u, 8u})
        for (const auto& [key, name] : std::vector<std::pair<std::string, std::string>>{
                 {"p50_us", "p50"}, {"p99_us", "p99"}, {"p99_9_us", "p99.9"}}) {
          generic = "RDMA write latency " + std::to_string(bytes) + " B " + name + " (endpoints on different leaves)";
          add(w, "RDMA write latency " + std::to_string(bytes) + " B " + name + " (" + path + ")", "us", 3,
              [&, bytes, key = key](const nlohmann::json& m) {
                for (const auto& s : m.at("sizes"))
                  if (s.at("bytes").get<std::uint64_t>() == bytes) return s.at(key).get<double>();
                return kNaN;
              });
        }
    } else if (w == "allreduce") {
      const std::string what = "AllReduce ring " + o.allreduce_size + ", " + std::to_string(ep.count) + " ranks";
      generic = "AllReduce ring " + o.allreduce_size + ", every endpoint a rank: ";
      add(w, what + ": completion time", "us", 1, [](const nlohmann::json& m) { return m.at("time_us").get<double>(); });
      add(w, what + ": bus bandwidth", "GB/s", 2, [](const nlohmann::json& m) { return m.at("busbw_GBps").get<double>(); });
    } else if (w == "incast") {
      const std::string what = "incast " + std::to_string(ep.count - 1) + ":1, one " + o.incast_bytes + " WRITE each: ";
      generic = "(n-1):1 incast, one " + o.incast_bytes + " WRITE per sender: ";
      auto num = [](const char* k) { return [k](const nlohmann::json& m) { return m.at(k).get<double>(); }; };
      add(w, what + "all done (last completion)", "us", 1, num("slowest_completion_us"));
      add(w, what + "line-rate bound", "us", 1, num("ideal_us"));
      add(w, what + "mean sender completion", "us", 1, num("mean_completion_us"));
      add(w, what + "drops", "packets", 0, num("drops"));
      add(w, what + "PFC pauses sent", "frames", 0, num("pause_frames"));
      add(w, what + "retransmitted packets", "packets", 0, num("retransmitted_packets"));
      add(w, what + "retransmission timeouts", "events", 0, num("timeouts"));
      add(w, what + "ECN/FECN marks", "packets", 0, num("ecn_marks"));
    } else if (w == "training") {
      if (!training_known) {
        Row row{w, "training step", "", 0, std::vector<double>(labels.size(), kNaN),
                "TODO: not modelled yet (this build has no training: section)", "training step"};
        rows.push_back(row);
        continue;
      }
      generic = "training step: ";
      add(w, "training step: time", "us", 1, [](const nlohmann::json& m) { return m.at("step_time_us").get<double>(); });
      add(w, "training step: exposed communication", "us", 1,
          [](const nlohmann::json& m) { return m.at("exposed_communication_us").get<double>(); });
      add(w, "training step: communication fraction", "%", 1,
          [](const nlohmann::json& m) { return 100 * m.at("communication_fraction").get<double>(); });
    }
  }
  return rows;
}

std::string table_text(const std::vector<Row>& rows, const std::vector<std::string>& labels) {
  std::size_t width = 20;
  for (const auto& r : rows) width = std::max(width, r.metric.size() + r.unit.size() + 3);
  std::ostringstream out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), "metric [unit]");
  out << buf;
  for (const auto& l : labels) {
    std::snprintf(buf, sizeof buf, " %16s", l.c_str());
    out << buf;
  }
  out << "\n";
  for (const auto& r : rows) {
    const std::string name = r.metric + (r.unit.empty() ? "" : " [" + r.unit + "]");
    std::snprintf(buf, sizeof buf, "%-*s", static_cast<int>(width), name.c_str());
    out << buf;
    if (!r.note.empty()) {
      out << " " << r.note << "\n";
      continue;
    }
    for (double v : r.values) {
      std::snprintf(buf, sizeof buf, " %16s", fmt(v, r.decimals).c_str());
      out << buf;
    }
    out << "\n";
  }
  return out.str();
}

nlohmann::json rows_json(const std::vector<Row>& rows, const std::vector<std::string>& labels) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json values = nlohmann::json::object();
    for (std::size_t i = 0; i < labels.size(); ++i)
      values[labels[i]] = std::isnan(r.values[i]) ? nlohmann::json(nullptr) : nlohmann::json(r.values[i]);
    nlohmann::json j{{"workload", r.workload}, {"metric", r.metric}, {"summary", r.summary}, {"unit", r.unit},
                     {"values", values}};
    if (!r.note.empty()) j["note"] = r.note;
    out.push_back(j);
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

const std::vector<std::string>& compare_workload_names() {
  static const std::vector<std::string> names{"latency", "allreduce", "incast", "training"};
  return names;
}

namespace {

// --workload in the order given, without repeats; every workload when none is given.
std::vector<std::string> selected_workloads(const CompareOptions& o) {
  std::vector<std::string> workloads = o.workloads.empty() ? compare_workload_names() : std::vector<std::string>{};
  for (const auto& w : o.workloads) {
    const auto& all = compare_workload_names();
    if (std::find(all.begin(), all.end(), w) == all.end()) {
      std::string allowed;
      for (const auto& a : all) allowed += (allowed.empty() ? "" : ", ") + a;
      throw ConfigError("--workload " + w, "", "unknown workload; allowed: " + allowed);
    }
    if (std::find(workloads.begin(), workloads.end(), w) == workloads.end()) workloads.push_back(w);
  }
  return workloads;
}

void check_workload_options(const CompareOptions& o) {
  for (const auto& [opt, text] : {std::pair<std::string, std::string>{"--allreduce-size", o.allreduce_size},
                                  {"--incast-bytes", o.incast_bytes}})
    try {
      if (hw::parse_size(text).in_bytes() == 0) throw hw::UnitError("must be above 0B");
    } catch (const hw::UnitError& e) {
      throw ConfigError(opt + " " + text, "", e.what());
    }
  if (o.latency_iterations < 1) throw ConfigError("--latency-iterations", "", "must be at least 1");
}

// Column labels: file stems, made unique.
std::vector<std::string> column_labels(const std::vector<std::string>& configs) {
  std::vector<std::string> labels;
  for (const auto& c : configs) {
    std::string l = fs::path(c).stem().string();
    for (int k = 2; std::find(labels.begin(), labels.end(), l) != labels.end(); ++k)
      l = fs::path(c).stem().string() + "_" + std::to_string(k);
    labels.push_back(l);
  }
  return labels;
}

/// One comparison point: a cluster shape every configuration runs on.
struct Point {
  std::string name;
  TopologySource topo;
  bool sized = false;  // a --sizes point, built from CompareOptions::shape
};

TopologySource inline_topology(const std::string& text) {
  return {text, "", [text] { return YAML::Load(text); }};
}

// The fabric of each --sizes entry (fabric_for_size).
std::vector<Point> sized_points(const std::vector<int>& sizes, const ClusterShape& shape) {
  std::vector<Point> points;
  for (int n : sizes) {
    TopologyParams t;
    try {
      t = fabric_for_size(n, shape);
    } catch (const std::invalid_argument& e) {
      throw ConfigError("--sizes " + std::to_string(n), "", e.what());
    }
    TopologySource topo = inline_topology(topology_yaml(t));
    if (t.kind == TopologyKind::single_switch) topo.switch_ports = shape.radix;
    points.push_back({"n" + std::to_string(n), topo, true});
  }
  return points;
}

// --topology: a YAML file, or YAML text; either the topology map or a document with one.
Point topology_option_point(const std::string& topology) {
  std::error_code ec;
  if (fs::is_regular_file(topology, ec)) {
    const std::string file = topology;
    auto load = [file] {
      YAML::Node n = load_yaml_file(file);
      if (n.IsMap() && n["topology"].IsDefined()) n = n["topology"];
      if (!n.IsMap()) throw ConfigError(file, "topology", "expected a mapping such as {kind: leaf_spine, radix: 8}");
      return n;
    };
    load();
    std::ostringstream text;
    text << YAML::Dump(load());
    return {"topology", {text.str(), file, load}};
  }
  const std::string text = topology;
  auto load = [text] {
    YAML::Node n;
    try {
      n = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      throw ConfigError("--topology", "", "YAML syntax error: " + e.msg);
    }
    if (n.IsMap() && n["topology"].IsDefined()) n = n["topology"];
    if (!n.IsMap())
      throw ConfigError("--topology", "topology", "expected a YAML file or a mapping such as '{kind: leaf_spine, radix: 8}'");
    return n;
  };
  load();
  return {"topology", {text, "--topology", load}};
}

// The first configuration's topology, or a small leaf-spine when it has none.
Point first_config_point(const std::string& first, std::vector<std::string>& notes) {
  const ConfigDocument doc = load_document(first);
  if (doc.root.IsMap() && doc.root["topology"].IsDefined() && doc.root["topology"].IsMap()) {
    auto load = [first] { return load_document(first).root["topology"]; };
    return {"topology", {YAML::Dump(load()), first, load}};
  }
  const std::string text = "{kind: leaf_spine, radix: 8, oversubscription: 1}";
  notes.push_back("no topology in " + first + " and no --topology: using " + text);
  return {"topology", inline_topology(text)};
}

// The comparison points: one topology, or one leaf-spine per --sizes entry.
std::vector<Point> comparison_points(const CompareOptions& o, std::vector<std::string>& notes) {
  if (!o.sizes.empty()) {
    std::vector<Point> points = sized_points(o.sizes, o.shape);
    if (!o.topology.empty()) notes.push_back("--sizes replaces --topology with the fabric of each size");
    return points;
  }
  if (!o.topology.empty()) return {topology_option_point(o.topology)};
  return {first_config_point(o.configs.front(), notes)};
}

// Base overrides of every run, then the workload's, then the user's --set (last).
const std::vector<std::string>& base_overrides() {
  static const std::vector<std::string> base{"output.sample_interval=0s", "simulation.warmup=0s"};
  return base;
}

// The point's shape, from the first configuration; clears `training_known` when this
// build does not know the training workload.
Endpoints probe_point(const CompareOptions& o, const Point& point, const std::vector<std::string>& workloads,
                      bool& training_known) {
  std::vector<std::string> probe = base_overrides();
  probe.push_back("traffic.pattern=none");
  for (const auto& s : o.overrides) probe.push_back(s);
  const FabricConfig c = load_config(prepare_document(o.configs.front(), point.topo), probe);
  const Endpoints ep = pick_endpoints(c.topology);
  if (ep.count < 2) throw ConfigError("compare", "topology", "needs at least 2 endpoints");
  if (std::find(workloads.begin(), workloads.end(), "training") != workloads.end()) {
    try {
      std::vector<std::string> t = base_overrides();
      t.push_back("training={steps: 1}");
      load_config(prepare_document(o.configs.front(), point.topo), t);
    } catch (const ConfigError& e) {
      if (e.key() != "training") throw;
      training_known = false;
    }
  }
  return ep;
}

// The overrides that set up workload `w` (after the base ones).
void add_workload_overrides(std::vector<std::string>& ov, const std::string& w, const CompareOptions& o,
                            const Endpoints& ep) {
  if (w == "latency") {
    ov.push_back("simulation.duration=1s");  // upper bound: perftest stops the run when done
    ov.push_back("perftest={test: write_lat, sizes: [2B, 4B, 8B], iterations: " +
                 std::to_string(o.latency_iterations) + ", client: " + std::to_string(ep.client) +
                 ", server: " + std::to_string(ep.server) + "}");
  } else if (w == "allreduce") {
    ov.push_back("simulation.duration=1s");  // upper bound: the collective stops the run when done
    ov.push_back("collective={op: allreduce, algorithm: ring, sizes: [" + o.allreduce_size + "], iterations: 1}");
  } else if (w == "incast") {
    // Every other endpoint posts one RDMA WRITE of incast_bytes to endpoint 0 at t = 0
    // (periodic arrival: the first message at the start). Upper bound on the run: 4x
    // the bytes at 100 Gb/s, at least 1 ms; the senders' completions say when it is done.
    const double total_bits = 8.0 * static_cast<double>(hw::parse_size(o.incast_bytes).in_bytes()) * (ep.count - 1);
    ov.push_back("simulation.duration=" + fmt(std::max(1e3, 4 * total_bits / 100e9 * 1e6), 3) + "us");
    ov.push_back("traffic={pattern: incast, incast_target: 0, transport: rdma, arrival: periodic, load: 1.0, "
                 "message_size: " + o.incast_bytes + ", messages: 1}");
  } else if (w == "training") {
    ov.push_back("simulation.duration=1s");
    // A small data-parallel step (assumption): 16 MiB of gradients in 4 MiB buckets.
    ov.push_back("training={forward: 250us, backward: 500us, optimizer: 25us, gradient_size: 16MiB, "
                 "bucket_size: 4MiB, steps: 1, overlap: true, algorithm: ring}");
  }
}

// Incast: the line-rate bound, every sender's packets through the target's link back to back.
void set_incast_bound(Job& j, const Endpoints& ep) {
  const hw::PhyTiming phy(j.config.topology.links.at(0).phy);
  const std::uint64_t msg = j.config.traffic.message_size.in_bytes(), mtu = j.config.nic.mtu.in_bytes();
  const std::uint64_t wire = (msg / mtu) * phy.wire_bytes(mtu) + (msg % mtu ? phy.wire_bytes(msg % mtu) : 0);
  j.expected_messages = j.config.traffic.messages * static_cast<std::uint64_t>(ep.count - 1);
  j.ideal_us = static_cast<double>(wire * j.expected_messages) * 8 / phy.data_rate().bps() * 1e6;
}

/// The runs of one comparison point, with the (label, workload) of each.
struct PointJobs {
  std::vector<Job> jobs;
  std::vector<std::pair<std::string, std::string>> keys;
};

// One job per (configuration, workload); each run's document goes to runs/TAG.yaml.
PointJobs make_jobs(const CompareOptions& o, const Point& point, bool tag_point, const std::vector<std::string>& labels,
                    const std::vector<std::string>& workloads, const Endpoints& ep, bool training_known,
                    const fs::path& out) {
  PointJobs p;
  for (std::size_t ci = 0; ci < o.configs.size(); ++ci) {
    for (const auto& w : workloads) {
      if (w == "training" && !training_known) continue;
      // The training workload: --job's when given, else compare's step.
      const bool job = w == "training" && !o.job.empty();
      std::vector<std::string> ov = base_overrides();
      if (job)
        ov.push_back("simulation.duration=1s");  // an upper bound: the run ends when the job does
      else
        add_workload_overrides(ov, w, o, ep);
      const std::string tag = (tag_point ? point.name + "_" : "") + labels[ci] + "_" + w;
      ov.push_back("output.directory=" + yaml_quoted((out / "runs" / tag).string()));
      for (const auto& s : o.overrides) ov.push_back(s);
      ConfigDocument doc = prepare_document(o.configs[ci], point.topo, job ? o.job : "");
      if (point.sized) set_server_size(doc, o);
      Job j{tag, load_config(doc, ov), out / "runs" / (tag + ".json"), nullptr, 0, 0, 0};
      if (w == "incast") set_incast_bound(j, ep);
      write_file(out / "runs" / (tag + ".yaml"), "# generated by fabricsim compare from " + o.configs[ci] +
                                                     " (workload " + w + "); fabricsim run this file to reproduce\n" +
                                                     YAML::Dump(doc.root) + "\n");
      p.jobs.push_back(std::move(j));
      p.keys.emplace_back(labels[ci], w);
    }
  }
  return p;
}

// The metrics of every finished run, by label and workload; `errors` gets the failed ones.
nlohmann::json collect_runs(const PointJobs& p, const Endpoints& ep, std::vector<std::string>& errors) {
  nlohmann::json runs = nlohmann::json::object();
  for (std::size_t i = 0; i < p.jobs.size(); ++i) {
    const auto& [label, w] = p.keys[i];
    nlohmann::json m = metrics(w, p.jobs[i].result, ep, p.jobs[i]);
    m["wall_time_s"] = p.jobs[i].wall_s;
    m["results"] = (fs::path("runs") / (p.jobs[i].tag + ".json")).string();
    if (m.contains("error")) errors.push_back(label + " " + w + ": " + m["error"].get<std::string>());
    runs[label][w] = m;
  }
  return runs;
}

/// One column's fabric: what it is built of and what its training step gives.
struct FabricColumn {
  bool known = false;        // a job of this configuration ran at this point
  bool infiniband = false;   // IB framing on the host links
  BillOfMaterials bom;
  std::optional<FabricCost> cost;
  double step_us = kNaN, comm_fraction = kNaN;
};

// Per configuration: the bill of materials of the point's graph under the cabling rule
// (the host cable's length from that configuration) and, with prices, its cost.
// Known before the runs, so that a prices file that does not fit fails before them.
FabricColumn fabric_column(const CompareOptions& o, bool sized, const TopologyParams& t,
                           const std::optional<Prices>& prices) {
  FabricColumn col;
  {
    const TopologyGraph g = build_graph(t);
    int radix = sized ? o.shape.radix : 0;
    for (const auto& sw : g.switches) radix = std::max(radix, sw.radix);
    const HostLayout layout = sized ? o.shape.layout
                              : t.kind == TopologyKind::rail_optimized ? HostLayout::rail
                              : t.kind == TopologyKind::three_tier     ? t.three_tier.layout
                                                                       : HostLayout::leaf;
    CablingRule rule;
    if (o.host_cable != "auto") rule.host = *hw::value_of(cable_medium_names(), o.host_cable);
    const hw::PhyParams& host = t.links.at(0).phy;
    rule.host_cable = host.cable_length;
    col.known = true;
    col.infiniband = host.framing == hw::Framing::infiniband;
    col.bom = bill_of_materials(g, radix, layout, rule);
    if (prices) col.cost = fabric_cost(col.bom, *prices, col.infiniband, hw::PhyTiming(host).data_rate());
  }
  return col;
}

std::vector<FabricColumn> fabric_columns(const CompareOptions& o, const Point& point, const PointJobs& p,
                                         const std::vector<std::string>& labels, const std::optional<Prices>& prices) {
  std::vector<FabricColumn> cols(labels.size());
  for (std::size_t ci = 0; ci < labels.size(); ++ci)
    for (std::size_t i = 0; i < p.jobs.size(); ++i)
      if (p.keys[i].first == labels[ci]) {
        cols[ci] = fabric_column(o, point.sized, p.jobs[i].config.topology, prices);
        break;
      }
  return cols;
}

// The training step of each column, from the runs.
void add_training(std::vector<FabricColumn>& cols, const std::vector<std::string>& labels, const nlohmann::json& runs) {
  for (std::size_t ci = 0; ci < labels.size(); ++ci)
    if (runs.contains(labels[ci]) && runs[labels[ci]].contains("training")) {
      const auto& m = runs[labels[ci]]["training"];
      cols[ci].step_us = get(m, "step_time_us");
      cols[ci].comm_fraction = get(m, "communication_fraction");
    }
}

// Rows of the fabric columns: training rate and its ratio to the first InfiniBand column
// (else the first column), the threshold mark, the bill of materials and the cost.
std::vector<Row> fabric_rows(const std::vector<FabricColumn>& cols, const CompareOptions& o,
                             const std::optional<Prices>& prices) {
  std::vector<Row> rows;
  auto add = [&](const std::string& w, const std::string& metric, const std::string& unit, int decimals,
                 const std::function<double(const FabricColumn&)>& f) {
    Row r{w, metric, unit, decimals, {}, "", metric};
    for (const auto& c : cols) r.values.push_back(c.known ? f(c) : kNaN);
    rows.push_back(r);
  };
  std::size_t base = 0;
  for (std::size_t i = 0; i < cols.size(); ++i)
    if (cols[i].known && cols[i].infiniband) {
      base = i;
      break;
    }
  const bool training = std::any_of(cols.begin(), cols.end(), [](const FabricColumn& c) { return !std::isnan(c.step_us); });
  auto rate = [](const FabricColumn& c) { return 1e6 / c.step_us; };
  if (training) {
    add("training", "training: iteration rate", "iterations/s", 1, rate);
    const double base_rate = rate(cols[base]);
    add("training", "training: iteration rate relative to column " + std::to_string(base + 1), "ratio", 3,
        [&](const FabricColumn& c) { return rate(c) / base_rate; });
    char pct[32];
    std::snprintf(pct, sizeof pct, "%g%%", 100 * o.comm_threshold);
    add("training", std::string("training: exposed communication above ") + pct, "1 = yes", 0,
        [&](const FabricColumn& c) { return std::isnan(c.comm_fraction) ? kNaN : c.comm_fraction > o.comm_threshold ? 1.0 : 0.0; });
  }
  if (std::none_of(cols.begin(), cols.end(), [](const FabricColumn& c) { return c.known; })) return rows;
  // Every tier's rows at every size (0 where the fabric has fewer tiers): one CSV shape.
  const int radix = std::max_element(cols.begin(), cols.end(), [](const FabricColumn& a, const FabricColumn& b) {
                      return a.bom.radix < b.bom.radix;
                    })->bom.radix;
  add("fabric", "fabric: switch tiers", "", 0, [](const FabricColumn& c) { return c.bom.tiers; });
  for (const std::string tier : {"leaf", "spine", "core"})
    add("fabric", "fabric: " + tier + " switches (radix " + std::to_string(radix) + ")", "", 0, [tier](const FabricColumn& c) {
      for (std::size_t t = 0; t < c.bom.switch_tiers.size(); ++t)
        if (c.bom.switch_tiers[t] == tier) return double(c.bom.switches[t]);
      return 0.0;
    });
  for (const std::string tier : {"host-leaf", "leaf-spine", "spine-core"}) {
    auto count = [tier](std::uint64_t LinkTier::*field) {
      return [tier, field](const FabricColumn& c) {
        for (const auto& l : c.bom.links)
          if (l.name == tier) return double(l.*field);
        return 0.0;
      };
    };
    add("fabric", "fabric: " + tier + " links", "", 0, count(&LinkTier::links));
    add("fabric", "fabric: " + tier + " transceivers", "", 0, count(&LinkTier::transceivers));
    add("fabric", "fabric: " + tier + " copper cables (DAC/AEC)", "", 0, count(&LinkTier::copper));
  }
  if (!prices) return rows;
  const std::string cur = prices->currency;
  auto cost = [](const std::function<double(const FabricCost&)>& f) {
    return [f](const FabricColumn& c) { return c.cost ? f(*c.cost) : kNaN; };
  };
  add("cost", "cost: switches", cur, 0, cost([](const FabricCost& c) { return c.switches; }));
  add("cost", "cost: optics (transceivers, fibres)", cur, 0, cost([](const FabricCost& c) { return c.optics; }));
  add("cost", "cost: copper cables", cur, 0, cost([](const FabricCost& c) { return c.copper; }));
  add("cost", "cost: NICs", cur, 0, cost([](const FabricCost& c) { return c.nics; }));
  add("cost", "cost: fabric (switches, optics, copper, NICs)", cur, 0, cost([](const FabricCost& c) { return c.fabric(); }));
  if (prices->gpu) add("cost", "cost: cluster (fabric and GPUs)", cur, 0, cost([](const FabricCost& c) { return c.total(); }));
  if (training) {
    add("cost", "cost: fabric per training throughput", cur + " per (iteration/s)", 2,
        [&](const FabricColumn& c) { return c.cost ? c.cost->fabric() / rate(c) : kNaN; });
    if (prices->gpu)
      add("cost", "cost: cluster per training throughput", cur + " per (iteration/s)", 2,
          [&](const FabricColumn& c) { return c.cost ? c.cost->total() / rate(c) : kNaN; });
  }
  return rows;
}

/// What one comparison point produced.
struct PointResult {
  Endpoints ep;
  std::vector<Row> rows;
  nlohmann::json json;
};

// Probes, runs and tabulates one point; prints its table.
PointResult compare_point(const CompareOptions& o, const Point& point, bool tag_point,
                          const std::vector<std::string>& labels, const std::vector<std::string>& workloads,
                          bool& training_known, const fs::path& out, int parallel, const std::optional<Prices>& prices) {
  PointResult res;
  const Endpoints ep = res.ep = probe_point(o, point, workloads, training_known);
  PointJobs p = make_jobs(o, point, tag_point, labels, workloads, ep, training_known, out);
  std::vector<FabricColumn> fabric = fabric_columns(o, point, p, labels, prices);
  std::printf("compare: %s: %d endpoints, %d switches; %zu runs, %d at a time\n", point.name.c_str(), ep.count,
              ep.switches, p.jobs.size(), parallel);
  std::set<std::string> warned;
  for (const Job& j : p.jobs)
    for (const std::string& w : j.config.warnings)
      if (warned.insert(w).second) std::printf("compare: warning: %s\n", w.c_str());
  std::fflush(stdout);
  run_jobs(p.jobs, parallel);

  std::vector<std::string> errors;
  const nlohmann::json runs = collect_runs(p, ep, errors);
  res.rows = make_rows(workloads, labels, runs, ep, o, training_known);
  add_training(fabric, labels, runs);
  for (Row& r : fabric_rows(fabric, o, prices)) res.rows.push_back(std::move(r));
  std::cout << "\n# " << (tag_point ? point.name + ": " : "") << ep.count << " endpoints, topology "
            << point.topo.text << (point.topo.text.back() == '\n' ? "" : "\n");
  std::cout << table_text(res.rows, labels);
  for (const auto& e : errors) std::cout << "error: " << e << "\n";
  res.json = {{"name", point.name},
              {"endpoints", ep.count},
              {"switches", ep.switches},
              {"topology", point.topo.text},
              {"latency_pair", {{"client", ep.client}, {"server", ep.server}, {"path_switches", ep.path_switches}}},
              {"runs", runs},
              {"rows", rows_json(res.rows, labels)},
              {"errors", errors}};
  return res;
}

// --bom-only: each configuration's fabric at a --sizes point, built but not run. The
// configurations give their host link (medium, speed, framing) on a 2-endpoint switch.
PointResult bom_point(const CompareOptions& o, const Point& point, const std::vector<std::string>& labels,
                      const std::optional<Prices>& prices) {
  const int endpoints = std::stoi(point.name.substr(1));
  TopologyParams t = fabric_for_size(endpoints, o.shape);
  std::vector<FabricColumn> cols;
  for (const auto& config : o.configs) {
    std::vector<std::string> ov = base_overrides();
    ov.push_back("traffic.pattern=none");
    for (const auto& s : o.overrides) ov.push_back(s);
    const FabricConfig c = load_config(prepare_document(config, inline_topology("{kind: single_switch, endpoints: 2}")), ov);
    t.fabric_link = c.topology.fabric_link;
    t.links.assign(static_cast<std::size_t>(endpoints), c.topology.links.at(0));
    cols.push_back(fabric_column(o, true, t, prices));
  }
  PointResult res;
  res.ep.count = endpoints;
  res.ep.switches = static_cast<int>(cols.front().bom.total_switches());
  res.rows = fabric_rows(cols, o, prices);
  std::cout << "\n# " << point.name << ": " << endpoints << " endpoints, topology " << point.topo.text << " (not run)\n";
  std::cout << table_text(res.rows, labels);
  res.json = {{"name", point.name},
              {"endpoints", endpoints},
              {"switches", res.ep.switches},
              {"topology", point.topo.text},
              {"runs", nlohmann::json::object()},
              {"rows", rows_json(res.rows, labels)},
              {"errors", nlohmann::json::array()}};
  return res;
}

// Sweep summary: how the key metrics move with cluster size.
void print_size_sweep(const std::vector<PointResult>& results, const std::vector<std::string>& labels,
                      const CompareOptions& o) {
  std::cout << "\n# cluster-size sweep (" << o.shape.radix << "-port switches, " << o.shape.oversubscription << ":1 at the leaf, "
            << hw::name_of(host_layout_names(), o.shape.layout) << " layout; * exposed communication above "
            << 100 * o.comm_threshold << "%)\n";
  // Rows by summary, in order of first appearance: points of more tiers have more rows.
  std::vector<std::string> summaries;
  for (const PointResult& pr : results)
    for (const Row& r : pr.rows)
      if (r.note.empty() && r.metric.find(" p99") == std::string::npos &&  // p50 is enough in the summary
          std::find(summaries.begin(), summaries.end(), r.summary) == summaries.end())
        summaries.push_back(r.summary);
  char buf[256];
  for (const std::string& summary : summaries) {
    bool header = false;
    for (const PointResult& pr : results) {
      const auto it = std::find_if(pr.rows.begin(), pr.rows.end(), [&](const Row& r) { return r.summary == summary; });
      if (it == pr.rows.end()) continue;
      const Row& r = *it;
      // Ratios of counts, ratios and yes/no marks say nothing.
      const bool ratio = labels.size() > 1 && !r.unit.empty() && r.unit != "ratio" && r.unit != "1 = yes";
      if (!header) {
        header = true;
        std::cout << summary << (r.unit.empty() ? "" : " [" + r.unit + "]") << "\n";
        std::snprintf(buf, sizeof buf, "  %10s", "endpoints");
        std::cout << buf;
        for (const auto& l : labels) {
          std::snprintf(buf, sizeof buf, " %16s", l.c_str());
          std::cout << buf;
        }
        if (ratio) std::cout << "   " << labels[1] << " / " << labels[0];
        std::cout << "\n";
      }
      std::snprintf(buf, sizeof buf, "  %10d", pr.ep.count);
      std::cout << buf;
      const bool fraction = r.metric == "training step: communication fraction";
      for (double v : r.values) {
        const bool mark = fraction && v > 100 * o.comm_threshold;
        std::snprintf(buf, sizeof buf, " %16s", (fmt(v, r.decimals) + (mark ? "*" : "")).c_str());
        std::cout << buf;
      }
      if (ratio) std::cout << "   " << fmt(r.values[0] != 0 ? r.values[1] / r.values[0] : kNaN, 3);
      std::cout << "\n";
    }
  }
}

// compare.csv: one row per point and metric.
void write_compare_csv(const fs::path& file, const std::vector<PointResult>& results,
                       const std::vector<std::string>& labels) {
  OutputFile csv(file);
  csv << "endpoints,workload,metric,unit";
  for (const auto& l : labels) csv << "," << csv_field(l);
  csv << "\n";
  for (const PointResult& pr : results)
    for (const auto& r : pr.rows) {
      csv << pr.ep.count << "," << r.workload << "," << csv_field(r.metric) << "," << csv_field(r.unit);
      for (double v : r.values) csv << "," << (r.note.empty() && !std::isnan(v) ? fmt(v, 6) : "");
      if (!r.note.empty()) csv << "," << csv_field(r.note);
      csv << "\n";
    }
  csv.close();
}

// scripts/plot_compare.py draws compare.json into `out`; a missing or failing script only warns.
void plot_comparison(const fs::path& out) {
  std::string why_not;
  const std::string script = find_python_script("plot_compare.py", why_not);
  if (script.empty()) {
    std::cout << "plots: skipped: " << why_not << "\n";
    return;
  }
  const std::string cmd = "/usr/bin/python3 " + shell_quoted(script) + " " +
                          shell_quoted((out / "compare.json").string()) + " " + shell_quoted(out.string());
  std::fflush(nullptr);
  if (std::system(cmd.c_str()) != 0) std::cout << "plots: " << script << " failed (see above)\n";
}

}  // namespace

int compare_command(const CompareOptions& o) {
  if (o.configs.empty()) throw ConfigError("compare", "", "give at least one configuration file");
  const std::vector<std::string> workloads = selected_workloads(o);
  check_workload_options(o);
  const std::vector<std::string> labels = column_labels(o.configs);
  std::vector<std::string> notes;
  if (o.bom_only && o.sizes.empty()) throw ConfigError("--bom-only", "", "reports the fabric of each --sizes entry; give --sizes");
  if (!o.job.empty() && std::find(workloads.begin(), workloads.end(), "training") == workloads.end())
    throw ConfigError("--job " + o.job, "", "is the training workload's job, but --workload leaves training out");
  const std::vector<Point> points = comparison_points(o, notes);
  const std::optional<Prices> prices = o.prices.empty() ? std::nullopt : std::optional<Prices>(read_prices(o.prices));

  const fs::path out(o.out_dir);
  fs::create_directories(out / "runs");
  const int parallel = o.jobs > 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  for (const auto& n : notes) std::cout << "compare: note: " << n << "\n";

  const auto wall_start = std::chrono::steady_clock::now();
  nlohmann::json points_json = nlohmann::json::array();
  std::vector<PointResult> results;
  bool training_known = true;
  for (const Point& point : points) {
    if (o.bom_only) {
      results.push_back(bom_point(o, point, labels, prices));
      points_json.push_back(results.back().json);
      continue;
    }
    results.push_back(
        compare_point(o, point, points.size() > 1, labels, workloads, training_known, out, parallel, prices));
    points_json.push_back(results.back().json);
  }
  if (points.size() > 1) print_size_sweep(results, labels, o);

  write_compare_csv(out / "compare.csv", results, labels);
  nlohmann::json configs = nlohmann::json::array();
  for (std::size_t i = 0; i < labels.size(); ++i) configs.push_back({{"label", labels[i]}, {"file", o.configs[i]}});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const nlohmann::json report{{"schema_version", kCompareSchemaVersion},
                              {"configs", configs},
                              {"workloads", workloads},
                              {"overrides", o.overrides},
                              {"options", {{"allreduce_size", o.allreduce_size},
                                           {"latency_iterations", o.latency_iterations},
                                           {"incast_bytes", o.incast_bytes},
                                           {"radix", o.shape.radix},
                                           {"oversubscription", o.shape.oversubscription},
                                           {"layout", hw::name_of(host_layout_names(), o.shape.layout)},
                                           {"gpus_per_server", o.shape.gpus_per_server},
                                           {"job", o.job},
                                           {"host_cable", o.host_cable},
                                           {"comm_threshold", o.comm_threshold},
                                           {"prices", o.prices},
                                           {"currency", prices ? prices->currency : ""}}},
                              {"sweep", points.size() > 1},
                              {"training_modelled", training_known},
                              {"notes", notes},
                              {"points", points_json},
                              {"wall_time_s", wall}};
  write_file(out / "compare.json", report.dump(2) + "\n");
  std::cout << "\nresults: " << (out / "compare.csv").string() << ", " << (out / "compare.json").string() << ", "
            << (out / "runs").string() << "/\n";
  if (o.plots) plot_comparison(out);
  std::printf("compare: done in %.1f s wall\n", wall);
  for (const auto& p : points_json)
    if (!p["errors"].empty()) return 1;
  return 0;
}

}  // namespace fabricsim::sim
