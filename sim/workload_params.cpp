// The key tables of the workload sections: synthetic traffic, perftest, collective and
// training step (sim/config.h, testbench/). Ranges bounded by the topology's endpoint
// count leave the upper bound empty and say so in the note; the reader supplies it.
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/config_params.h"

namespace fabricsim::sim {

namespace {

using hw::names_of;
using hw::ParamType;

const char* const kMaxInt64 = "9223372036854775807";

// The allreduce algorithms a training step can use (collective_algorithm_names()' first three).
std::vector<std::string> training_algorithms() {
  auto all = names_of(testbench::collective_algorithm_names());
  all.resize(3);
  return all;
}

hw::ParamBlock traffic() {
  return {"traffic",
          "synthetic traffic: who sends to whom, how much, when",
          {{"pattern", ParamType::name, "", "uniform", "", "", names_of(traffic_pattern_names()),
            "the default is `none` when a `perftest`, `collective` or `training` section is present",
            "who sends to whom, see below"},
           {"load", ParamType::number, "", "0.5", "1e-6", "1", {}, "",
            "offered load per source, fraction of the link wire rate (see below)"},
           {"message_size", ParamType::size, "", "64KiB", "1B", "1GiB", {}, "", "bytes per message"},
           {"message_sizes", ParamType::list, "`{size, weight}`", "", "", "", {}, "not with `message_size`",
            "draw each message's size with these relative weights (keys below)"},
           {"arrival", ParamType::name, "", "poisson", "", "", names_of(testbench::arrival_process_names()), "",
            "arrival process, see below; applies to flows too"},
           {"burst_length", ParamType::number, "", "8", "1", "1e6", {}, "", "`on_off`: mean messages per burst"},
           {"messages", ParamType::integer, "", "0", "0", kMaxInt64, {}, "",
            "messages per source (per sender, per flow); 0: until the end of the run"},
           {"sl", ParamType::list, "integers", "0", "0", "15", {}, "an integer or a list of 1..16 entries",
            "service level / priority of the synthetic patterns' messages (mapped by `switch.sl_to_vl`). A list is "
            "taken round robin over each source's messages: message *i* of a source travels on `sl[i mod n]`, all "
            "its packets on that SL (see [workloads.md](workloads.md#service-levels))"},
           {"hotspots", ParamType::list, "integers", "[0]", "0", "", {}, "1..256 entries, each below the endpoint count",
            "`hotspot`: the hot endpoints"},
           {"hotspot_fraction", ParamType::number, "", "0.5", "0", "1", {}, "",
            "`hotspot`: share of each source's messages that go to the hotspots"},
           {"incast_target", ParamType::integer, "", "0", "0", "", {}, "below the endpoint count", "`incast`: the receiver"},
           {"incast_senders", ParamType::list, "integers", "", "0", "", {},
            "up to 256 entries, each below the endpoint count and not `incast_target`",
            "`incast`: the senders; empty: every other endpoint"},
           {"flows", ParamType::list, "maps", "", "", "", {}, "only with `pattern: explicit`, then required",
            "explicit flows, keys below"},
           {"transport", ParamType::name, "", "raw", "", "", names_of(traffic_transport_names()), "",
            "`raw`: bare packets from the NIC's send queues; `rdma`: each message is an RDMA WRITE on an RC queue "
            "pair per (generator, destination, service level), with the `nic.transport` and "
            "`nic.congestion_control` of the NIC"}}};
}

hw::ParamBlock message_size() {
  return {"traffic.message_sizes[i]",
          "one entry of a message size distribution",
          {{"size", ParamType::size, "", "", "1B", "1GiB", {}, "", "bytes per message"},
           {"weight", ParamType::number, "", "1", "1e-9", "1e9", {}, "", "relative frequency of this size"}}};
}

hw::ParamBlock flow() {
  return {"traffic.flows[i]",
          "one explicit flow (`pattern: explicit`)",
          {{"src", ParamType::integer, "", "", "0", "", {}, "below the endpoint count", "sending endpoint"},
           {"dst", ParamType::integer, "", "", "0", "", {}, "below the endpoint count, not `src`", "receiving endpoint"},
           {"load", ParamType::number, "", "`traffic.load`", "1e-6", "1", {}, "", "offered load of this flow"},
           {"message_size", ParamType::size, "", "`traffic.message_size`", "1B", "1GiB", {}, "",
            "bytes per message (`message_sizes` does not apply to flows)"},
           {"messages", ParamType::integer, "", "`traffic.messages`", "0", kMaxInt64, {}, "",
            "0: until the end of the run"},
           {"start", ParamType::time, "", "0s", "0s", "10s", {}, "< `simulation.duration`",
            "first message no earlier than this"},
           {"sl", ParamType::list, "integers", "`traffic.sl`", "0", "15", {}, "as `traffic.sl`",
            "service level / priority; a list is taken round robin over the flow's messages"}}};
}

hw::ParamBlock perftest() {
  return {"perftest",
          "an RDMA test between two endpoints, perftest's conventions",
          {{"test", ParamType::name, "", "write_lat", "", "", names_of(testbench::perftest_kind_names()), "",
            "like `ib_write_lat`, `ib_write_bw`, ..."},
           {"sizes", ParamType::list, "sizes", "[2B]", "1B", "1GiB", {},
            "or `all` = 2 B, 4 B, ... 8 MiB (perftest `-a`)", "message sizes, run one after the other"},
           {"iterations", ParamType::integer, "", "100", "1", "1000000", {}, "", "operations per size (perftest `-n`)"},
           {"tx_depth", ParamType::integer, "", "32", "1", "4096", {}, "", "`*_bw`: operations outstanding (perftest `-t`)"},
           {"client", ParamType::integer, "", "0", "0", "", {}, "below the endpoint count", "the endpoint that runs the test"},
           {"server", ParamType::integer, "", "1", "0", "", {}, "below the endpoint count, not `client`", "its peer"},
           {"sl", ParamType::integer, "", "0", "0", "15", {}, "", "service level of both QPs"}}};
}

// Keys a collective and a training step share.
const char* const kChannelsDoc = "`ring`: parallel rings, each with its own QPs and 1/`channels` of the data";
const char* const kReduceDoc =
    "per-rank reduction throughput: a transfer that carries reduced data waits bytes / this after its inputs landed";
const char* const kRanksDoc = "number of ranks; 0: every endpoint";
const char* const kPlacementNote = "`rail` only with `topology.kind: rail_optimized`";


hw::ParamBlock collective() {
  return {"collective",
          "a collective over RDMA WRITEs, nccl-tests style",
          {{"op", ParamType::name, "", "allreduce", "", "", names_of(testbench::collective_op_names()), "", "the collective"},
           {"algorithm", ParamType::name, "", "ring", "", "", names_of(testbench::collective_algorithm_names()),
            "the default is `direct` with `op: alltoall`",
            "`ring` for every op but `alltoall`; `double_binary_tree`, `halving_doubling` and `sharp` (in-network, "
            "needs `switch.in_network_reduction: true`) only for `allreduce`; `direct` only (and always) for `alltoall`"},
           {"sizes", ParamType::list, "sizes", "[1MiB]", "1B", "16GiB", {},
            "or `all` = 8 B, 16 B, ... 128 MiB (nccl-tests `-b 8 -e 128M -f 2`)",
            "bytes per rank (nccl-tests \"size\"), run one after the other"},
           {"iterations", ParamType::integer, "", "1", "1", "10000", {}, "",
            "timed iterations per size, back to back; the result is their mean"},
           {"channels", ParamType::integer, "", "1", "1", "64", {}, "", kChannelsDoc},
           {"tree_chunk", ParamType::size, "", "512KiB", "64B", "1GiB", {}, "",
            "`double_binary_tree` and `sharp`: pipeline chunk"},
           {"tree_slots", ParamType::integer, "", "8", "1", "1024", {}, "",
            "`double_binary_tree`: chunk buffers per tree edge at the receiver (NCCL_STEPS): chunk k leaves once "
            "chunk k - slots on the same edge has landed"},
           {"reduce_bandwidth", ParamType::bandwidth, "", "8Tb/s", "1Gb/s", "1000Tb/s", {}, "", kReduceDoc},
           {"step_latency", ParamType::time, "", "0s", "0s", "1ms", {}, "",
            "software / kernel latency added before every transfer"},
           {"sl", ParamType::integer, "", "0", "0", "15", {}, "", "service level of every QP"},
           {"ranks", ParamType::integer, "", "0", "0", "", {}, "not 1; at most the endpoint count", kRanksDoc},
           {"placement", ParamType::name, "", "packed", "", "", names_of(rank_placement_names()), kPlacementNote,
            "which endpoint each rank runs on, see below"}}};
}

hw::ParamBlock training() {
  return {"training",
          "one data-parallel training step: compute, gradient AllReduces, optimizer",
          {{"forward", ParamType::time, "", "1ms", "0s", "10s", {}, "", "forward pass compute time"},
           {"backward", ParamType::time, "", "2ms", "0s", "10s", {}, "",
            "backward pass compute time; the gradient buckets become ready evenly spread over it"},
           {"optimizer", ParamType::time, "", "100us", "0s", "10s", {}, "",
            "optimizer step once every bucket is reduced"},
           {"gradient_size", ParamType::size, "", "64MiB", "1B", "64GiB", {}, "", "bytes of gradients per rank"},
           {"bucket_size", ParamType::size, "", "25MiB", "1B", "64GiB", {}, "at most 10000 buckets",
            "gradient bucket, one AllReduce each (PyTorch DDP's default 25 MiB); the last one takes the rest"},
           {"steps", ParamType::integer, "", "1", "1", "1000", {}, "", "training steps simulated"},
           {"overlap", ParamType::boolean, "", "true", "", "", {}, "",
            "start each bucket's AllReduce when it is ready; `false`: after the whole backward pass"},
           {"algorithm", ParamType::name, "", "ring", "", "", training_algorithms(), "", "the AllReduce algorithm"},
           {"channels", ParamType::integer, "", "1", "1", "64", {}, "", kChannelsDoc},
           {"reduce_bandwidth", ParamType::bandwidth, "", "8Tb/s", "1Gb/s", "1000Tb/s", {}, "", kReduceDoc},
           {"ranks", ParamType::integer, "", "0", "0", "", {}, "not 1; at most the endpoint count", kRanksDoc},
           {"placement", ParamType::name, "", "packed", "", "", names_of(rank_placement_names()), kPlacementNote,
            "which endpoint each rank runs on, as for `collective`"}}};
}

}  // namespace

const std::vector<hw::ParamBlock>& workload_param_blocks() {
  static const std::vector<hw::ParamBlock> blocks{traffic(), message_size(), flow(), perftest(), collective(), training()};
  return blocks;
}

const hw::ParamBlock& workload_params(std::string_view section) { return hw::block_of(workload_param_blocks(), section); }

}  // namespace fabricsim::sim
