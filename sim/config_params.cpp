#include "sim/config_params.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "hw/routing.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "sim/regress.h"
#include "sim/training_config.h"
#include "sim/topology.h"
#include "tlm/link.h"
#include "tlm/nic.h"
#include "tlm/switch_params.h"
#include "tlm/wake_queue.h"

namespace fabricsim::sim {

namespace {

std::string begin_marker(const hw::ParamBlock& b) { return "<!-- params " + b.section + " -->\n"; }
const std::string kEndMarker = "<!-- end params -->";

}  // namespace

const hw::ParamBlock& simulation_params() {
  using hw::ParamType;
  static const hw::ParamBlock block{
      "simulation",
      "how long and how the run goes",
      {{"seed", ParamType::integer, "", "1", "0", "9223372036854775807", {}, "",
        "random seed; same seed, same results. Every random stream (traffic, marking, PIM) is derived from it"},
       {"duration", ParamType::time, "", "100us", "1ns", "10s", {}, "",
        "simulated time to run"},
       {"warmup", ParamType::time, "", "10us", "0s", "10s", {}, "< `duration`",
        "statistics ignore packets created before this; throughput is measured from here to the end"},
       {"watchdog", ParamType::time, "", "1ms", "0s", "10s", {}, "",
        "progress watchdog: when no link starts a packet for this long while packets are held and nothing is on its way (a frame being serialised or on a cable, a credit return or PFC resume on the reverse wire), the run stops with exit code 4 and `results.json` `stall` names the cycle of waiting buffers (deadlock) or the blocked ones; `0s` turns it off ([robustness.md](robustness.md))"},
       {"max_memory", ParamType::size, "", "0B", "0B", "1024TiB", {}, "",
        "refuse a topology whose run is estimated to need more memory than this (exit 2, the estimate in the error, at the topology's size key); `0B`: the memory the machine has available (`MemAvailable` of `/proc/meminfo`) ([robustness.md](robustness.md#topology-validation))"},
       {"threads", ParamType::integer, "", "1", "1", "64", {}, "1 with `engine: kernel`",
        "run the fabric on this many threads: the switches are shared out among as many wake-queue lanes (no more than the switches with hosts; each NIC and its traffic source in its switch's lane), run in parallel windows of the lookahead, the least delay across a cable between lanes; the results are the same bit for bit with any number (`results.json` `simulator.lanes`, `parallel_windows`; [performance.md](performance.md)). The occupancy sampler (`output.sample_interval`) runs between windows. Collectives, training steps and Chakra traces split too (each rank posts in its NIC's lane; a collective ends between windows, when its last landing is visible, so the lookahead is also bounded by the NICs' least `nic.pcie` write latency + `nic.poll_latency`). A workload that acts on NICs of several lanes at no delay runs on one lane whatever this says (`simulator.lanes` 1): a perftest (its runner acts on two NICs at once), a collective or Chakra trace whose landings are visible at once (`nic.poll_latency` 0 and the lower of the `nic.pcie` host and GPU write latencies 0) (`collective.algorithm: sharp` runs on lanes: each switch's aggregation node in its switch's lane). `packets.csv` is the same file with any number (rows in the order of delivery time, then destination)"},
       {"fast_forward", ParamType::boolean, "", "false", "", "", {}, "",
        "steady-state fast-forward of collective and Chakra transfers: once every stream of every graph under way (a rank's transfers on one channel to one destination, of one size and reduction) has taken the same time from post to landing, within `fast_forward_tolerance` over its last `fast_forward_window` transfers, their further transfers land after that time without their packets, until another graph starts or a stream changes pattern; the repeated `collective.iterations` of a size replay its first. The skipped transfers count as flows, and their packets at the NICs and on the links and switch ports a steady flow's packets take; latency distributions, ECN, PAUSE and time series count the packets simulated. Off where other traffic shares the fabric (`traffic:`, a perftest) or links lose frames (`link.drop_rate`, `link.ber`): a warning says so. `results.json` `fast_forward` ([performance.md](performance.md#fast-forward))"},
       {"fast_forward_window", ParamType::integer, "", "4", "2", "1024", {}, "",
        "transfers per stream over which fast-forward judges a steady state"},
       {"fast_forward_tolerance", ParamType::number, "", "0.01", "0", "1", {}, "",
        "steady state: (longest - shortest) / mean post-to-landing time of a stream's last `fast_forward_window` transfers at most this"},
       {"engine", ParamType::name, "", "wheel", "", "", hw::names_of(tlm_fabric::engine_names()), "",
        "how the blocks' wake-ups run. `wheel`: the wake queue's timing wheels, running ahead of the kernel where nothing else is pending, on `threads` lanes. `kernel`: each block wakes on an `sc_event` and a method process of its own, in step with the kernel, so a third-party SystemC block that reads `sc_time_stamp()` or waits on its own events can sit in the fabric; slower on large fabrics, one lane only (`threads` above 1 is an error); the same results ([architecture.md](architecture.md), \"Scheduling\")"}}};
  return block;
}

const hw::ParamBlock& output_params() {
  using hw::ParamType;
  static const hw::ParamBlock block{
      "output",
      "what a run writes",
      {{"directory", ParamType::text, "", "results", "", "", {}, "non-empty",
        "results folder (created); `--out DIR` replaces it (`--out \"\"` is refused)"},
       {"packet_csv", ParamType::boolean, "", "false", "", "", {}, "",
        "also write `packets.csv`, one row per delivered packet, raw and RDMA, in the order of delivery time, then destination endpoint, then that endpoint's order of delivery (columns `packet,src,dst,op,qp,flow,message,psn,payload_bytes,hops,created_ns,injected_ns,delivered_ns,network_latency_ns,sl,vl`, `packet` the packet's number, (source endpoint << 40) + its count at the source, as `message`; `vl` the VL of the last hop; `op` is `raw`, `write`, `send`, `read_request`, `read_response`, `ack`, `nak` or `cnp`; times in ns to 12 significant digits); `--packet-csv` sets it (`run` only). `qps.csv` (a row per RDMA QP) is written in any case ([results.md](results.md))"},
       {"latency_breakdown", ParamType::boolean, "", "false", "", "", {}, "",
        "split each packet's network latency (first bit out of the source NIC -> tail in at the destination) into "
        "`pipeline`, `queueing`, `arbitration`, `flow_control`, `serialisation`, `propagation` and `fec`, hop by hop; "
        "the parts add up to the latency exactly (each delivery checks it). `results.json` `latency_breakdown`: the mean "
        "parts of the packets delivered after warm-up, and of the hops each switch, tier and output port forwarded; "
        "with `packet_csv`, each row ends with the packet's parts in ps (`pipeline_ps`, ...); `--latency-breakdown` "
        "sets it (`run` only). Off, it costs nothing ([results.md](results.md#latency-breakdown))"},
       {"sample_interval", ParamType::time, "", "1us", "0s", "10s", {}, "0s or at least 1ns",
        "period of the samples in `results.json` `timeseries` (the bytes all switch ports hold; per endpoint, the lowest and mean congestion-control rate of its QPs), `occupancy.csv` (the bytes each switch port holds, a row per port holding any) and `qp_rates.csv` (the rate of each QP with requests posted, when the NIC has congestion control); `0s`: off, and neither CSV file"},
       {"trace", ParamType::list, "trace kinds", "", "", "", {}, "`perfetto`, `vcd`: a name or a list",
        "the fabric trace: `perfetto` writes `trace.perfetto.json` (Chrome JSON trace events, opened by ui.perfetto.dev: packet hops and a collective's steps per rank as slices, buffer occupancy, credits and PAUSE as counters), `vcd` writes `fabric.vcd` (the counters as VCD signals for GTKWave); `fabricsim run --trace perfetto` sets it ([results.md](results.md#traces))"},
       {"trace_scope", ParamType::list, "globs", "", "", "", {}, "needs `trace`; a glob or a list",
        "only the switches, switch ports and NICs whose hierarchy name a glob matches (`fabric.sw0`, `fabric.leaf*.port[0-3]`, `fabric.ep1`); a glob that matches none gets a warning; empty: all"},
       {"trace_endpoint", ParamType::list, "endpoints", "", "", "", {}, "needs `trace`; an endpoint or a list",
        "only the packets from or to these endpoints, their NICs, and the counters of the switch ports their packets cross, from the first one's crossing; kept packets none: a warning; empty: all"},
       {"trace_flow", ParamType::list, "SRC:DST pairs", "", "", "", {}, "needs `trace`; a pair or a list",
        "only the packets from endpoint SRC to endpoint DST (`0:3`, SRC not DST), and the counters of the ports and NICs they cross, from the first one's crossing; kept packets none: a warning; empty: all"},
       {"trace_from", ParamType::time, "", "0s", "0s", "10s", {}, "needs `trace`",
        "start of the traced window: the counters start with their values at this time"},
       {"trace_to", ParamType::time, "", "`simulation.duration`", "0s", "10s", {}, "needs `trace`; not before `trace_from`",
        "end of the traced window (inclusive)"},
       {"trace_max_size", ParamType::size, "", "0B", "0B", "1TiB", {}, "needs `trace`; 0B: no limit",
        "per trace file: writing stops before the bytes written pass this size (`results.json` `trace` says so)"}}};
  return block;
}

const std::vector<hw::ParamBlock>& chakra_param_blocks() {
  using hw::ParamType;
  static const std::vector<hw::ParamBlock> blocks{
      {"chakra",
       "an MLCommons Chakra execution trace run on the fabric",
       {{"trace", ParamType::text, "", "", "", "", {}, "required, but with a generated training job (`training.model`), which is the trace",
         "the trace's path prefix: `PREFIX.0.et`, `PREFIX.1.et`, ... one file per rank; relative to the configuration file's folder"},
        {"placement", ParamType::name, "", "packed", "", "", hw::names_of(rank_placement_names()), "`rail`: `rail_optimized` only",
         "which endpoint each trace rank runs on, as `collective.placement`; the trace's ranks take the first of that order (more ranks than endpoints is an error)"},
        {"algorithm", ParamType::name, "", "ring", "", "", {"ring", "double_binary_tree", "halving_doubling"}, "`halving_doubling`: every AllReduce group a power of two",
         "AllReduce algorithm; AllGather and ReduceScatter run as rings, AllToAll direct, Broadcast as a pipelined chain, Barrier as a dissemination barrier"},
        {"channels", ParamType::integer, "", "1", "1", "64", {}, "",
         "ring collectives: parallel rings, each with its own QPs and 1/`channels` of the data"},
        {"chunk", ParamType::size, "", "512KiB", "64B", "1GiB", {}, "",
         "pipeline chunk of the double binary tree and of the broadcast chain"},
        {"tree_slots", ParamType::integer, "", "8", "1", "1024", {}, "",
         "double binary tree: chunk buffers per tree edge at the receiver"},
        {"reduce_bandwidth", ParamType::bandwidth, "", "8Tb/s", "1Gb/s", "1000Tb/s", {}, "",
         "per-rank reduction throughput: a transfer that carries reduced data waits bytes / this after its inputs landed"},
        {"step_latency", ParamType::time, "", "0s", "0s", "1ms", {}, "",
         "software / kernel latency before every transfer (collective steps and sends)"},
        {"sl", ParamType::integer, "", "0", "0", "15", {}, "", "service level of every QP"},
        {"gpu", ParamType::section, "", "", "", "", {}, "", "compute time of nodes without `duration_micros`"}}},
      {"chakra.gpu",
       "the compute model of COMP nodes without a duration, `training.gpu`'s keys at bf16: max(num_ops / (peak x efficiency), tensor_size / memory_bandwidth)",
       hw::block_of(training_job_param_blocks(), "training.gpu").params}};
  return blocks;
}

const std::vector<hw::ParamBlock>& server_param_blocks() {
  using hw::ParamType;
  const chakra::ScaleUp defaults;
  static const std::vector<hw::ParamBlock> blocks{
      {"server",
       "the host of the endpoints: GPUs with one NIC each, and the scale-up domain between them",
       {{"gpus", ParamType::integer, "", "0", "0", "1024", {}, "rail layouts: the topology's `gpus_per_server`",
         "GPUs (= NICs) per server: endpoint e is GPU e mod this of server e / this; 0: the topology's `gpus_per_server` "
         "for `rail_optimized` and `three_tier` with `layout: rail`, else 1"},
        {"scale_up", ParamType::section, "", "", "", "", {}, "",
         "a scale-up domain (NVLink-like) between the GPUs of a server: a Chakra trace's or generated training job's "
         "transfers inside a server take it instead of the fabric; absent: they go through the NICs"}}},
      {"server.scale_up",
       "the scale-up domain: a port per GPU, a transfer holds the sender's and the receiver's port",
       {{"bandwidth", ParamType::bandwidth, "", hw::to_string(hw::Bandwidth::bits_per_second(defaults.bandwidth_bps)),
         "1Gb/s", "1000Tb/s", {}, "",
         "per GPU port and direction; a transfer holds the sender's and the receiver's port for bytes / this. NVLink 4 "
         "(H100 SXM): 900 GB/s bidirectional per GPU, 450 GB/s = 3600 Gb/s each way (NVIDIA H100 Tensor Core GPU datasheet)"},
        {"latency", ParamType::time, "", hw::to_string(hw::Time::seconds(defaults.latency.to_seconds())), "0s", "1ms", {}, "",
         "per transfer, after its bytes have gone through the ports (assumption: software and NVSwitch latency of a "
         "small NCCL transfer inside a server)"}}}};
  return blocks;
}

const std::vector<hw::ParamBlock>& config_param_blocks() {
  static const std::vector<hw::ParamBlock> blocks = [] {
    std::vector<hw::ParamBlock> all{simulation_params(), tlm_fabric::link_params()};
    for (const auto* group : {&tlm_fabric::switch_param_blocks(), &tlm_fabric::nic_param_blocks(), &topology_param_blocks(),
                              &server_param_blocks()})
      all.insert(all.end(), group->begin(), group->end());
    all.push_back(hw::routing_params());
    all.insert(all.end(), workload_param_blocks().begin(), workload_param_blocks().end());
    all.insert(all.end(), chakra_param_blocks().begin(), chakra_param_blocks().end());
    all.insert(all.end(), training_job_param_blocks().begin(), training_job_param_blocks().end());
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

std::string update_param_tables(const std::string& doc, const std::vector<hw::ParamBlock>& blocks) {
  std::string out = doc;
  for (const auto& b : blocks) {
    const std::string begin = begin_marker(b);
    const auto start = out.find(begin);
    if (start == std::string::npos)
      throw std::runtime_error("the document has no table for " + b.section + ": add the lines '" +
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
    // docs/regress.md holds the suite file's tables, docs/config.md the configuration's.
    const bool suite = text.str().find(begin_marker(regress_param_blocks().front())) != std::string::npos;
    updated = update_param_tables(text.str(), suite ? regress_param_blocks() : config_param_blocks());
  } catch (const std::runtime_error& e) {
    throw ConfigError(doc_file, "", e.what());
  }
  if (updated != text.str()) std::ofstream(doc_file) << updated;
  std::cout << doc_file << (updated == text.str() ? ": key tables up to date\n" : ": key tables updated\n");
  return 0;
}

}  // namespace fabricsim::sim
