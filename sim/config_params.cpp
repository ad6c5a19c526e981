#include "sim/config_params.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "sim/config_reader.h"
#include "tlm/link.h"
#include "tlm/switch_params.h"

namespace fabricsim::sim {

namespace {

std::string begin_marker(const hw::ParamBlock& b) { return "<!-- params " + b.section + " -->\n"; }
const std::string kEndMarker = "<!-- end params -->";

}  // namespace

const hw::ParamBlock& output_params() {
  using hw::ParamType;
  static const hw::ParamBlock block{
      "output",
      "what a run writes",
      {{"directory", ParamType::text, "", "results", "", "", {}, "non-empty",
        "results folder (created); `--out DIR` replaces it (`--out \"\"` is refused)"},
       {"packet_csv", ParamType::boolean, "", "false", "", "", {}, "",
        "also write `packets.csv`, one row per delivered packet, raw and RDMA, in the order of delivery time, then destination endpoint, then that endpoint's order of delivery (columns `packet,src,dst,op,qp,flow,message,psn,payload_bytes,hops,created_ns,injected_ns,delivered_ns,network_latency_ns,sl,vl`, `packet` the packet's number, (source endpoint << 40) + its count at the source, as `message`; `vl` the VL of the last hop; `op` is `raw`, `write`, `send`, `read_request`, `read_response`, `ack`, `nak` or `cnp`; times in ns to 12 significant digits); `--packet-csv` sets it (`run` only). `qps.csv` (a row per RDMA QP) is written in any case ([results.md](results.md))"},
       {"sample_interval", ParamType::time, "", "1us", "0s", "10s", {}, "0s or at least 1ns",
        "period of the samples in `results.json` `timeseries` (the bytes all switch ports hold; per endpoint, the lowest and mean congestion-control rate of its QPs), `occupancy.csv` (the bytes each switch port holds, a row per port holding any) and `qp_rates.csv` (the rate of each QP with requests posted, when the NIC has congestion control); `0s`: off, and neither CSV file"}}};
  return block;
}

const std::vector<hw::ParamBlock>& config_param_blocks() {
  static const std::vector<hw::ParamBlock> blocks = [] {
    std::vector<hw::ParamBlock> all{tlm_fabric::link_params()};
    for (const auto* group : {&tlm_fabric::switch_param_blocks()}) all.insert(all.end(), group->begin(), group->end());
    all.push_back(output_params());
    return all;
  }();
  return blocks;
}

std::string params_listing() {
  std::string out;
  for (const auto& b : config_param_blocks()) out += "# " + b.section + ": " + b.title + "\n" + hw::listing(b) + "\n";
  return out;
}

std::string params_markdown() {
  std::string out;
  for (const auto& b : config_param_blocks()) out += begin_marker(b) + hw::markdown_table(b) + kEndMarker + "\n\n";
  return out;
}

std::string update_param_tables(const std::string& doc) {
  std::string out = doc;
  for (const auto& b : config_param_blocks()) {
    const std::string begin = begin_marker(b);
    const auto start = out.find(begin);
    if (start == std::string::npos)
      throw std::runtime_error("docs/config.md has no table for " + b.section + ": add the lines '" +
                               begin.substr(0, begin.size() - 1) + "' and '" + kEndMarker + "' where it belongs");
    const auto body = start + begin.size();
    const auto end = out.find(kEndMarker, body);
    if (end == std::string::npos) throw std::runtime_error("the table of " + b.section + " has no '" + kEndMarker + "' line");
    out.replace(body, end - body, hw::markdown_table(b));
  }
  return out;
}

int params_command(bool markdown, const std::string& doc_file) {
  if (doc_file.empty()) {
    std::cout << (markdown ? params_markdown() : params_listing());
    return 0;
  }
  std::ifstream in(doc_file);
  if (!in) throw ConfigError(doc_file, "", "cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  std::string updated;
  try {
    updated = update_param_tables(text.str());
  } catch (const std::runtime_error& e) {
    throw ConfigError(doc_file, "", e.what());
  }
  if (updated != text.str()) std::ofstream(doc_file) << updated;
  std::cout << doc_file << (updated == text.str() ? ": key tables up to date\n" : ": key tables updated\n");
  return 0;
}

}  // namespace fabricsim::sim
