#include "tlm/switch_params.h"

#include <stdexcept>

#include "hw/allocator.h"
#include "hw/credit.h"

namespace fabricsim::tlm_fabric {

using hw::ParamType;

const hw::EnumNames<ForwardingMode>& forwarding_mode_names() {
  static const hw::EnumNames<ForwardingMode> names{{ForwardingMode::cut_through, "cut_through"},
                                                   {ForwardingMode::store_and_forward, "store_and_forward"},
                                                   {ForwardingMode::adaptive, "adaptive"},
                                                   {ForwardingMode::fast_to_slow, "fast_to_slow"}};
  return names;
}

const hw::EnumNames<BufferOrganisation>& buffer_organisation_names() {
  static const hw::EnumNames<BufferOrganisation> names{{BufferOrganisation::input_fifo, "input_fifo"},
                                                       {BufferOrganisation::voq, "voq"},
                                                       {BufferOrganisation::output_queued, "output_queued"},
                                                       {BufferOrganisation::cioq, "cioq"},
                                                       {BufferOrganisation::shared_memory, "shared_memory"}};
  return names;
}

const hw::EnumNames<EgressSchedulerKind>& egress_scheduler_names() {
  static const hw::EnumNames<EgressSchedulerKind> names{{EgressSchedulerKind::ib_vl_arb, "ib_vl_arb"},
                                                        {EgressSchedulerKind::tc_dwrr, "tc_dwrr"}};
  return names;
}

namespace {

// Every buffer and threshold in bytes goes up to 1 GiB.
const char* const kMaxBuffer = "1GiB";

hw::ParamBlock switch_block() {
  hw::ParamSpec iterations = hw::allocator_params()["iterations"];
  iterations.key = "allocator_iterations";
  iterations.doc = "request-grant-accept iterations of `islip` and `pim`";
  return {"switch",
          "the switch ASIC; [switch.md](switch.md) describes what each key models",
          {
              {"ports", ParamType::integer, "", "4", "2", "256", {}, "", "radix (`single_switch` only; other topologies set it)"},
              {"core_clock", ParamType::frequency, "", "1.5GHz", "1MHz", "10GHz", {}, "", "core clock; every switch decision happens on its edges"},
              {"pipeline", ParamType::section, "", "", "", "", {}, "", "stage latencies in core cycles"},
              {"forwarding", ParamType::name, "", "cut_through", "", "", hw::names_of(forwarding_mode_names()), "",
               "when forwarding may start: header parsed (`cut_through`), whole frame received (`store_and_forward`), "
               "cut-through unless the packet had to wait or the egress is faster than the ingress (`adaptive`), or "
               "cut-through unless the egress is faster than the ingress (`fast_to_slow`); see "
               "[switch.md](switch.md#forwarding-modes-per-port)"},
              {"port_forwarding", ParamType::section, "", "", "", "", {},
               "keys are port numbers below the radix, values as `forwarding`",
               "the forwarding mode of the packets arriving on a port, for the ports that differ from `forwarding`, "
               "e.g. `port_forwarding: {0: store_and_forward, 3: fast_to_slow}`"},
              {"buffer", ParamType::name, "", "input_fifo", "", "", hw::names_of(buffer_organisation_names()), "", "buffer organisation"},
              {"input_buffer", ParamType::size, "", "256KiB", "64B", kMaxBuffer, {}, "",
               "per input port, all VLs: the credit allotment advertised upstream (split equally among VLs); lossy "
               "capacity of `input_fifo` / `voq`"},
              {"output_buffer", ParamType::size, "", "256KiB", "64B", kMaxBuffer, {}, "",
               "per output port, all VLs: capacity of `output_queued` and `cioq` (not used by other modes); on credit "
               "links the credits bound it, under PFC it must hold radix x VLs x (xoff + headroom)"},
              {"shared_buffer", ParamType::size, "", "4MiB", "64B", kMaxBuffer, {}, "", "the shared pool of `shared_memory`"},
              {"alpha", ParamType::number, "", "1.0", "0.0078125", "128", {}, "",
               "`shared_memory`, lossy: dynamic threshold, a queue may grow while its bytes < alpha x free pool"},
              {"speedup", ParamType::integer, "", "1", "1", "256", {}, "",
               "`output_queued`, `cioq`: the crossbar writes into an output queue, and reads from an input, at speedup x "
               "the ingress rate; a packet whose output's write port is taken waits at its input (`output_queued` at "
               "1: head-of-line blocking, as `input_fifo`; `cioq` sends another output's packet meanwhile; see "
               "[switch.md](switch.md#buffer-organisations-switchbuffer)); a value above a switch's radix acts as the "
               "radix. `shared_memory` takes every input at once"},
              {"cell_size", ParamType::size, "", "64B", "1B", "16KiB", {}, "",
               "buffer cell: occupancy (PFC, lossy capacity, shared pool, ECN/WRED depth) is counted in whole cells"},
              {"credit_return_latency", ParamType::time, "", "10ns", "0s", "100us", {}, "",
               "buffer freed -> credit packet leaves (`credit` links)"},
              {"allocator", ParamType::name, "", "round_robin", "", "", hw::allocator_names(), "",
               "switch allocator of `input_fifo` / `voq` (`hw::allocator_names()`)"},
              iterations,
              {"allocator_impl", ParamType::name, "", "tlm", "", "", hw::names_of(allocator_impl_names()), "",
               "the allocator as the `hw/` C++ core, as its Verilated RTL twin, or both compared every round "
               "([cosim.md](cosim.md)); `rtl` / `lockstep` need `-DFABRICSIM_RTL=ON` and an RTL build of this radix "
               "and `allocator_iterations`"},
              {"rtl_variant", ParamType::text, "", "islip_allocator", "", "", {},
               "the registered RTL models (rtl/models/: `islip_allocator`, `islip_allocator_alt`)",
               "which RTL block `rtl` / `lockstep` use ([cosim.md](cosim.md#bring-your-own-block))"},
              {"vl_arbiter_impl", ParamType::name, "", "tlm", "", "", hw::names_of(allocator_impl_names()),
               "`ib_vl_arb` with `vls` > 1",
               "each output's VL arbiter as the `hw/` C++ core, as its Verilated RTL twin, or both compared every "
               "decision ([cosim.md](cosim.md#the-vl-arbiter)); `rtl` / `lockstep` need `-DFABRICSIM_RTL=ON` and an "
               "RTL build of these `vls` and table lengths"},
              {"vl_arbiter_rtl_variant", ParamType::text, "", "vl_arbiter", "", "", {},
               "the registered RTL models of kind `vl_arbiter` (rtl/models/: `vl_arbiter`)",
               "which RTL VL arbiter `vl_arbiter_impl: rtl | lockstep` use"},
              {"write_arbiter_impl", ParamType::name, "", "tlm", "", "", hw::names_of(allocator_impl_names()), "",
               "`output_queued`, `cioq`: each output's write-port arbiter (round robin; `cioq`: and each input's "
               "accept arbiter) as the `hw/` C++ core, as its Verilated RTL twin, or both compared every round "
               "([cosim.md](cosim.md#arbiters)); `rtl` / `lockstep` need `-DFABRICSIM_RTL=ON` and an RTL build with radix requesters"},
              {"write_arbiter_rtl_variant", ParamType::text, "", "rr_arbiter", "", "", {},
               "the registered RTL arbiters (rtl/models/: `rr_arbiter`)",
               "which RTL block `write_arbiter_impl: rtl` / `lockstep` use"},
              {"input_fifo_impl", ParamType::name, "", "tlm", "", "", hw::names_of(allocator_impl_names()),
               "`buffer: input_fifo` only",
               "each input FIFO (per input and VL) as the `hw/` C++ core, as its Verilated RTL twin, or both compared "
               "every cycle ([cosim.md](cosim.md#input-fifo)); `rtl` / `lockstep` need `-DFABRICSIM_RTL=ON` and an RTL "
               "build of the FIFO depth (`input_buffer` / `cell_size`, or the frames the credits admit)"},
              {"input_fifo_rtl_variant", ParamType::text, "", "packet_fifo", "", "", {},
               "the registered RTL models of kind `packet_fifo` (rtl/models/: `packet_fifo`)",
               "which RTL packet FIFO `input_fifo_impl: rtl | lockstep` use"},
              {"rtl_trace", ParamType::text, "", "", "", "", {}, "",
               "folder for waveforms of the RTL blocks (allocators, arbiters, VL arbiters, input FIFOs, credit managers), one file per block "
               "([cosim.md](cosim.md#waveforms)); `fabricsim run --trace rtl` sets it to the results folder's `waveforms/`"},
              {"rtl_trace_format", ParamType::name, "", "fst", "", "", hw::names_of(waveform_format_names()),
               "needs `rtl_trace`", "`fst` (written as the run goes) or `vcd` (converted from the FST when the block closes it)"},
              {"rtl_trace_scope", ParamType::list, "globs or model names", "", "", "", {}, "needs `rtl_trace`; a name or a list",
               "blocks to record: a glob on the block's hierarchy name (`fabric.leaf*.allocator`) or an RTL model name "
               "(`islip_allocator`: every instance); empty: every RTL block"},
              {"rtl_trace_from", ParamType::time, "", "0s", "0s", "10s", {}, "needs `rtl_trace`",
               "start of the recorded window: the file begins here with every signal's value at this time"},
              {"rtl_trace_to", ParamType::time, "", "`simulation.duration`", "0s", "10s", {},
               "needs `rtl_trace`; not before `rtl_trace_from`", "end of the recorded window (inclusive)"},
              {"rtl_trace_max_size", ParamType::size, "", "0B", "0B", "1TiB", {}, "needs `rtl_trace`; 0B: no limit",
               "per file: recording stops, with a warning, before the file passes this size ([cosim.md](cosim.md#waveforms) "
               "gives the granularity)"},
              {"vls", ParamType::integer, "", "1", "1", std::to_string(hw::kMaxDataVls), {}, "",
               "data VLs (IB) or traffic classes (Ethernet)"},
              {"in_network_reduction", ParamType::boolean, "", "false", "", "", {}, "`true` only with `link.framing: infiniband`",
               "SHARP-like aggregation nodes in the switches, used by `collective.algorithm: sharp` "
               "([workloads.md](workloads.md#in-network-reduction-sharp-like)); refused on RoCE / Ethernet"},
              {"reduction_latency", ParamType::time, "", "200ns", "0s", "100us", {}, "",
               "per aggregation node and chunk: last input in -> reduced result out (assumption)"},
              {"reduction_bandwidth", ParamType::bandwidth, "", "0b/s", "0b/s", "1000Tb/s", {}, "",
               "reduction throughput of an aggregation node, adds chunk / this per chunk; 0: no limit beyond its ports "
               "(line-rate streaming aggregation, assumption)"},
              {"sl_to_vl", ParamType::list, "integers", "", "0", std::to_string(hw::kMaxDataVls - 1), {}, "up to 16 entries, each below `vls`",
               "SL / priority *i* travels on VL `sl_to_vl[i]`; SLs past the list use SL mod `vls`"},
              {"egress_scheduler", ParamType::name, "", "tc_dwrr", "", "", hw::names_of(egress_scheduler_names()),
               "the default is `ib_vl_arb` with `infiniband` framing", "VL / traffic-class arbitration at each output"},
              {"vl_arbitration", ParamType::section, "", "", "", "", {}, "", "tables of `ib_vl_arb`"},
              {"tc_scheduler", ParamType::section, "", "", "", "", {}, "", "classes of `tc_dwrr`"},
              {"pfc", ParamType::section, "", "", "", "", {}, "", "PFC thresholds (`pfc` links)"},
              {"ecn", ParamType::section, "", "", "", "", {}, "", "ECN (RoCE) / FECN (IB) marking"},
              {"wred", ParamType::section, "", "", "", "", {}, "", "WRED drops (`none` links)"},
              {"tiers", ParamType::section, "", "", "", "", {}, "keys `leaf`, `spine`, `core`; not `single_switch`",
               "switch keys overriding the above for the switches of one tier (leaf or edge, spine or aggregation, "
               "core), e.g. `tiers: {spine: {buffer: shared_memory}}`; fabric-wide keys (`vls`, `sl_to_vl`, `ports`, "
               "`rtl_trace*`, in-network reduction) stay here ([switch.md](switch.md#per-tier-and-per-switch-parameters))"},
              {"instances", ParamType::section, "", "", "", "", {}, "keys are switch names (`fabricsim routes`)",
               "switch keys overriding the above and the switch's tier for one named switch, e.g. "
               "`instances: {spine0: {forwarding: store_and_forward}}`"},
          }};
}

hw::ParamBlock pipeline_block() {
  auto stage = [](const char* key, int def, const char* doc) {
    return hw::ParamSpec{key, ParamType::integer, "cycles", std::to_string(def), "0", "100000", {}, "", doc};
  };
  const PipelineStages d;  // the defaults stated once, in the struct
  return {"switch.pipeline",
          "ingress and egress pipeline stages, in core-clock cycles",
          {stage("parse", d.parse, "ingress header parse"),
           stage("route_lookup", d.route_lookup, "forwarding table lookup"),
           stage("vl_mapping", d.vl_mapping, "SL->VL (IB) or priority->TC (Ethernet)"),
           stage("buffer_admission", d.buffer_admission, "admission and queue write"),
           stage("switch_allocation", d.switch_allocation, "allocator decision -> grant"),
           stage("crossbar", d.crossbar, "crossbar traversal"),
           stage("egress_scheduling", d.egress_scheduling, "egress queue -> MAC")}};
}

hw::ParamBlock vl_arbitration_block() {
  return {"switch.vl_arbitration",
          "`ib_vl_arb` tables (IBTA vol. 1 7.6.9); a VL in neither table is never served",
          {{"high", ParamType::list, "`{vl, weight}`", "", "", "", {}, "up to 64 entries", "high-priority table"},
           {"low", ParamType::list, "`{vl, weight}`", "", "", "", {}, "up to 64 entries",
            "low-priority table; empty (with `high` empty too): every VL with weight 1"},
           {"high_limit", ParamType::integer, "", "255", "0", "255", {}, "",
            "4 KiB units of high-priority traffic sent while a low-priority packet waits before one low packet must "
            "go; 255 = unlimited, 0 = one packet"}}};
}

hw::ParamBlock vl_arbitration_entry_block() {
  return {"switch.vl_arbitration.high[i]",
          "an entry of `high` or `low`",
          {{"vl", ParamType::integer, "", "", "0", std::to_string(hw::kMaxDataVls - 1), {}, "below `vls`", "VL served by the entry"},
           {"weight", ParamType::integer, "", "1", "0", "255", {}, "",
            "64-byte units the entry may send per turn (a packet may overdraw it); 0 = unused"}}};
}

hw::ParamBlock tc_scheduler_block() {
  return {"switch.tc_scheduler",
          "`tc_dwrr` classes (IEEE 802.1Q 8.6.8 strict priority + DWRR), at most 8",
          {{"strict", ParamType::list, "booleans", "", "", "", {}, "up to `vls` entries (missing ones `false`)",
            "strict-priority classes; a higher class index wins"},
           {"weights", ParamType::list, "integers", "", "1", "127", {}, "up to `vls` entries (missing ones 1)",
            "DWRR weight per class"},
           {"quantum", ParamType::size, "", "1500B", "64B", "64KiB", {}, "", "bytes per weight unit per DWRR round"}}};
}

hw::ParamBlock pfc_block() {
  return {"switch.pfc",
          "PFC thresholds per input port and priority; read always, used with `link.flow_control: pfc`",
          {{"xoff", ParamType::size, "", "64KiB", "64B", kMaxBuffer, {}, "",
            "send PAUSE when the bytes held for this input and priority reach this"},
           {"xon", ParamType::size, "", "32KiB", "0B", kMaxBuffer, {}, "< `xoff`", "send resume (quanta 0) when they fall to this"},
           {"headroom", ParamType::size, "", "128KiB", "0B", kMaxBuffer, {}, "xoff + headroom >= one MTU frame",
            "room above `xoff` for data already in flight; beyond xoff + headroom packets are dropped"},
           {"pause_quanta", ParamType::integer, "", "65535", "1", "65535", {}, "",
            "pause time per PAUSE frame, in quanta of 512 bit times; re-sent every half of it while still above `xon`"}}};
}

// The RED curve keys of `ecn` and `wred`, with each one's defaults.
hw::ParamBlock marking_block(const char* section, const char* title, const char* kmin, const char* kmax, const char* pmax) {
  return {section,
          title,
          {{"enabled", ParamType::boolean, "", "false", "", "", {}, "",
            "mark (`ecn`) or drop (`wred`, `none` links only; on others a [warning](#warnings)) at all"},
           {"kmin", ParamType::size, "", kmin, "0B", kMaxBuffer, {}, "",
            "below this depth: probability 0"},
           {"kmax", ParamType::size, "", kmax, "0B", kMaxBuffer, {},
            ">= `kmin`, > 0 when `enabled`", "at this depth: `pmax`; above it: 1"},
           {"pmax", ParamType::number, "", pmax, "0", "1", {}, "", "probability at `kmax`, linear from `kmin`"}}};
}

}  // namespace

const std::vector<hw::ParamBlock>& switch_param_blocks() {
  static const std::vector<hw::ParamBlock> blocks{
        switch_block(),
        pipeline_block(),
        vl_arbitration_block(),
        vl_arbitration_entry_block(),
        tc_scheduler_block(),
        pfc_block(),
        marking_block("switch.ecn", "ECN (RoCE) / FECN (IB) marking: a RED curve on the depth of the egress queue the "
                      "packet joins; defaults from the DCQCN paper (Kmin 5 KB, Kmax 200 KB, Pmax 1%)",
                      "5000B", "200000B", "0.01"),
        marking_block("switch.wred", "WRED drops on lossy links: the same curve; the defaults are an assumption",
                      "128KiB", "512KiB", "0.1")};
  return blocks;
}

const hw::ParamBlock& switch_params(std::string_view section) { return hw::block_of(switch_param_blocks(), section); }

}  // namespace fabricsim::tlm_fabric
