// The configuration key tables (hw/param_spec.h): the reader, validate(), `fabricsim
// params` and docs/config.md all take a key's type, default and range from them.
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/phy.h"
#include "hw/routing.h"
#include "hw/units.h"
#include "sim/config.h"
#include "sim/config_params.h"
#include "sim/topology.h"
#include "tests/command.h"
#include "tests/config_error.h"
#include "tlm/link.h"
#include "tlm/nic.h"
#include "tlm/switch_params.h"

namespace {

using fabricsim::hw::ParamBlock;
using fabricsim::hw::ParamSpec;
using fabricsim::hw::ParamType;
using fabricsim::sim::config_param_blocks;
using ::testing::HasSubstr;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// docs/config.md's key tables are the generated ones; on a failure regenerate them with
//   build/fabricsim params --update-doc docs/config.md
TEST(ParamTables, ConfigDocIsUpToDate) {
  const std::string path = std::string(FABRICSIM_SOURCE_DIR) + "/docs/config.md";
  const std::string doc = read_file(path);
  ASSERT_FALSE(doc.empty()) << path;
  EXPECT_TRUE(fabricsim::sim::update_param_tables(doc) == doc)
      << "docs/config.md's key tables differ from the tables in the code; regenerate them with\n"
         "  build/fabricsim params --update-doc docs/config.md";
}

TEST(ParamTables, MissingMarkersNameTheBlock) {
  EXPECT_THROW(
      {
        try {
          fabricsim::sim::update_param_tables("# config\n");
        } catch (const std::runtime_error& e) {
          EXPECT_THAT(e.what(), HasSubstr("<!-- params " + config_param_blocks().front().section + " -->"));
          throw;
        }
      },
      std::runtime_error);
}

// A default must be a value the key accepts.
void expect_default_accepted(const ParamBlock& b, const ParamSpec& p) {
  const std::string where = b.section + "." + p.key + " default '" + p.def + "'";
  using namespace fabricsim::hw;
  switch (p.type) {
    case ParamType::integer: {
      const std::int64_t v = std::stoll(p.def);
      EXPECT_TRUE(v >= p.lo<std::int64_t>() && v <= p.hi<std::int64_t>()) << where;
      break;
    }
    case ParamType::number: {
      const double v = std::stod(p.def);
      EXPECT_TRUE(v >= p.lo<double>() && v <= p.hi<double>()) << where;
      break;
    }
    case ParamType::boolean: EXPECT_TRUE(p.def == "true" || p.def == "false") << where; break;
    case ParamType::name: EXPECT_THAT(p.choices, ::testing::Contains(p.def)) << where; break;
    case ParamType::size: EXPECT_NO_THROW(p.check_quantity(parse_size(p.def))) << where; break;
    case ParamType::time: EXPECT_NO_THROW(p.check_quantity(parse_time(p.def))) << where; break;
    case ParamType::bandwidth: EXPECT_NO_THROW(p.check_quantity(parse_bandwidth(p.def))) << where; break;
    case ParamType::length: EXPECT_NO_THROW(p.check_quantity(parse_length(p.def))) << where; break;
    case ParamType::frequency: EXPECT_NO_THROW(p.check_quantity(parse_frequency(p.def))) << where; break;
    case ParamType::text:
    case ParamType::section:
    case ParamType::list: break;
  }
}

TEST(ParamTables, DefaultsAreAcceptedValues) {
  for (const auto& b : config_param_blocks())
    for (const auto& p : b.params)
      if (!p.def.empty() && p.def.front() != '`') expect_default_accepted(b, p);  // not another key's value
}

TEST(ParamTables, EveryBlockHasDistinctKeysAndADoc) {
  std::set<std::string> sections;
  for (const auto& b : config_param_blocks()) {
    EXPECT_TRUE(sections.insert(b.section).second) << b.section;
    std::set<std::string> keys;
    for (const auto& p : b.params) {
      EXPECT_TRUE(keys.insert(p.key).second) << b.section << "." << p.key;
      EXPECT_FALSE(p.doc.empty()) << b.section << "." << p.key;
      EXPECT_EQ(p.choices.empty(), p.type != ParamType::name) << b.section << "." << p.key;
    }
  }
}

// The documented default is what an empty configuration reads.
TEST(ParamTables, SwitchDefaultsAreTheReadDefaults) {
  using namespace fabricsim::hw;
  const auto c = fabricsim::sim::load_config_text("{}", "empty.yaml");
  const auto& s = c.switch_params;
  const ParamBlock& t = fabricsim::tlm_fabric::switch_params("switch");
  auto integer = [&](const char* key) { return std::stoll(t[key].def); };
  EXPECT_EQ(s.ports, integer("ports"));
  EXPECT_EQ(s.core_clock, parse_frequency(t["core_clock"].def));
  EXPECT_EQ(to_string(s.forwarding), t["forwarding"].def);
  EXPECT_EQ(to_string(s.buffer), t["buffer"].def);
  EXPECT_EQ(s.input_buffer, parse_size(t["input_buffer"].def));
  EXPECT_EQ(s.output_buffer, parse_size(t["output_buffer"].def));
  EXPECT_EQ(s.shared_buffer, parse_size(t["shared_buffer"].def));
  EXPECT_EQ(s.alpha, std::stod(t["alpha"].def));
  EXPECT_EQ(s.speedup, integer("speedup"));
  EXPECT_EQ(Size::bytes(s.cell_bytes), parse_size(t["cell_size"].def));
  EXPECT_EQ(s.credit_return_latency, parse_time(t["credit_return_latency"].def));
  EXPECT_EQ(s.allocator, t["allocator"].def);
  EXPECT_EQ(s.allocator_iterations, integer("allocator_iterations"));
  EXPECT_EQ(to_string(s.allocator_impl), t["allocator_impl"].def);
  EXPECT_EQ(s.rtl_variant, t["rtl_variant"].def);
  EXPECT_EQ(s.vls, integer("vls"));
  EXPECT_EQ(c.in_network_reduction.enabled ? "true" : "false", t["in_network_reduction"].def);
  EXPECT_EQ(c.in_network_reduction.latency, parse_time(t["reduction_latency"].def));
  EXPECT_EQ(c.in_network_reduction.bandwidth, parse_bandwidth(t["reduction_bandwidth"].def));
  EXPECT_EQ(fabricsim::hw::name_of(fabricsim::tlm_fabric::egress_scheduler_names(), s.egress_scheduler),
            t["egress_scheduler"].def);  // roce_v2 framing by default

  const ParamBlock& pfc = fabricsim::tlm_fabric::switch_params("switch.pfc");
  EXPECT_EQ(Size::bytes(s.pfc.xoff_bytes), parse_size(pfc["xoff"].def));
  EXPECT_EQ(Size::bytes(s.pfc.xon_bytes), parse_size(pfc["xon"].def));
  EXPECT_EQ(Size::bytes(s.pfc.headroom_bytes), parse_size(pfc["headroom"].def));
  EXPECT_EQ(s.pause_quanta, std::stoll(pfc["pause_quanta"].def));
  for (const auto& [section, m] : {std::pair{"switch.ecn", s.ecn}, {"switch.wred", s.wred}}) {
    const ParamBlock& k = fabricsim::tlm_fabric::switch_params(section);
    EXPECT_EQ(m.enabled ? "true" : "false", k["enabled"].def) << section;
    EXPECT_EQ(Size::bytes(m.curve.kmin_bytes), parse_size(k["kmin"].def)) << section;
    EXPECT_EQ(Size::bytes(m.curve.kmax_bytes), parse_size(k["kmax"].def)) << section;
    EXPECT_EQ(m.curve.pmax, std::stod(k["pmax"].def)) << section;
  }
  const ParamBlock& tc = fabricsim::tlm_fabric::switch_params("switch.tc_scheduler");
  EXPECT_EQ(Size::bytes(s.tc.quantum_bytes), parse_size(tc["quantum"].def));
  EXPECT_EQ(s.vl_arb.high_limit, std::stoll(fabricsim::tlm_fabric::switch_params("switch.vl_arbitration")["high_limit"].def));
}

TEST(ParamTables, LinkDefaultsAreTheReadDefaults) {
  using namespace fabricsim::hw;
  const auto c = fabricsim::sim::load_config_text("{}", "empty.yaml");
  const auto& l = c.link;
  const ParamBlock& t = fabricsim::tlm_fabric::link_params();
  EXPECT_EQ(to_string(l.phy.framing), t["framing"].def);
  EXPECT_EQ(l.phy.lanes, std::stoll(t["lanes"].def));
  EXPECT_EQ(l.phy.lane_rate, parse_bandwidth(t["lane_rate"].def));
  EXPECT_EQ(to_string(l.phy.modulation), t["modulation"].def);
  EXPECT_EQ(to_string(l.phy.encoding), t["encoding"].def);
  EXPECT_EQ(to_string(l.phy.fec), t["fec"].def);
  EXPECT_EQ(l.phy.fec_interleave, std::stoll(t["fec_interleave"].def));
  EXPECT_EQ(l.phy.fec_decoder_latency, parse_time(t["fec_decoder_latency"].def));
  EXPECT_EQ(l.phy.cable_length, parse_length(t["cable_length"].def));
  EXPECT_EQ(l.phy.propagation_per_metre, parse_time(t["propagation_per_metre"].def));
  EXPECT_EQ(fabricsim::tlm_fabric::to_string(l.flow_control), t["flow_control"].def);
  EXPECT_EQ(Size::bytes(l.flow_control_bytes), parse_size(t["flow_control_bytes"].def));
  EXPECT_EQ(l.pfc_response_delay, parse_time(t["pfc_response_delay"].def));
  EXPECT_EQ(Size::bytes(c.switch_params.credit_block_bytes), parse_size(t["credit_block"].def));
  EXPECT_EQ(l.drop_rate, std::stod(t["drop_rate"].def));
  EXPECT_EQ(l.ber, std::stod(t["ber"].def));
}

TEST(ParamTables, SimulationDefaultsAreTheReadDefaults) {
  using namespace fabricsim::hw;
  const auto s = fabricsim::sim::load_config_text("{}", "empty.yaml").simulation;
  const ParamBlock& t = fabricsim::sim::simulation_params();
  EXPECT_EQ(s.seed, std::stoull(t["seed"].def));
  EXPECT_EQ(s.duration, parse_time(t["duration"].def));
  EXPECT_EQ(s.warmup, parse_time(t["warmup"].def));
  EXPECT_EQ(s.watchdog, parse_time(t["watchdog"].def));
  EXPECT_EQ(Size::bytes(s.max_memory), parse_size(t["max_memory"].def));
  EXPECT_EQ(s.threads, std::stoll(t["threads"].def));
  EXPECT_EQ(fabricsim::tlm_fabric::to_string(s.engine), t["engine"].def);
}

TEST(ParamTables, NicDefaultsAreTheReadDefaults) {
  using namespace fabricsim::hw;
  using namespace fabricsim::tlm_fabric;
  const auto n = fabricsim::sim::load_config_text("{}", "empty.yaml").nic;
  const ParamBlock& t = nic_params();
  EXPECT_EQ(n.mtu, parse_size(t["mtu"].def));
  EXPECT_EQ(n.rx_buffer, parse_size(t["rx_buffer"].def));
  EXPECT_EQ(n.credit_return_latency, parse_time(t["credit_return_latency"].def));
  EXPECT_EQ(to_string(n.host.memory), t["memory"].def);
  EXPECT_EQ(n.host.poll_latency, parse_time(t["poll_latency"].def));
  EXPECT_EQ(Size::bytes(n.host.inline_threshold), parse_size(t["inline_threshold"].def));
  EXPECT_EQ(n.host.blueflame ? "true" : "false", t["blueflame"].def);

  const ParamBlock& tr = transport_params();
  EXPECT_EQ(to_string(n.transport.mode), tr["retransmit"].def);
  EXPECT_EQ(n.transport.ack_every, std::stoll(tr["ack_every"].def));
  EXPECT_EQ(n.transport.retransmit_timeout, parse_time(tr["retransmit_timeout"].def));
  EXPECT_EQ(n.transport.window, std::stoll(tr["window"].def));
  EXPECT_EQ(n.transport.processing_latency, parse_time(tr["processing_latency"].def));

  const ParamBlock& pc = pcie_params();
  const auto& p = n.host.pcie;
  EXPECT_EQ(p.generation, std::stoll(pc["generation"].def));
  EXPECT_EQ(p.width, std::stoll(pc["width"].def));
  EXPECT_EQ(Size::bytes(p.max_payload), parse_size(pc["max_payload"].def));
  EXPECT_EQ(Size::bytes(p.max_read_request), parse_size(pc["max_read_request"].def));
  EXPECT_EQ(p.read_tags, std::stoll(pc["read_tags"].def));
  EXPECT_EQ(Size::bytes(p.tlp_overhead), parse_size(pc["tlp_overhead"].def));
  EXPECT_EQ(p.host_read_latency, parse_time(pc["host_read_latency"].def));
  EXPECT_EQ(p.gpu_read_latency, parse_time(pc["gpu_read_latency"].def));
  EXPECT_EQ(p.host_write_latency, parse_time(pc["host_write_latency"].def));
  EXPECT_EQ(p.gpu_write_latency, parse_time(pc["gpu_write_latency"].def));
  EXPECT_EQ(p.doorbell_latency, parse_time(pc["doorbell_latency"].def));

  EXPECT_EQ(to_string(n.cc.kind), cc_params()["kind"].def);
  const ParamBlock& d = dcqcn_params();
  const auto& q = n.cc.dcqcn;
  EXPECT_EQ(q.g, std::stod(d["g"].def));
  EXPECT_EQ(q.alpha_timer, parse_time(d["alpha_timer"].def));
  EXPECT_EQ(q.rate_timer, parse_time(d["rate_timer"].def));
  EXPECT_EQ(q.byte_counter, parse_size(d["byte_counter"].def));
  EXPECT_EQ(q.fast_recovery_steps, std::stoll(d["fast_recovery_steps"].def));
  EXPECT_DOUBLE_EQ(q.additive_increase.bps(), parse_bandwidth(d["additive_increase"].def).bps());
  EXPECT_DOUBLE_EQ(q.hyper_increase.bps(), parse_bandwidth(d["hyper_increase"].def).bps());
  EXPECT_DOUBLE_EQ(q.min_rate.bps(), parse_bandwidth(d["min_rate"].def).bps());
  EXPECT_EQ(q.cnp_interval, parse_time(d["cnp_interval"].def));
  const ParamBlock& i = ib_cc_params();
  EXPECT_EQ(n.cc.ib.ccti_increase, std::stoll(i["ccti_increase"].def));
  EXPECT_EQ(n.cc.ib.ccti_limit, std::stoll(i["ccti_limit"].def));
  EXPECT_EQ(n.cc.ib.ccti_timer, parse_time(i["ccti_timer"].def));
  EXPECT_EQ(n.cc.ib.ipd_unit, parse_time(i["ipd_unit"].def));
}

TEST(ParamTables, TopologyDefaultsAreTheReadDefaults) {
  using fabricsim::sim::topology_params;
  const auto t = fabricsim::sim::load_config_text("{}", "empty.yaml").topology;
  auto integer = [](const char* section, const char* key) { return std::stoll(topology_params(section)[key].def); };
  auto number = [](const char* section, const char* key) { return std::stod(topology_params(section)[key].def); };
  EXPECT_EQ(to_string(t.kind), topology_params()["kind"].def);
  EXPECT_EQ(t.endpoints, integer("topology (kind: single_switch)", "endpoints"));
  EXPECT_EQ(t.leaf_spine.radix, integer("topology (kind: leaf_spine)", "radix"));
  EXPECT_EQ(t.leaf_spine.oversubscription, number("topology (kind: leaf_spine)", "oversubscription"));
  EXPECT_EQ(t.leaf_spine.leaves, integer("topology (kind: leaf_spine)", "leaves"));
  EXPECT_EQ(t.fat_tree_k, integer("topology (kind: fat_tree)", "k"));
  EXPECT_EQ(t.kary_ntree.k, integer("topology (kind: kary_ntree)", "k"));
  EXPECT_EQ(t.kary_ntree.n, integer("topology (kind: kary_ntree)", "n"));
  EXPECT_EQ(t.rail.servers, integer("topology (kind: rail_optimized)", "servers"));
  EXPECT_EQ(t.rail.gpus_per_server, integer("topology (kind: rail_optimized)", "gpus_per_server"));
  EXPECT_EQ(t.rail.radix, integer("topology (kind: rail_optimized)", "radix"));
  EXPECT_EQ(t.rail.oversubscription, number("topology (kind: rail_optimized)", "oversubscription"));
  EXPECT_EQ(t.explicit_graph.switches, integer("topology (kind: explicit)", "switches"));
  EXPECT_EQ(t.explicit_graph.endpoints, integer("topology (kind: explicit)", "endpoints"));
  for (const auto& [kind, name] : fabricsim::sim::topology_kind_names()) EXPECT_EQ(to_string(kind), name);
}

TEST(ParamTables, RoutingDefaultsAreTheReadDefaults) {
  using namespace fabricsim::hw;
  const auto r = fabricsim::sim::load_config_text("{}", "empty.yaml").routing;
  const ParamBlock& t = routing_params();
  EXPECT_EQ(to_string(r.algorithm), t["algorithm"].def);
  EXPECT_EQ(r.hash_seed, std::stoull(t["hash_seed"].def));
  EXPECT_EQ(r.per_switch_hash ? "true" : "false", t["per_switch_hash"].def);
  EXPECT_EQ(Time::seconds(r.flowlet_timeout_s), parse_time(t["flowlet_timeout"].def));
  for (const auto& [a, name] : routing_algorithm_names()) EXPECT_EQ(to_string(a), name);
}

TEST(ParamTables, WorkloadDefaultsAreTheReadDefaults) {
  using namespace fabricsim::hw;
  using fabricsim::sim::workload_params;
  const auto c = fabricsim::sim::load_config_text("{}", "empty.yaml");
  const auto& t = c.traffic;
  const ParamBlock& tr = workload_params("traffic");
  EXPECT_EQ(to_string(t.pattern), tr["pattern"].def);
  EXPECT_EQ(t.load, std::stod(tr["load"].def));
  EXPECT_EQ(t.message_size, parse_size(tr["message_size"].def));
  EXPECT_EQ(to_string(t.arrival), tr["arrival"].def);
  EXPECT_EQ(t.burst_length, std::stod(tr["burst_length"].def));
  EXPECT_EQ(t.messages, std::stoull(tr["messages"].def));
  EXPECT_EQ(t.sls, std::vector<int>{std::stoi(tr["sl"].def)});
  EXPECT_EQ(t.hotspots, std::vector<int>{0});
  EXPECT_EQ(tr["hotspots"].def, "[0]");
  EXPECT_EQ(t.hotspot_fraction, std::stod(tr["hotspot_fraction"].def));
  EXPECT_EQ(t.incast_target, std::stoi(tr["incast_target"].def));
  EXPECT_EQ(to_string(t.transport), tr["transport"].def);
  EXPECT_EQ(fabricsim::sim::SizeWeight{}.weight, std::stod(workload_params("traffic.message_sizes[i]")["weight"].def));
  EXPECT_EQ(fabricsim::sim::FlowParams{}.start, parse_time(workload_params("traffic.flows[i]")["start"].def));

  const auto p = fabricsim::sim::load_config_text("perftest: {}", "perftest.yaml").perftest;
  const ParamBlock& pt = workload_params("perftest");
  EXPECT_EQ(to_string(p.kind), pt["test"].def);
  EXPECT_EQ(p.sizes, std::vector<std::uint64_t>{2});
  EXPECT_EQ(pt["sizes"].def, "[2B]");
  EXPECT_EQ(p.iterations, std::stoi(pt["iterations"].def));
  EXPECT_EQ(p.tx_depth, std::stoi(pt["tx_depth"].def));
  EXPECT_EQ(p.client, std::stoi(pt["client"].def));
  EXPECT_EQ(p.server, std::stoi(pt["server"].def));
  EXPECT_EQ(p.sl, std::stoi(pt["sl"].def));

  const auto cc = fabricsim::sim::load_config_text("collective: {}", "collective.yaml");
  const auto& k = cc.collective;
  const ParamBlock& co = workload_params("collective");
  EXPECT_EQ(to_string(k.op), co["op"].def);
  EXPECT_EQ(to_string(k.algorithm), co["algorithm"].def);
  EXPECT_EQ(k.sizes, std::vector<std::uint64_t>{1 << 20});
  EXPECT_EQ(co["sizes"].def, "[1MiB]");
  EXPECT_EQ(k.iterations, std::stoi(co["iterations"].def));
  EXPECT_EQ(k.channels, std::stoi(co["channels"].def));
  EXPECT_EQ(Size::bytes(k.tree_chunk), parse_size(co["tree_chunk"].def));
  EXPECT_EQ(k.tree_slots, std::stoi(co["tree_slots"].def));
  EXPECT_EQ(k.reduce_bandwidth_bps, parse_bandwidth(co["reduce_bandwidth"].def).bps());
  EXPECT_EQ(k.step_latency.to_seconds(), parse_time(co["step_latency"].def).in_seconds());
  EXPECT_EQ(k.sl, std::stoi(co["sl"].def));
  EXPECT_EQ(cc.collective_ranks, std::stoi(co["ranks"].def));
  EXPECT_EQ(to_string(cc.placement), co["placement"].def);

  const auto tc = fabricsim::sim::load_config_text("training: {}", "training.yaml");
  const ParamBlock& tt = workload_params("training");
  EXPECT_EQ(tc.collective.training.steps, std::stoi(tt["steps"].def));
  EXPECT_EQ(tc.collective.training.overlap ? "true" : "false", tt["overlap"].def);
  EXPECT_EQ(to_string(tc.collective.algorithm), tt["algorithm"].def);
  EXPECT_EQ(tc.collective.channels, std::stoi(tt["channels"].def));
  EXPECT_EQ(tc.collective.reduce_bandwidth_bps, parse_bandwidth(tt["reduce_bandwidth"].def).bps());
  EXPECT_EQ(tc.collective_ranks, std::stoi(tt["ranks"].def));
  EXPECT_EQ(to_string(tc.placement), tt["placement"].def);
  // gradient_size / bucket_size: 64 MiB in buckets of 25 MiB.
  EXPECT_EQ(tc.collective.training.buckets, (std::vector<std::uint64_t>{25u << 20, 25u << 20, 14u << 20}));
}

// validate() states the table's range, the same one the reader enforces.
TEST(ParamTables, ValidateTakesItsRangesFromTheTable) {
  auto error_of = [](const fabricsim::tlm_fabric::SwitchParams& p) {
    try {
      p.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  fabricsim::tlm_fabric::SwitchParams p;
  p.allocator_iterations = 17;
  EXPECT_EQ(error_of(p), "allocator_iterations must be in 1..16");
  p = {};
  p.pipeline.crossbar = 100001;
  EXPECT_EQ(error_of(p), "crossbar must be in 0..100000 cycles");
  p = {};
  p.ports = 1;
  EXPECT_EQ(error_of(p), "ports must be in 2..256");
  fabricsim::hw::PhyParams phy;
  phy.fec_interleave = 5;
  EXPECT_THROW(
      {
        try {
          phy.validate();
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "fec_interleave must be in 1..4");
          throw;
        }
      },
      std::invalid_argument);
  EXPECT_THAT(fabricsim::testing::run_command("validate " + std::string(FABRICSIM_SOURCE_DIR) +
                                              "/examples/quickstart.yaml --set switch.allocator_iterations=17")
                  .output,
              HasSubstr("switch.allocator_iterations: must be an integer in 1..16, got '17'"));
}

TEST(ParamsCommand, ListsEveryKeyAndPrintsTheMarkdown) {
  const auto list = fabricsim::testing::run_command("params");
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_THAT(list.output, HasSubstr("switch.allocator_iterations"));
  EXPECT_THAT(list.output, HasSubstr("1..16"));
  const auto md = fabricsim::testing::run_command("params --markdown");
  EXPECT_EQ(md.exit_code, 0) << md.output;
  EXPECT_EQ(md.output, fabricsim::sim::params_markdown());
  EXPECT_THAT(md.output, HasSubstr("<!-- params switch.pfc -->\n| Key | Type | Default | Allowed | Meaning |"));
}

// Each enum's names are one table: parsing, to_string and the error's list agree.
TEST(ParamTables, EnumNamesDriveParsingAndToString) {
  using fabricsim::tlm_fabric::forwarding_mode_names;
  for (const auto& [value, name] : forwarding_mode_names()) {
    EXPECT_EQ(fabricsim::tlm_fabric::to_string(value), name);
    const auto c = fabricsim::sim::load_config_text("switch: {forwarding: " + std::string(name) + "}", "f.yaml");
    EXPECT_EQ(c.switch_params.forwarding, value);
  }
  for (const auto& [value, name] : fabricsim::tlm_fabric::buffer_organisation_names())
    EXPECT_EQ(fabricsim::tlm_fabric::to_string(value), name);
  for (const auto& [value, name] : fabricsim::tlm_fabric::flow_control_names())
    EXPECT_EQ(fabricsim::tlm_fabric::to_string(value), name);
  auto expect_names = [](const auto& names) {
    for (const auto& [value, name] : names) EXPECT_EQ(to_string(value), name);
  };
  expect_names(fabricsim::sim::traffic_pattern_names());
  expect_names(fabricsim::sim::traffic_transport_names());
  expect_names(fabricsim::sim::rank_placement_names());
  expect_names(fabricsim::testbench::arrival_process_names());
  expect_names(fabricsim::testbench::collective_op_names());
  expect_names(fabricsim::testbench::collective_algorithm_names());
  expect_names(fabricsim::testbench::perftest_kind_names());
  for (const auto& [value, name] : fabricsim::testbench::collective_algorithm_names()) {
    if (value == fabricsim::testbench::CollectiveAlgorithm::sharp) continue;  // needs in-network reduction
    const std::string op = value == fabricsim::testbench::CollectiveAlgorithm::direct ? "alltoall" : "allreduce";
    const auto c = fabricsim::sim::load_config_text(
        "topology: {endpoints: 4}\ncollective: {op: " + op + ", algorithm: " + std::string(name) + "}", "c.yaml");
    EXPECT_EQ(c.collective.algorithm, value);
  }
  EXPECT_THAT(fabricsim::testing::config_error_of([] {
                fabricsim::sim::load_config_text("traffic: {arrival: poison}", "t.yaml");
              }),
              HasSubstr("t.yaml:1:20: traffic.arrival: unknown value 'poison'; allowed: poisson, periodic, bernoulli, "
                        "on_off (did you mean 'poisson'?)"));
  EXPECT_THAT(fabricsim::testing::config_error_of([] {
                fabricsim::sim::load_config_text("switch: {forwarding: cut_throug}", "f.yaml");
              }),
              HasSubstr("f.yaml:1:22: switch.forwarding: unknown value 'cut_throug'; allowed: cut_through, "
                        "store_and_forward, adaptive, fast_to_slow (did you mean 'cut_through'?)"));
}

}  // namespace
