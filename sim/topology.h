// Topology: the switch/endpoint graph a configuration describes, and the
// minimal-path forwarding tables computed on it (equal-cost next hops kept, so
// ECMP groups fall out of the graph: leaf-spine uplinks, fat-tree up-links).
//
// CODE FLOW
//   TopologyParams -> build_graph() -> TopologyGraph (switches with radix and
//   role, endpoint attachment, switch-switch cables with link params)
//   -> minimal_routes(): BFS from every endpoint's switch; next hops on shortest paths
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tlm/link.h"

namespace fabricsim::sim {

/// Shape of the fabric.
enum class TopologyKind {
  single_switch,   ///< one switch, endpoints on ports 0..n-1
  leaf_spine,      ///< two tiers: leaves with hosts and one uplink per spine
  fat_tree,        ///< three-tier k-ary fat tree (Al-Fares et al., SIGCOMM 2008)
  explicit_graph,  ///< switches, endpoints and cables listed by name
  back_to_back,    ///< two NICs cabled directly, no switch
};

/// Two-tier leaf-spine from a radix and an oversubscription ratio.
struct LeafSpineParams {
  int radix = 8;                 ///< ports per leaf and per spine, 2..256
  double oversubscription = 1;   ///< host ports : uplink ports on a leaf, 0.1..16
  int leaves = 0;                ///< leaves, 2..radix; 0: radix (a full spine)
  int hosts_per_leaf() const;
  int spines() const;            ///< one uplink from each leaf to each spine
  int leaf_count() const { return leaves > 0 ? leaves : radix; }
};

/// Explicit graph: nodes are named sw<i> and ep<j>; cables list node pairs.
struct ExplicitParams {
  int switches = 1;
  int endpoints = 2;
  std::vector<std::pair<std::string, std::string>> cables;  ///< e.g. {"ep0", "sw0"}, {"sw0", "sw1"}
};

struct TopologyParams {
  TopologyKind kind = TopologyKind::single_switch;
  int endpoints = 4;                            ///< single_switch: NICs, 1..switch.ports
  LeafSpineParams leaf_spine;
  int fat_tree_k = 4;                           ///< fat_tree: even k, k^3/4 hosts
  ExplicitParams explicit_graph;
  tlm_fabric::LinkParams fabric_link;           ///< switch-switch cables (`link` + topology.fabric_link)
  std::vector<tlm_fabric::LinkParams> links;    ///< per endpoint cable: `link` + topology.host_link + topology.links
  /// Endpoints the topology has.
  int endpoint_count() const;
};

/// One switch in the graph.
struct SwitchNode {
  std::string name;  ///< leaf3, spine0, edge1, agg2, core0, sw0
  int radix = 0;     ///< ports
  int level = 0;     ///< 0 leaf/edge, 1 spine/agg, 2 core
};

/// One switch-switch cable (two link directions).
struct Cable {
  int a = 0, a_port = 0;  ///< switch index and port
  int b = 0, b_port = 0;
  std::string tier;       ///< leaf-spine, edge-agg, agg-core, switch-switch
};

struct TopologyGraph {
  std::vector<SwitchNode> switches;
  std::vector<int> host_switch;  ///< endpoint -> switch
  std::vector<int> host_port;    ///< endpoint -> port on that switch
  std::vector<Cable> cables;
  int endpoints() const { return static_cast<int>(host_switch.size()); }
};

/// Builds the graph; throws std::invalid_argument for impossible shapes (with the reason).
TopologyGraph build_graph(const TopologyParams& params);

/// routes[s][dst] = output ports of switch s on a minimal path to endpoint dst.
/// Throws std::invalid_argument naming an unreachable endpoint.
std::vector<std::vector<std::vector<int>>> minimal_routes(const TopologyGraph& g);

/// Forwarding tables of every switch, as minimal_routes returns them.
using RouteTables = std::vector<std::vector<std::vector<int>>>;

/// Checks forwarding tables before a run: every entry names a port with a cable,
/// and every path from every switch reaches the destination's switch, i.e. no
/// dead end and no routing loop. Throws std::invalid_argument naming the switch,
/// the endpoint and the looping path.
void check_routes(const TopologyGraph& g, const RouteTables& routes);

std::string_view to_string(TopologyKind k);

}  // namespace fabricsim::sim
