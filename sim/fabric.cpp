#include "sim/fabric.h"

#include "hw/seed.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <sstream>

#include "sim/gather.h"
#include "sim/training_config.h"
#include "tlm/csv_row.h"
#include "tlm/distributed.h"
#include "tlm/sim_time.h"

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

// The credits of one VL: an equal share of the receiver's buffer.
std::uint64_t per_vl(hw::Size buffer, int vls) { return buffer.in_bytes() / static_cast<std::uint64_t>(vls); }

std::vector<int> sl_to_vl_table(const tlm_fabric::SwitchParams& sp) {
  std::vector<int> sl_to_vl(16);
  for (int sl = 0; sl < 16; ++sl) sl_to_vl[sl] = sp.vl_of(sl);
  return sl_to_vl;
}

// An aggregation port's cable: inside its switch.
tlm_fabric::LinkParams aggregation_link(const FabricConfig& config) {
  tlm_fabric::LinkParams internal = config.link;
  internal.phy.cable_length = hw::Length::metres(0);
  return internal;
}

// In-network reduction: every switch of the tree gets an aggregation node behind one
// internal port per tree edge (per child, and one to its parent). Per switch: those ports.

std::vector<int> aggregation_port_counts(const TopologyGraph& graph, const SwitchTree& tree) {
  std::vector<int> extra_port(graph.switches.size(), 0);
  for (std::size_t a = 0; a < tree.switches.size(); ++a) extra_port[tree.switches[a]] += tree.parent[a] >= 0;
  for (int a : tree.parent)
    if (a >= 0) ++extra_port[tree.switches[a]];
  for (int a : tree.node_of) ++extra_port[tree.switches[a]];
  for (std::size_t s = 0; s < extra_port.size(); ++s)
    if (graph.switches[s].radix + extra_port[s] > 256)
      throw std::invalid_argument(
          "collective.algorithm sharp: switch " + graph.switches[s].name + " needs " +
          std::to_string(extra_port[s]) + " aggregation ports on top of its radix " +
          std::to_string(graph.switches[s].radix) + ", more than 256 ports in all; use fewer collective.ranks or a "
          "smaller topology radix");
  return extra_port;
}

}  // namespace

Fabric::Fabric(sc_core::sc_module_name name, const FabricConfig& config, stats::Registry& stats)
    : sc_module(name), config_(config), graph_(build_graph(config.topology)) {
  plan_lanes();
  if (config_.output.sample_interval.in_seconds() > 0) {
    sampler_ = std::make_unique<tlm_fabric::WakeEvent>([this] { sample(); }, /*reads_every_lane=*/true);
    sampler_->notify_at(sc_core::SC_ZERO_TIME);
  }
  // Over several processes a process makes only its own blocks, so a block's error can
  // come up in some processes only: every process ends with the same one.
  std::exception_ptr failure;
  try {
    const int n = graph_.endpoints();
    const bool sharp = config_.collective_enabled && config_.collective.algorithm == testbench::CollectiveAlgorithm::sharp;
    const std::vector<int> ranks = sharp ? place_ranks() : std::vector<int>{};
    const SwitchTree tree = sharp ? reduction_tree(graph_, ranks) : SwitchTree{};
    build_switches(aggregation_port_counts(graph_, tree), stats);
    if (switches_.empty()) connect_back_to_back(stats);
    for (int e = 0; e < n && !switches_.empty(); ++e)
      attach_nic(e, "ep" + std::to_string(e), graph_.host_switch[e], graph_.host_port[e],
                 config_.topology.links.at(static_cast<std::size_t>(e)), "host", stats);
    TopologyGraph routed = graph_;
    const testbench::AggregationTree aggregation = attach_aggregation_ports(tree, ranks, routed, stats);
    nic_lane_ = endpoint_lanes(routed);
    connect_switch_cables();
    terminate_open_ports();
    if (config_.output.latency_breakdown) keep_latency_breakdowns();
    collect_flows();
    set_routes(routed);
    build_traffic();
    if (config_.collective_enabled) build_collective(aggregation);
    if (config_.chakra_enabled) build_chakra();
  } catch (...) {
    if (!tlm_fabric::distributed::active()) throw;
    failure = std::current_exception();
  }
  if (tlm_fabric::distributed::active()) {
    if (const auto what = tlm_fabric::distributed::failure_over_processes(failure))
      throw tlm_fabric::distributed::AgreedError(*what);
    // Each process bounds it by the cables between lanes that touch its switches.
    lookahead_ = tlm_fabric::from_ticks(tlm_fabric::distributed::min_over_processes(std::uint64_t{lookahead_.value()}));
  }
  tlm_fabric::WakeQueue::instance().set_lookahead(lookahead_);
  if (config_.perftest_enabled) {
    const auto& pt = config_.perftest;
    perftest_ = std::make_unique<testbench::Perftest>("perftest", *nics_[pt.client], *nics_[pt.server], pt);
  }
  if (config_.simulation.watchdog.in_seconds() > 0) {
    SC_METHOD(watchdog);
    sensitive << watchdog_event_;
    dont_initialize();
    watchdog_event_.notify(to_sc(config_.simulation.watchdog));
  }
}

void Fabric::set_routes(const TopologyGraph& routed) {
  // Every endpoint of one switch is reached through the same ports from every other
  // switch: the switches share where each endpoint hangs and keep a route per group.
  if (switches_.empty()) return;  // back to back: no switch to route in
  const auto routes = minimal_routes(routed);
  auto homes = std::make_shared<tlm_fabric::EndpointHomes>();
  std::vector<int> group_of(switches_.size(), -1), first_endpoint;
  for (int e = 0; e < routed.endpoints(); ++e) {
    int& group = group_of[static_cast<std::size_t>(routed.host_switch[e])];
    if (group < 0) {
      group = homes->groups++;
      first_endpoint.push_back(e);
    }
    homes->group.push_back(group);
    homes->port.push_back(routed.host_port[e]);
  }
  for (std::size_t s = 0; s < switches_.size(); ++s) {
    if (!switches_[s]) continue;
    auto& sw = *switches_[s];
    sw.set_endpoint_homes(homes, group_of[s]);
    for (int group = 0; group < homes->groups; ++group)
      if (group != group_of[s]) sw.set_routes(group, routes.ports(static_cast<int>(s), first_endpoint[group]));
  }
}

void Fabric::build_switches(const std::vector<int>& extra_ports, stats::Registry& stats) {
  const std::vector<std::uint64_t> divisor = d_mod_k_divisors(graph_);
  for (std::size_t s = 0; s < graph_.switches.size(); ++s) {
    tlm_fabric::SwitchParams params = switch_params_of(static_cast<int>(s));
    params.ports = graph_.switches[s].radix + extra_ports[s];
    params.speedup = std::min(params.speedup, params.ports);
    params.routing = config_.routing;
    params.routing.d_mod_k_divisor = divisor[s];
    params.seed = hw::mix_seed(config_.switch_params.seed, s);
    port_links_.emplace_back(static_cast<std::size_t>(params.ports));
    if (!runs_switch(static_cast<int>(s))) {  // another process's
      switches_.emplace_back();
      continue;
    }
    tlm_fabric::WakeQueue::instance().building_lane(switch_lane_[s]);
    switches_.push_back(std::make_unique<tlm_fabric::Switch>(graph_.switches[s].name.c_str(), params, pool_, stats));
  }
}

void Fabric::connect_back_to_back(stats::Registry& stats) {
  const auto& sp = config_.switch_params;
  const int n = graph_.endpoints();
  const sc_time measure_from = to_sc(config_.simulation.warmup);
  for (int e = 0; e < n; ++e)
    nics_.push_back(std::make_unique<tlm_fabric::Nic>(("ep" + std::to_string(e)).c_str(), e, config_.nic, pool_, stats, measure_from));
  for (int e = 0; e < n; ++e) {
    auto& link = add_link("ep" + std::to_string(e) + "_to_ep" + std::to_string(1 - e), config_.topology.links.at(e));
    up_.push_back(&link);
  }
  for (int e = 0; e < n; ++e) {
    down_.push_back(up_[1 - e]);
    nics_[e]->tx.bind(up_[e]->tx);
    up_[e]->rx.bind(nics_[1 - e]->rx);
    nics_[e]->attach_egress(up_[e], sp.vls, sl_to_vl_table(sp), per_vl(config_.nic.rx_buffer, sp.vls));
    nics_[e]->attach_ingress(up_[1 - e]);
  }
}

void Fabric::attach_nic(int e, const std::string& ep, int s, int port, const tlm_fabric::LinkParams& cable,
                        const std::string& tier, stats::Registry& stats) {
  if (!switches_[s]) {  // another process runs the switch, its NICs and their cables
    nics_.emplace_back();
    elsewhere_names_.resize(nics_.size());
    elsewhere_names_.back() = std::string(name()) + "." + ep;
    up_.push_back(nullptr);
    down_.push_back(nullptr);
    const int up = skip_link();
    port_links_[s][port] = {nullptr, nullptr, ep, tier, -1, -1, e, up, skip_link()};
    return;
  }
  const auto& sp = switch_params_of(s);
  auto& sw = *switches_[s];
  const std::string swp = graph_.switches[s].name + "_p" + std::to_string(port);
  tlm_fabric::WakeQueue::instance().building_lane(switch_lane_[s]);
  nics_.push_back(
      std::make_unique<tlm_fabric::Nic>(ep.c_str(), e, config_.nic, pool_, stats, to_sc(config_.simulation.warmup)));
  auto& nic = *nics_.back();
  auto& up = add_link(ep + "_to_" + swp, cable);
  auto& down = add_link(swp + "_to_" + ep, cable);
  up_.push_back(&up);
  down_.push_back(&down);
  nic.tx.bind(up.tx);
  up.rx.bind(sw.in[port]);
  sw.out[port].bind(down.tx);
  down.rx.bind(nic.rx);
  nic.attach_egress(&up, sp.vls, sl_to_vl_table(sp), per_vl(sp.input_buffer, sp.vls));
  nic.attach_ingress(&down);
  sw.attach_ingress(port, &up);
  sw.attach_egress(port, &down, per_vl(config_.nic.rx_buffer, sp.vls));
  port_links_[s][port] = {&up, &down, ep, tier, -1, -1, e, static_cast<int>(links_.size()) - 2,
                          static_cast<int>(links_.size()) - 1};
}

testbench::AggregationTree Fabric::attach_aggregation_ports(const SwitchTree& tree, const std::vector<int>& ranks,
                                                            TopologyGraph& routed, stats::Registry& stats) {
  testbench::AggregationTree aggregation;
  aggregation.rank_node = tree.node_of;
  aggregation.parent = tree.parent;
  std::vector<int> next_port(graph_.switches.size());
  for (std::size_t s = 0; s < next_port.size(); ++s) next_port[s] = graph_.switches[s].radix;
  auto aggregation_port = [&](int node, const std::string& facing) {
    const int s = tree.switches[node], port = next_port[s]++, e = routed.endpoints();
    attach_nic(e, "agg_" + graph_.switches[s].name + "_" + facing, s, port, aggregation_link(config_), "aggregation", stats);
    routed.host_switch.push_back(s);
    routed.host_port.push_back(port);
    aggregation.endpoints.push_back(e);
    return static_cast<int>(ranks.size()) + static_cast<int>(aggregation.endpoints.size()) - 1;
  };
  for (std::size_t r = 0; r < ranks.size(); ++r)
    aggregation.rank_port.push_back(aggregation_port(tree.node_of[r], "ep" + std::to_string(ranks[r])));
  for (std::size_t a = 0; a < tree.switches.size(); ++a) {
    const int parent = tree.parent[a];
    const bool root = parent < 0;
    aggregation.up_port.push_back(root ? -1 : aggregation_port(static_cast<int>(a), graph_.switches[tree.switches[parent]].name));
    aggregation.child_port.push_back(root ? -1 : aggregation_port(parent, graph_.switches[tree.switches[a]].name));
  }
  return aggregation;
}

void Fabric::connect_switch_cables() {
  const int vls = config_.switch_params.vls;
  for (const Cable& c : graph_.cables) {
    const bool crosses = switch_lane_[c.a] != switch_lane_[c.b];
    const int ab_at = static_cast<int>(links_.size()), ba_at = ab_at + 1;
    PortLinks& at_a = port_links_[c.a][c.a_port];
    PortLinks& at_b = port_links_[c.b][c.b_port];
    at_a = {nullptr, nullptr, graph_.switches[c.b].name, c.tier, c.b, c.b_port, -1, ba_at, ab_at};
    at_b = {nullptr, nullptr, graph_.switches[c.a].name, c.tier, c.a, c.a_port, -1, ab_at, ba_at};
    tlm_fabric::Switch* a = switches_[c.a].get();
    tlm_fabric::Switch* b = switches_[c.b].get();
    if (!a && !b) {  // another process's cable
      skip_link();
      skip_link();
      if (crosses) {
        tlm_fabric::Link::skip_lanes();
        tlm_fabric::Link::skip_lanes();
      }
      continue;
    }
    const std::string an = graph_.switches[c.a].name + "_p" + std::to_string(c.a_port);
    const std::string bn = graph_.switches[c.b].name + "_p" + std::to_string(c.b_port);
    auto& ab = add_link(an + "_to_" + bn, config_.topology.fabric_link);
    auto& ba = add_link(bn + "_to_" + an, config_.topology.fabric_link);
    at_a.ingress = at_b.egress = &ba;
    at_a.egress = at_b.ingress = &ab;
    if (crosses) {
      cross_lanes(c.a, ab, c.b);
      cross_lanes(c.b, ba, c.a);
    }
    // An end on switch `sw` sends on `out` and receives from `in`, its transmitter holding
    // the credits of the input buffer of switch `peer`.
    auto connect_end = [&](tlm_fabric::Switch* sw, int port, const std::string& end, tlm_fabric::Link& out,
                           tlm_fabric::Link& in, int peer) {
      if (!sw) return bind_far_end(end, in, out);
      sw->out[port].bind(out.tx);
      in.rx.bind(sw->in[port]);
      sw->attach_egress(port, &out, per_vl(switch_params_of(peer).input_buffer, vls));
      sw->attach_ingress(port, &in);
    };
    connect_end(a, c.a_port, an, ab, ba, c.b);
    connect_end(b, c.b_port, bn, ba, ab, c.a);
  }
}

void Fabric::terminate_open_ports() {
  for (std::size_t s = 0; s < switches_.size(); ++s)
    for (std::size_t p = 0; switches_[s] && p < port_links_[s].size(); ++p) {
      if (port_links_[s][p].egress) continue;
      const std::string open = graph_.switches[s].name + "_p" + std::to_string(p) + "_open";
      unused_.push_back(std::make_unique<tlm_fabric::UnconnectedPort>(open.c_str()));
      switches_[s]->out[p].bind(unused_.back()->from_egress);
      unused_.back()->to_ingress.bind(switches_[s]->in[p]);
    }
}

void Fabric::collect_flows() {
  const int n = graph_.endpoints();
  const sc_time measure_from = to_sc(config_.simulation.warmup);
  flows_ = std::make_unique<FlowStats>(ideal_fct());
  for (auto& nic : nics_)
    if (nic) nic->set_flow_handler([this, measure_from, n](const tlm_fabric::FlowRecord& f) {
      if (collective_) collective_->on_flow(f);  // sharp: aggregation traffic lands here
      if (!(f.start >= measure_from && f.src < n && f.dst < n)) return;
      // In a parallel window each lane keeps its own; they go in at the window's end.
      if (tlm_fabric::WakeQueue::instance().in_window()) lane_flows_[tlm_fabric::detail::lane].push_back(f);
      else flows_->add(f);
    });
  if (lanes_ > 1) tlm_fabric::WakeQueue::instance().at_window_end([this] { merge_lane_flows(); });
}

void Fabric::build_collective(const testbench::AggregationTree& aggregation) {
  testbench::CollectiveParams cp = config_.collective;
  cp.ranks = place_ranks();
  cp.tree = aggregation;  // sharp only
  cp.fast_forward = fast_forward();
  cp.qps_made = qps_made_;
  std::vector<tlm_fabric::Nic*> nics;
  for (auto& nic : nics_) nics.push_back(nic.get());
  collective_ = std::make_unique<testbench::CollectiveRunner>("collective", nics, cp, nic_lane_);
  // A collective's end spans every lane: it runs between windows, at the time its last
  // landing is visible, no earlier than the window it landed in ends.
  if (lanes_ > 1) lookahead_ = std::min(lookahead_, collective_->least_completion_delay());
}

void Fabric::build_chakra() {
  chakra::ExecutorParams p = config_.chakra.params;
  p.ranks = place_ranks();
  p.fast_forward = fast_forward();
  p.qps_made = qps_made_;
  std::vector<tlm_fabric::Nic*> nics;
  for (auto& nic : nics_) nics.push_back(nic.get());
  chakra_trace_ = run_trace(config_);
  chakra_ = std::make_unique<chakra::Executor>("chakra", nics, chakra_trace_, p, nic_lane_);
  // A graph ends between windows, at the time its last landing is visible.
  if (lanes_ > 1) lookahead_ = std::min(lookahead_, chakra_->least_completion_delay());
}

testbench::FastForwardParams Fabric::fast_forward() {
  testbench::FastForwardParams ff = config_.simulation.fast_forward;
  if (!ff.on) return ff;
  skipped_ = std::make_unique<SkippedPackets>(*this, lanes_);
  ff.count_links = [this](int src, int dst, std::uint32_t qpn, std::uint64_t bytes) {
    skipped_->count(src, dst, qpn, bytes);
  };
  if (lanes_ > 1) tlm_fabric::WakeQueue::instance().at_window_end([this] { skipped_->merge(); });
  return ff;
}

std::vector<int> Fabric::endpoint_lanes(const TopologyGraph& routed) const {
  std::vector<int> lane(nics_.size(), 0);  // (aggregation ports: their switch's)
  for (std::size_t e = 0; e < routed.host_switch.size() && !switches_.empty(); ++e)
    lane[e] = switch_lane_[static_cast<std::size_t>(routed.host_switch[e])];
  return lane;
}

void Fabric::watchdog() {
  // Progress = any packet put on any wire, or anything still on its way (a slow or long
  // link carries a frame or a credit for longer than an interval). Packets held somewhere
  // while no wire moved for a whole interval and nothing is on its way means the fabric
  // cannot progress.
  std::uint64_t moved = 0;
  for (const auto& link : links_)
    if (link) moved += link->counters().packets;
  std::uint64_t held = pool_.in_use();
  bool moving = on_its_way();
  if (tlm_fabric::distributed::active()) {  // the whole fabric's: every process decides alike
    moved = tlm_fabric::distributed::sum_over_processes(moved);
    held = tlm_fabric::distributed::sum_over_processes(held);
    moving = tlm_fabric::distributed::min_over_processes(moving ? 0 : 1) == 0;
  }
  if (moved == last_progress_ && held > 0 && !moving) {
    stall_ = diagnose_stall();
    sc_core::sc_stop();
    return;
  }
  last_progress_ = moved;
  watchdog_event_.notify(to_sc(config_.simulation.watchdog));
}

bool Fabric::on_its_way() const {
  // A frame being serialised or propagating, or a credit return or PFC resume on a
  // reverse wire: each arrives at a known time and lets something move.
  const sc_core::sc_time now = tlm_fabric::sim_now();
  if (pool_.arriving_after(now)) return true;
  for (const auto& nic : nics_)
    if (nic && nic->egress_port().unblocking_after(now)) return true;
  for (std::size_t s = 0; s < switches_.size(); ++s)
    for (std::size_t p = 0; switches_[s] && p < port_links_[s].size(); ++p)
      if (switches_[s]->egress_port(static_cast<int>(p)).unblocking_after(now)) return true;
  return false;
}

nlohmann::json Fabric::diagnose_stall() const {
  // Wait-for graph between input buffers: a blocked head in (switch, input,
  // VL) waits for the input buffer at the other end of its output.
  using Node = std::tuple<int, int, int>;
  std::map<Node, std::vector<Node>> waits;
  nlohmann::json blocked = nlohmann::json::array();
  // PFC pauses priorities, credit flow control VLs.
  const std::string unit = config_.link.flow_control == tlm_fabric::FlowControl::pfc ? ".prio" : ".vl";
  auto label = [&](const Node& n) {
    return graph_.switches[std::get<0>(n)].name + ".port" + std::to_string(std::get<1>(n)) + unit +
           std::to_string(std::get<2>(n));
  };
  // Each switch's blocked heads from the process running it (sim/gather.h).
  std::vector<Entry> heads_of;
  for (std::size_t s = 0; s < switches_.size(); ++s) {
    if (!runs_switch(static_cast<int>(s))) continue;
    nlohmann::json heads = nlohmann::json::array();
    for (const auto& b : switches_[s]->blocked_heads())
      heads.push_back({s, b.in_port, b.in_vl, b.out_port, b.out_vl, b.reason});
    if (!heads.empty()) heads_of.emplace_back(s, std::move(heads));
  }
  for (const auto& heads : gather_entries(heads_of))
    for (const auto& h : heads) {
      const auto s = h[0].get<std::size_t>();
      const int out_port = h[3].get<int>();
      const PortLinks& pl = port_links_[s][static_cast<std::size_t>(out_port)];
      const Node from{static_cast<int>(s), h[1].get<int>(), h[2].get<int>()};
      blocked.push_back({{"buffer", label(from)},
                         {"waits_for_output", graph_.switches[s].name + ".port" + std::to_string(out_port)},
                         {"reason", h[5]},
                         {"downstream", pl.peer}});
      if (pl.peer_switch >= 0) waits[from].push_back(Node{pl.peer_switch, pl.peer_port, h[4].get<int>()});
    }
  // A cycle in the wait-for graph is a credit/PFC deadlock (cyclic buffer dependency).
  std::vector<Node> cycle;
  std::map<Node, int> state;  // 1 on stack, 2 done
  std::vector<Node> stack;
  std::function<bool(const Node&)> dfs = [&](const Node& n) {
    state[n] = 1;
    stack.push_back(n);
    for (const Node& m : waits[n]) {
      if (state[m] == 1) {
        auto it = std::find(stack.begin(), stack.end(), m);
        cycle.assign(it, stack.end());
        cycle.push_back(m);
        return true;
      }
      if (state[m] == 0 && dfs(m)) return true;
    }
    stack.pop_back();
    state[n] = 2;
    return false;
  };
  for (const auto& [n, unused] : waits)
    if (state[n] == 0 && dfs(n)) break;
  nlohmann::json names = nlohmann::json::array();
  for (const Node& n : cycle) names.push_back(label(n));
  nlohmann::json r{{"time_ns", tlm_fabric::sim_now().to_seconds() * 1e9},
                   {"packets_held", tlm_fabric::distributed::sum_over_processes(std::uint64_t{pool_.in_use()})},
                   {"blocked", blocked},
                   {"cycle", names}};
  if (!cycle.empty()) {
    r["diagnosis"] = "deadlock: cyclic buffer dependency (each buffer waits for the next one's credits or PAUSE)";
    r["advice"] = "break the cycle: route without turns that close it (up*/down*, D-mod-k on a Clos), put the "
                  "hops of a cycle on different VLs / priorities, or use a lossy class with end-to-end recovery";
  } else {
    r["diagnosis"] = blocked.empty() ? "no packet moved, yet packets are held: they wait in NICs or on links"
                                     : "no packet moved; blocked buffers found, but no cycle among them";
  }
  return r;
}

IdealFct Fabric::ideal_fct() const {
  std::vector<hw::PhyTiming> host;  // (an endpoint's cable another process makes: its configuration)
  const auto& links = config_.topology.links;
  for (std::size_t e = 0; e < up_.size(); ++e)
    host.push_back(up_[e] ? up_[e]->timing() : hw::PhyTiming(e < links.size() ? links[e].phy : aggregation_link(config_).phy));
  std::vector<tlm_fabric::SwitchParams> by_level{config_.switch_params};
  for (const auto& [level, params] : config_.tier_switch_params) {
    if (by_level.size() <= static_cast<std::size_t>(level)) by_level.resize(static_cast<std::size_t>(level) + 1, config_.switch_params);
    by_level[static_cast<std::size_t>(level)] = params;
  }
  return IdealFct(graph_, std::move(host), hw::PhyTiming(config_.topology.fabric_link.phy), std::move(by_level),
                  config_.nic.mtu.in_bytes());
}

tlm_fabric::Link& Fabric::add_link(const std::string& name, const tlm_fabric::LinkParams& params) {
  tlm_fabric::LinkParams p = params;
  p.seed = hw::mix_seed(config_.simulation.seed, 5000 + links_.size());  // bit-error stream per link
  links_.push_back(std::make_unique<tlm_fabric::Link>(name.c_str(), p));
  return *links_.back();
}

int Fabric::skip_link() {
  links_.emplace_back();
  return static_cast<int>(links_.size()) - 1;
}

void Fabric::bind_far_end(const std::string& name, tlm_fabric::Link& to_far, tlm_fabric::Link& from_far) {
  // Every call over the cable crosses processes as bytes: none reaches the stub.
  unused_.push_back(std::make_unique<tlm_fabric::UnconnectedPort>((name + "_in_another_process").c_str()));
  to_far.rx.bind(unused_.back()->from_egress);
  unused_.back()->to_ingress.bind(from_far.tx);
}

std::string Fabric::switch_name(int s) const {
  const auto& sw = switches_[static_cast<std::size_t>(s)];
  return sw ? std::string(sw->name()) : std::string(name()) + "." + graph_.switches[static_cast<std::size_t>(s)].name;
}

std::string Fabric::nic_name(int e) const {
  const auto& nic = nics_[static_cast<std::size_t>(e)];
  return nic ? std::string(nic->name()) : elsewhere_names_[static_cast<std::size_t>(e)];
}

const tlm_fabric::LinkCounters& Fabric::link_counters(int k) const {
  return link_counters_.empty() ? links_[static_cast<std::size_t>(k)]->counters() : link_counters_[static_cast<std::size_t>(k)];
}

void Fabric::sample() {
  const sc_time now = tlm_fabric::sim_now();
  const double now_ns = now.to_seconds() * 1e9;
  const std::size_t k = sample_times_ns_.size();  // this sample's index
  sample_times_ns_.push_back(now_ns);
  // What each NIC's and switch's process reads of it, all of it in process 0.
  sampled_rates_.resize(nics_.size());
  for (std::size_t e = 0; e < nics_.size(); ++e) {
    sampled_rates_[e].clear();
    if (runs_nic(static_cast<int>(e))) nics_[e]->rdma().requester_rates(now, sampled_rates_[e]);
  }
  sampled_ingress_.resize(switches_.size());
  sampled_egress_.resize(switches_.size());
  for (std::size_t s = 0; s < switches_.size(); ++s) {
    sampled_ingress_[s].clear();
    sampled_egress_[s].clear();
    if (!runs_switch(static_cast<int>(s))) continue;
    // Before the switches act at this instant, as edge by edge (its wake-up was made first).
    switches_[s]->settle_admissions(now, false);
    switches_[s]->occupancy(sampled_ingress_[s], sampled_egress_[s]);
  }
  if (tlm_fabric::distributed::active()) gather_sample();
  rate_series_.resize(nics_.size());
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t e = 0; e < nics_.size(); ++e) {
    const std::vector<tlm_fabric::QpRate>& rates = sampled_rates_[e];
    RateSeries& series = rate_series_[e];
    if (rates.empty() && series.lowest.empty()) continue;
    series.lowest.resize(k, kNone);
    series.mean.resize(k, kNone);
    double lowest = kNone, sum = 0;
    tlm_fabric::CsvRow row;
    for (const auto& r : rates) {
      lowest = std::isnan(lowest) ? r.gbps : std::min(lowest, r.gbps);
      sum += r.gbps;
      if (qp_rate_log_) {
        row.clear();
        const std::string_view line = row.add(now_ns, 12).add(e).add(r.qpn).add(r.gbps, 9).line();
        qp_rate_log_->write(line.data(), static_cast<std::streamsize>(line.size()));
      }
    }
    series.lowest.push_back(lowest);
    series.mean.push_back(rates.empty() ? kNone : sum / static_cast<double>(rates.size()));
  }
  std::uint64_t ingress_total = 0, egress_total = 0;
  for (std::size_t s = 0; s < switches_.size(); ++s) {
    const auto& ingress = sampled_ingress_[s];
    const auto& egress = sampled_egress_[s];
    for (std::size_t p = 0; p < ingress.size(); ++p) {
      ingress_total += ingress[p];
      egress_total += egress[p];
      if (!occupancy_log_ || (ingress[p] == 0 && egress[p] == 0)) continue;
      tlm_fabric::CsvRow row;
      const std::string_view line =
          row.add(now_ns, 12).add(switch_name(static_cast<int>(s))).add(p).add(ingress[p]).add(egress[p]).line();
      occupancy_log_->write(line.data(), static_cast<std::streamsize>(line.size()));
    }
  }
  ingress_totals_.push_back(ingress_total);
  egress_totals_.push_back(egress_total);
  sampler_->notify_at(now + to_sc(config_.output.sample_interval));
}

void Fabric::gather_sample() {
  // Every process samples at the same instants, between windows: this process's NICs'
  // rates and switches' occupancy to process 0.
  std::vector<unsigned char> mine;
  auto put = [&mine](auto v) { tlm_fabric::WakeQueue::put(mine, v); };
  for (std::size_t e = 0; e < nics_.size(); ++e) {
    if (sampled_rates_[e].empty()) continue;
    put(std::uint64_t{e});
    put(std::uint64_t{sampled_rates_[e].size()});
    for (const auto& r : sampled_rates_[e]) {
      put(std::int64_t{r.qpn});
      put(r.gbps);
    }
  }
  put(~std::uint64_t{0});  // the switches follow
  for (std::size_t s = 0; s < switches_.size(); ++s) {
    if (sampled_ingress_[s].empty()) continue;
    put(std::uint64_t{s});
    put(std::uint64_t{sampled_ingress_[s].size()});
    for (std::size_t p = 0; p < sampled_ingress_[s].size(); ++p) {
      put(sampled_ingress_[s][p]);
      put(sampled_egress_[s][p]);
    }
  }
  const auto all = tlm_fabric::distributed::gather(mine, 0);
  for (std::size_t from = 1; from < all.size(); ++from) {
    const unsigned char* in = all[from].data();
    auto get = [&in](auto& v) { in = tlm_fabric::WakeQueue::get(in, v); };
    for (std::uint64_t e, n; get(e), e != ~std::uint64_t{0};) {
      get(n);
      for (std::uint64_t i = 0; i < n; ++i) {
        std::int64_t qpn;
        double gbps;
        get(qpn);
        get(gbps);
        sampled_rates_[e].push_back({static_cast<int>(qpn), gbps});
      }
    }
    for (std::uint64_t s, n; in < all[from].data() + all[from].size();) {
      get(s);
      get(n);
      sampled_ingress_[s].resize(n);
      sampled_egress_[s].resize(n);
      for (std::uint64_t p = 0; p < n; ++p) {
        get(sampled_ingress_[s][p]);
        get(sampled_egress_[s][p]);
      }
    }
  }
}

void Fabric::set_qp_rate_log(std::ostream& log) {
  qp_rate_log_ = &log;
  log << "time_ns,endpoint,qpn,cc_rate_gbps\n";
}

void Fabric::set_occupancy_log(std::ostream& log) {
  occupancy_log_ = &log;
  log << "time_ns,switch,port,ingress_bytes,egress_bytes\n";
}

nlohmann::json Fabric::timeseries() const {
  // Per endpoint with QPs posted to and congestion control: the lowest and mean CC rate of
  // its requesters at each sample (each QP's in qp_rates.csv).
  nlohmann::json rates = nlohmann::json::array();
  for (std::size_t e = 0; e < rate_series_.size(); ++e)
    if (!rate_series_[e].lowest.empty())
      rates.push_back({{"endpoint", e},
                       {"lowest_qp_rate_gbps", rate_series_[e].lowest},
                       {"mean_qp_rate_gbps", rate_series_[e].mean}});
  return {{"interval_ns", config_.output.sample_interval.in_ns()},
          {"time_ns", sample_times_ns_},
          {"ingress_bytes", ingress_totals_},
          {"egress_bytes", egress_totals_},
          {"rdma_rates", rates}};
}

std::vector<int> Fabric::place_ranks() const {
  const int endpoints = graph_.endpoints();
  const int n = config_.collective_ranks ? config_.collective_ranks : endpoints;
  std::vector<int> order(endpoints);
  std::iota(order.begin(), order.end(), 0);
  if (config_.placement == RankPlacement::spread) {
    // Round robin over switches: consecutive ranks sit on different leaves.
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const auto key = [&](int e) {
        int k = 0;
        for (int x = 0; x < e; ++x) k += graph_.host_switch[x] == graph_.host_switch[e];
        return std::make_pair(k, graph_.host_switch[e]);
      };
      return key(a) < key(b);
    });
  } else if (config_.placement == RankPlacement::random) {
    std::mt19937_64 rng(hw::mix_seed(config_.simulation.seed, 7000));
    for (int i = endpoints - 1; i > 0; --i) std::swap(order[i], order[rng() % static_cast<std::uint64_t>(i + 1)]);
  }
  order.resize(n);
  if (config_.placement == RankPlacement::rail) {
    // The job takes the first n NICs (whole servers); its ring runs rail by rail (GPU 0 of
    // every server, then GPU 1, ...) so all but one hop per rail stay on a rail leaf.
    const int gpus = config_.topology.rail.gpus_per_server;
    std::stable_sort(order.begin(), order.end(),
                     [gpus](int a, int b) { return std::make_pair(a % gpus, a / gpus) < std::make_pair(b % gpus, b / gpus); });
  }
  return order;
}

namespace {

/// Which switches have hosts (back to back: none).
std::vector<bool> switches_with_hosts(const TopologyGraph& graph) {
  const int switches = static_cast<int>(graph.switches.size());
  std::vector<bool> has_host(static_cast<std::size_t>(switches), false);
  for (int s : graph.host_switch)
    if (s >= 0 && s < switches) has_host[static_cast<std::size_t>(s)] = true;
  return has_host;
}

/// Whether the workload acts on NICs of several lanes at no delay, which keeps the fabric
/// on one lane: a perftest's runner (two NICs at once), a collective whose landings are
/// visible at once (its end runs between windows, at the latest landing's visible time,
/// which could fall inside one), a Chakra trace's alike. (An in-network reduction's node
/// acts on its inputs at once, but they all land in its switch's lane.)
bool coupled_workload(const FabricConfig& config) {
  const bool visible_at_once = (config.collective_enabled || config.chakra_enabled) &&
                               config.nic.host.least_completion_delay() == sc_core::SC_ZERO_TIME;
  return config.perftest_enabled || visible_at_once;
}

}  // namespace

void Fabric::plan_lanes() {
  // A lane per group of switches with hosts (a NIC and its source wake in its switch's
  // lane: the NIC's own cable never crosses lanes), the other switches shared out in
  // index order; no more lanes than switches with hosts.
  const int switches = static_cast<int>(graph_.switches.size());
  std::vector<int> host_switches, others;
  const std::vector<bool> has_host = switches_with_hosts(graph_);
  for (int s = 0; s < switches; ++s) (has_host[static_cast<std::size_t>(s)] ? host_switches : others).push_back(s);
  const bool coupled = coupled_workload(config_);
  // Several processes (tlm/distributed.h): simulation.threads lanes each, at least one.
  const int processes = tlm_fabric::distributed::size();
  if (processes > 1) refuse_over_processes(config_, processes, static_cast<int>(host_switches.size()), coupled);
  lanes_ = coupled ? 1
                   : std::max(1, std::min(config_.simulation.threads * processes, static_cast<int>(host_switches.size())));
  switch_lane_.assign(static_cast<std::size_t>(switches), 0);
  // Switches with hosts in blocks of consecutive indices (neighbours in a tier share a
  // lane). Each other switch, in index order (tier by tier up from the hosts), joins the
  // lane most of its placed neighbours are in, among the lanes not yet holding their
  // share of these switches (fewer cables between lanes: fewer calls deferred), the
  // emptier lane on a tie (a spine, linked to every leaf alike).
  for (std::size_t i = 0; i < host_switches.size(); ++i)
    switch_lane_[static_cast<std::size_t>(host_switches[i])] =
        static_cast<int>(i * static_cast<std::size_t>(lanes_) / host_switches.size());
  std::vector<int> placed(static_cast<std::size_t>(switches), 0), taken(static_cast<std::size_t>(lanes_), 0);
  for (int s : host_switches) placed[static_cast<std::size_t>(s)] = 1;
  const int share = (static_cast<int>(others.size()) + lanes_ - 1) / lanes_;
  for (int s : others) {
    std::vector<int> neighbours(static_cast<std::size_t>(lanes_), 0);
    for (const Cable& c : graph_.cables) {
      const int other = c.a == s ? c.b : c.b == s ? c.a : -1;
      if (other >= 0 && placed[static_cast<std::size_t>(other)]) ++neighbours[static_cast<std::size_t>(switch_lane_[other])];
    }
    int best = -1;
    for (int k = 0; k < lanes_; ++k) {
      const auto at = static_cast<std::size_t>(k);
      if (taken[at] >= share) continue;
      const auto b = static_cast<std::size_t>(best);
      if (best < 0 || neighbours[at] > neighbours[b] || (neighbours[at] == neighbours[b] && taken[at] < taken[b])) best = k;
    }
    switch_lane_[static_cast<std::size_t>(s)] = best;
    placed[static_cast<std::size_t>(s)] = 1;
    ++taken[static_cast<std::size_t>(best)];
  }
  tlm_fabric::WakeQueue::instance().set_lanes(lanes_);
  if (processes > 1) {  // consecutive lanes (neighbouring switches) in one process
    std::vector<int> process_of(static_cast<std::size_t>(lanes_));
    for (int k = 0; k < lanes_; ++k) process_of[static_cast<std::size_t>(k)] = k * processes / lanes_;
    tlm_fabric::WakeQueue::instance().set_processes(process_of);
  }
  tlm_fabric::WakeQueue::instance().set_engine(config_.simulation.engine);
  pool_.set_lanes(lanes_);
  lane_flows_.resize(static_cast<std::size_t>(lanes_));
  lookahead_ = sc_core::sc_max_time();
}

void Fabric::refuse_over_processes(const FabricConfig& config, int processes) {
  const std::vector<bool> has_host = switches_with_hosts(build_graph(config.topology));
  refuse_over_processes(config, processes, static_cast<int>(std::count(has_host.begin(), has_host.end(), true)),
                        coupled_workload(config));
}

void Fabric::refuse_over_processes(const FabricConfig& config, int processes, int host_switches, bool coupled) {
  // What runs over processes: the switches, NICs, traffic sources, collectives and Chakra
  // traces, whose calls across lanes cross as bytes. What reads or acts on several lanes at once does not.
  auto refuse = [&](const std::string& what) {
    throw std::invalid_argument(what + ": not run over several processes (started as one of " +
                                std::to_string(processes) + "); run it in one process");
  };
  if (config.perftest_enabled) refuse("perftest");
  if (coupled) refuse("a workload acting on NICs of several lanes at once");
  if (config.simulation.fast_forward_asked) refuse("simulation.fast_forward");
  if (config.output.trace.enabled()) refuse("output.trace");
  if (!config.switch_params.waveform.dir.empty()) refuse("switch.rtl_trace");
  if (config.simulation.engine != tlm_fabric::Engine::wheel) refuse("simulation.engine: kernel");
  if (host_switches < processes)
    throw std::invalid_argument("the fabric has " + std::to_string(host_switches) +
                                " switches with hosts, fewer than the " + std::to_string(processes) +
                                " processes: each process runs at least one");
}

void Fabric::cross_lanes(int from, tlm_fabric::Link& link, int to) {
  // The least time from a call across the link to its effect: a packet's header from the
  // transmitting switch's grant, or a credit from the receiving switch's transmit decision
  // (from its admission of a corrupted frame where the link has bit errors), or a PAUSE.
  link.set_lanes(switch_lane_[from], switch_lane_[to], pool_);
  if (const auto& sw = switches_[from]) lookahead_ = std::min(lookahead_, sw->least_start_delay() + link.least_forward_delay());
  if (const auto& sw = switches_[to])
    lookahead_ = std::min(lookahead_, link.least_backward_delay(sw->least_credit_delay(link.bit_errors())));
}

void Fabric::merge_lane_flows() {
  // Each lane's records are in completion order; FlowStats takes them in that order, equal
  // completion times lane by lane (std::merge takes the first range's first), in its own
  // order within an instant. The buffers are kept: no allocation per window.
  auto by_end = [](const tlm_fabric::FlowRecord& a, const tlm_fabric::FlowRecord& b) { return a.end < b.end; };
  merged_flows_.clear();
  for (auto& records : lane_flows_) {
    if (records.empty()) continue;
    merged_flows_.swap(merging_flows_);
    merged_flows_.resize(merging_flows_.size() + records.size());
    std::merge(merging_flows_.begin(), merging_flows_.end(), records.begin(), records.end(), merged_flows_.begin(), by_end);
    records.clear();
  }
  // Several processes: each keeps its own, gathered into process 0's after the run.
  if (tlm_fabric::distributed::active()) process_flows_.insert(process_flows_.end(), merged_flows_.begin(), merged_flows_.end());
  else
    for (const auto& f : merged_flows_) flows_->add(f);
}

void Fabric::gather_flows() {
  struct Wire {  // a flow record as bytes
    std::int64_t src, dst;
    std::uint64_t bytes, flow, start, end;
  };
  std::vector<unsigned char> mine(process_flows_.size() * sizeof(Wire));
  for (std::size_t k = 0; k < process_flows_.size(); ++k) {
    const tlm_fabric::FlowRecord& f = process_flows_[k];
    const Wire w{f.src, f.dst, f.bytes, f.flow, f.start.value(), f.end.value()};
    std::memcpy(mine.data() + k * sizeof w, &w, sizeof w);
  }
  process_flows_.clear();
  const auto all = tlm_fabric::distributed::gather(mine, 0);
  if (tlm_fabric::distributed::rank() != 0) return;
  // Each process's flows in completion order: merged by completion time (FlowStats orders
  // the flows of one instant itself).
  std::vector<tlm_fabric::FlowRecord> flows, merging, theirs;
  for (const auto& bytes : all) {
    theirs.clear();
    for (std::size_t at = 0; at + sizeof(Wire) <= bytes.size(); at += sizeof(Wire)) {
      Wire w;
      std::memcpy(&w, bytes.data() + at, sizeof w);
      theirs.push_back({static_cast<int>(w.src), static_cast<int>(w.dst), w.bytes, static_cast<std::uint32_t>(w.flow),
                        tlm_fabric::from_ticks(w.start), tlm_fabric::from_ticks(w.end)});
    }
    flows.swap(merging);
    flows.resize(merging.size() + theirs.size());
    std::merge(merging.begin(), merging.end(), theirs.begin(), theirs.end(), flows.begin(),
               [](const tlm_fabric::FlowRecord& a, const tlm_fabric::FlowRecord& b) { return a.end < b.end; });
  }
  for (const auto& f : flows) flows_->add(f);
}

void Fabric::gather_link_counters() {
  // Every link by its index, zero where this process does not transmit on it.
  std::vector<std::uint64_t> values(links_.size() * 4, 0);
  for (std::size_t k = 0; k < links_.size(); ++k)
    if (const auto& link = links_[k]) {
      const tlm_fabric::LinkCounters& c = link->counters();
      const std::uint64_t mine[] = {c.packets, c.payload_bytes, c.corrupted, c.busy.value()};
      std::copy(std::begin(mine), std::end(mine), values.begin() + static_cast<std::ptrdiff_t>(4 * k));
    }
  tlm_fabric::distributed::sum_over_processes(values);
  link_counters_.resize(links_.size());
  for (std::size_t k = 0; k < links_.size(); ++k) {
    tlm_fabric::LinkCounters& c = link_counters_[k];
    c.packets = values[4 * k];
    c.payload_bytes = values[4 * k + 1];
    c.corrupted = values[4 * k + 2];
    c.busy = tlm_fabric::from_ticks(values[4 * k + 3]);
  }
}

bool Fabric::runs_switch(int s) const {
  return tlm_fabric::WakeQueue::instance().owns(switch_lane_[static_cast<std::size_t>(s)]);
}

bool Fabric::runs_nic(int e) const {
  return tlm_fabric::WakeQueue::instance().owns(nic_lane_[static_cast<std::size_t>(e)]);
}

void Fabric::keep_latency_breakdowns() {
  pool_.keep_breakdowns();
  const sc_time from = to_sc(config_.simulation.warmup);
  for (auto& sw : switches_)
    if (sw) sw->keep_latency_breakdown(from);
  for (auto& nic : nics_)
    if (nic) nic->keep_latency_breakdown();
}

void Fabric::set_packet_log(std::ostream& log) {
  packet_log_ = std::make_unique<tlm_fabric::PacketLog>(log, lanes_, config_.output.latency_breakdown);
  if (tlm_fabric::distributed::active()) packet_log_->gather_at_finish();
  if (lanes_ > 1) tlm_fabric::WakeQueue::instance().at_window_end([this] { packet_log_->window_ended(); });
  for (auto& nic : nics_)
    if (nic) nic->set_packet_log(packet_log_.get());
}

void Fabric::finish_packet_log() {
  if (packet_log_) packet_log_->finish();
}

void Fabric::set_trace(const tlm_fabric::TraceOptions& options, const std::string& dir) {
  trace_ = std::make_unique<tlm_fabric::FabricTrace>(options, lanes_);
  for (auto& sw : switches_) {
    sw->set_trace(trace_.get());
    const tlm_fabric::Switch* s = sw.get();
    trace_->lags([s] { return s->first_unadmitted_header(); });
  }
  for (auto& nic : nics_) nic->set_trace(trace_.get());
  if (collective_) collective_->set_trace(trace_.get());
  if (chakra_) chakra_->set_trace(trace_.get());
  trace_->open(dir);
  // The events go out where packets.csv's rows do: after each window, and in step with the kernel.
  if (lanes_ > 1) tlm_fabric::WakeQueue::instance().at_window_end([this] { trace_->window_ended(); });
}

std::vector<tlm_fabric::TraceFileRecord> Fabric::finish_trace() {
  if (!trace_) return {};
  return trace_->finish(sc_core::sc_time_stamp());
}

namespace {

// A random derangement: every source sends to one other endpoint, each receives once.
std::vector<int> random_derangement(int n, std::mt19937_64& rng) {
  std::vector<int> perm(n);
  bool fixed_point = true;
  while (fixed_point) {
    std::iota(perm.begin(), perm.end(), 0);
    for (int i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng() % static_cast<std::uint64_t>(i + 1)]);
    fixed_point = false;
    for (int i = 0; i < n; ++i) fixed_point = fixed_point || perm[i] == i;
  }
  return perm;
}

// Hotspot traffic of source `s`: hotspot_fraction of its messages to the hotspots, the
// rest uniformly over every other endpoint; empty when `s` is the only hotspot.
std::vector<testbench::Weighted> hotspot_destinations(int s, int n, const TrafficParams& t) {
  std::vector<testbench::Weighted> hot;
  for (int h : t.hotspots)
    if (h != s) hot.push_back({static_cast<std::uint64_t>(h), 0.0});
  if (hot.empty()) return hot;
  std::vector<testbench::Weighted> d;  // every other endpoint, then the hotspots again
  const double rest = (1.0 - t.hotspot_fraction) / static_cast<double>(n - 1);
  for (int x = 0; x < n; ++x)
    if (x != s) d.push_back({static_cast<std::uint64_t>(x), rest});
  for (auto& w : hot) w.weight = t.hotspot_fraction / static_cast<double>(hot.size());
  d.insert(d.end(), hot.begin(), hot.end());
  return d;
}

testbench::Destinations one(int dst) { return testbench::Destinations({{static_cast<std::uint64_t>(dst), 1.0}}); }

}  // namespace

void Fabric::add_source(int src, testbench::Destinations dsts, std::vector<testbench::Weighted> msg_sizes,
                        std::uint32_t flow, const std::vector<int>& sls, double load, std::uint64_t messages,
                        hw::Time start) {
  const auto& t = config_.traffic;
  const std::uint64_t mtu = config_.nic.mtu.in_bytes();
  // A source another process runs: its seed's index and its QP numbers taken, and the
  // QPs of its destinations that run here made.
  auto create_qp = [this](int e, int peer, int peer_qpn, int sl) {
    const auto& nic = nics_[static_cast<std::size_t>(e)];
    int& made = qps_made_[static_cast<std::size_t>(e)];
    const int qpn = nic ? nic->rdma().create_qp(peer, peer_qpn, sl) : made;
    made = qpn + 1;
    return qpn;
  };
  if (!nics_[static_cast<std::size_t>(src)]) {
    if (t.transport == TrafficTransport::rdma)
      for (std::size_t i = 0; i < dsts.size(); ++i)
        for (int sl : sls) {
          const int dst = dsts.endpoint(i);
          create_qp(dst, src, create_qp(src, dst, 0, sl), sl);
        }
    sources_.emplace_back();
    return;
  }
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
  g.sls = sls;
  g.load = load;
  g.arrival = t.arrival;
  g.burst_length = t.burst_length;
  g.start = to_sc(start);
  g.stop = to_sc(config_.simulation.duration);
  g.max_messages = messages;
  g.seed = hw::mix_seed(config_.simulation.seed, sources_.size() + 1);
  if (t.transport == TrafficTransport::rdma)
    for (std::size_t i = 0; i < g.destinations.size(); ++i)
      for (int sl : sls) {
        // One RC QP pair per (source, destination, service level) for this generator.
        const int dst = g.destinations.endpoint(i);
        const int qa = create_qp(src, dst, 0, sl);
        nics_[src]->rdma().connect(qa, create_qp(dst, src, qa, sl));
        g.qps.push_back(qa);
      }
  const std::string name = "gen" + std::to_string(sources_.size()) + "_ep" + std::to_string(src);
  if (!switches_.empty()) tlm_fabric::WakeQueue::instance().building_lane(switch_lane_[graph_.host_switch[src]]);
  sources_.push_back(std::make_unique<testbench::TrafficSource>(name.c_str(), *nics_[src], g));
}

void Fabric::build_traffic() {
  const auto& t = config_.traffic;
  const int n = graph_.endpoints();
  std::mt19937_64 rng(hw::mix_seed(config_.simulation.seed, 0));
  qps_made_.assign(nics_.size(), 0);
  std::vector<testbench::Weighted> sizes;
  for (const auto& s : t.message_sizes) sizes.push_back({s.size.in_bytes(), s.weight});
  if (sizes.empty()) sizes.push_back({t.message_size.in_bytes(), 1.0});
  const hw::Time zero = hw::Time::seconds(0);

  switch (t.pattern) {
    case TrafficPattern::none: break;
    case TrafficPattern::uniform:
      for (int s = 0; s < n; ++s)
        add_source(s, testbench::Destinations::all_but(s, n), sizes, 0, t.sls, t.load, t.messages, zero);
      break;
    case TrafficPattern::permutation: {
      const std::vector<int> perm = random_derangement(n, rng);
      for (int s = 0; s < n; ++s) add_source(s, one(perm[s]), sizes, 0, t.sls, t.load, t.messages, zero);
      break;
    }
    case TrafficPattern::hotspot:
      for (int s = 0; s < n; ++s) {
        std::vector<testbench::Weighted> d = hotspot_destinations(s, n, t);
        if (d.empty())
          add_source(s, testbench::Destinations::all_but(s, n), sizes, 0, t.sls, t.load, t.messages, zero);
        else
          add_source(s, testbench::Destinations(std::move(d)), sizes, 0, t.sls, t.load, t.messages, zero);
      }
      break;
    case TrafficPattern::incast: {
      std::vector<int> senders = t.incast_senders;
      if (senders.empty())
        for (int s = 0; s < n; ++s)
          if (s != t.incast_target) senders.push_back(s);
      for (int s : senders)
        add_source(s, one(t.incast_target), sizes, static_cast<std::uint32_t>(s), t.sls, t.load, t.messages, zero);
      break;
    }
    case TrafficPattern::explicit_flows:
      for (std::size_t f = 0; f < t.flows.size(); ++f) {
        const auto& fl = t.flows[f];
        add_source(fl.src, one(fl.dst), {{fl.message_size.in_bytes(), 1.0}}, static_cast<std::uint32_t>(f), fl.sls,
                   fl.load, fl.messages, fl.start);
      }
      break;
  }
}

}  // namespace fabricsim::sim
