// Topology: the switch/endpoint graph a configuration describes, and the
// minimal-path forwarding tables computed on it (equal-cost next hops kept, so
// ECMP groups fall out of the graph: leaf-spine uplinks, fat-tree up-links).
//
// CODE FLOW
//   TopologyParams -> build_graph() -> TopologyGraph (switches with radix and
//   role, endpoint attachment, switch-switch cables with link params)
//   -> minimal_routes(): BFS from every endpoint's switch; next hops on shortest paths
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hw/param_spec.h"
#include "tlm/link.h"

namespace fabricsim::sim {

/// Shape of the fabric.
enum class TopologyKind {
  single_switch,   ///< one switch, endpoints on ports 0..n-1
  leaf_spine,      ///< two tiers: leaves with hosts and one uplink per spine
  fat_tree,        ///< three-tier k-ary fat tree (Al-Fares et al., SIGCOMM 2008)
  kary_ntree,      ///< k-ary n-tree (Petrini and Vanneschi 1997; BookSim2 `fattree`)
  explicit_graph,  ///< switches, endpoints and cables listed by name
  back_to_back,    ///< two NICs cabled directly, no switch
  rail_optimized,  ///< GPU servers, NIC g of every server on rail leaf g, rail leaves under a spine
  three_tier,      ///< leaf, spine and core from one radix, populated pod by pod (ThreeTierParams)
};

/// Host ports of a leaf of `radix` ports whose host : uplink ports are `oversubscription`.
int hosts_per_leaf(int radix, double oversubscription);

/// Two-tier leaf-spine from a radix and an oversubscription ratio.
struct LeafSpineParams {
  int radix = 8;                 ///< ports per leaf and per spine, 2..256
  double oversubscription = 1;   ///< host ports : uplink ports on a leaf, 0.1..16
  int leaves = 0;                ///< leaves, 2..radix; 0: radix (a full spine)
  int hosts_per_leaf() const;
  int spines() const;            ///< one uplink from each leaf to each spine
  int leaf_count() const { return leaves > 0 ? leaves : radix; }
};

/// Rail-optimised GPU cluster (NVIDIA DGX SuperPOD style): `servers` servers with
/// `gpus_per_server` GPUs, one NIC per GPU; NIC g of every server is cabled to rail g,
/// a group of rail leaves; every rail leaf has one uplink to each spine.
/// Endpoint e = server x gpus_per_server + g (GPU g of that server).
struct RailParams {
  int servers = 4;               ///< GPU servers, 1..4096
  int gpus_per_server = 8;       ///< GPUs (= NICs = rails) per server, 1..64
  int radix = 8;                 ///< ports per rail leaf, 2..256
  double oversubscription = 1;   ///< host ports : uplink ports on a rail leaf, 0.1..16
  int hosts_per_leaf() const;    ///< servers one rail leaf serves
  int spines() const;            ///< uplinks per rail leaf = spines
  int leaves_per_rail() const;   ///< ceil(servers / hosts per leaf)
  /// Rail leaf index (0..leaves_per_rail-1) of `server` within its rail.
  int leaf_of_server(int server) const { return server / hosts_per_leaf(); }
};

/// How endpoints attach to the leaves of a `three_tier` fabric.
enum class HostLayout {
  leaf,  ///< endpoints fill leaf after leaf (a leaf is its rack's top-of-rack switch)
  rail,  ///< GPU g of every server of a pod on that pod's rail-g leaves (rail-optimised)
};
const hw::EnumNames<HostLayout>& host_layout_names();

/// Three-tier Clos (leaf, spine, core) from one switch radix, the fat tree of Al-Fares
/// et al. (SIGCOMM 2008) populated pod by pod. A pod is `leaves_per_pod` leaves under as
/// many spines as a leaf has uplinks; each spine has radix/2 uplinks, spread evenly over
/// the cores of its core group (spine j of every pod: group j). A group has the fewest
/// cores, dividing radix/2, whose ports take every pod's uplinks: a full tree at 1:1
/// (radix pods of radix/2 leaves) has radix^3/4 hosts, radix^2/2 leaves, radix^2/2
/// spines and radix^2/4 cores, one cable per spine-core pair; fewer pods need fewer
/// cores, with parallel cables, and every spine keeps its radix/2 uplinks (1:1 above).
struct ThreeTierParams {
  int radix = 8;                 ///< ports per switch (leaf, spine, core), even, 4..256
  double oversubscription = 1;   ///< host ports : uplink ports on a leaf, 0.1..16
  int pods = 0;                  ///< pods, 1..radix; 0: radix (a full tree)
  int leaves_per_pod = 0;        ///< leaves per pod, 1..radix/2; 0: radix/2
  HostLayout layout = HostLayout::leaf;
  int gpus_per_server = 8;       ///< rail layout: GPUs (rails) per server; divides leaves_per_pod
  int hosts_per_leaf() const;
  int spines_per_pod() const;    ///< = uplinks per leaf
  int pod_count() const { return pods > 0 ? pods : radix; }
  int leaves_in_pod() const { return leaves_per_pod > 0 ? leaves_per_pod : radix / 2; }
  int cores_per_group() const;    ///< smallest divisor of radix/2 with cores x radix >= pods x radix/2
  int cores() const { return spines_per_pod() * cores_per_group(); }
  int endpoints() const { return pod_count() * leaves_in_pod() * hosts_per_leaf(); }
};

/// Explicit graph: nodes are named sw<i> and ep<j>; cables list node pairs.
struct ExplicitParams {
  int switches = 1;
  int endpoints = 2;
  std::vector<std::pair<std::string, std::string>> cables;  ///< e.g. {"ep0", "sw0"}, {"sw0", "sw1"}
};

/// The names of the first switch levels as tiers (switch.tiers, results): leaf, spine, core.
const std::vector<std::string>& switch_tier_names();

/// k-ary n-tree: n levels of k^(n-1) switches of radix 2k, k^n endpoints.
struct KaryNtreeParams {
  int k = 4;  ///< down ports (and up ports) per switch, 2..64
  int n = 3;  ///< levels, 1..8
  int endpoints() const;
  int switches_per_level() const;  ///< k^(n-1)
};

struct TopologyParams {
  TopologyKind kind = TopologyKind::single_switch;
  int endpoints = 4;                            ///< single_switch: NICs, 1..switch.ports
  LeafSpineParams leaf_spine;
  int fat_tree_k = 4;                           ///< fat_tree: even k, k^3/4 hosts
  KaryNtreeParams kary_ntree;
  RailParams rail;                              ///< rail_optimized
  ThreeTierParams three_tier;                   ///< three_tier
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
  int level = 0;     ///< 0 leaf/edge, 1 spine/agg, 2 core (k-ary n-tree: 0..n-1 from the hosts up)
};

/// One switch-switch cable (two link directions).
struct Cable {
  int a = 0, a_port = 0;  ///< switch index and port
  int b = 0, b_port = 0;
  std::string tier;       ///< leaf-spine, edge-agg, agg-core, switch-switch, level<l>-level<l+1>
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

/// Hop counts over switch-switch cables from switch `from` to every switch (-1: unreachable).
std::vector<int> switch_distances(const TopologyGraph& g, int from);

/// A reduction tree over switches (in-network reduction): tree nodes are switches.
struct SwitchTree {
  std::vector<int> switches;   ///< switch of each node, ascending
  std::vector<int> parent;     ///< parent node of each node, -1 at the root
  std::vector<int> node_of;    ///< per endpoint given: its switch's node
};

/// The tree joining the switches of `endpoints`: rooted at the switch with the smallest
/// largest distance to them (lowest index on ties), each switch's parent its lowest-index
/// neighbour one hop closer to the root. Endpoints must have a switch.
SwitchTree reduction_tree(const TopologyGraph& g, const std::vector<int>& endpoints);

/// Forwarding tables of every switch: the output ports toward each endpoint. Every
/// endpoint of one switch is reached through the same ports from every other switch, so
/// the tables are kept per destination switch, each distinct port list once: switches x
/// host switches indices instead of switches x endpoints lists.
class RouteTables {
 public:
  RouteTables() = default;
  explicit RouteTables(const TopologyGraph& g);  ///< no routes yet (empty lists)
  /// Output ports of switch `s` toward endpoint `e` (its host port on its own switch).
  const std::vector<int>& ports(int s, int e) const {
    const int home = host_switch_[e];
    if (s == home) return host_port_[e];
    return lists_[toward_[static_cast<std::size_t>(host_index_[home]) * switches_ + s]];
  }
  /// Sets the ports of switch `s` toward every endpoint of switch `home` (s != home).
  void set(int s, int home, const std::vector<int>& ports);
  int switches() const { return static_cast<int>(switches_); }
  int endpoints() const { return static_cast<int>(host_switch_.size()); }

 private:
  std::size_t switches_ = 0;
  std::vector<int> host_switch_;              // per endpoint
  std::vector<std::vector<int>> host_port_;   // per endpoint: {its port on its switch}
  std::vector<int> host_index_;               // per switch: its index among switches with endpoints
  std::vector<std::vector<int>> lists_;       // distinct port lists; lists_[0] is empty
  std::map<std::vector<int>, std::int32_t> list_index_;
  std::vector<std::int32_t> toward_;          // [host index x switches + s]: index in lists_
  std::vector<std::int32_t> last_set_;        // per switch: the list set() gave it last
};

/// Minimal-path tables: every equal-cost next hop toward each endpoint.
/// Throws std::invalid_argument naming an unreachable endpoint.
RouteTables minimal_routes(const TopologyGraph& g);

/// The peak memory a run of `g` with `vls` virtual lanes per port takes, estimated from
/// its switch ports, endpoints and forwarding entries (switches x switches with endpoints) [B]
/// (docs/robustness.md).
std::uint64_t estimated_run_bytes(const TopologyGraph& g, int vls);

/// Per switch, the D-mod-k divisor (hw::RoutingParams::d_mod_k_divisor): the product of
/// the up-port counts of the levels below its own (1 at level 0), up ports being the
/// cables to the next level, counted on each level's first switch.
std::vector<std::uint64_t> d_mod_k_divisors(const TopologyGraph& g);

/// Checks forwarding tables before a run: every entry names a port with a cable,
/// and every path from every switch reaches the destination's switch, i.e. no
/// dead end and no routing loop. Throws std::invalid_argument naming the switch,
/// the endpoint and the looping path.
void check_routes(const TopologyGraph& g, const RouteTables& routes);

std::string_view to_string(TopologyKind k);
/// The configuration names of TopologyKind (topology.kind).
const hw::EnumNames<TopologyKind>& topology_kind_names();
/// `topology:`'s own keys, then one block per kind ("topology (kind: leaf_spine)"): the
/// keys that kind reads, in documentation order.
const std::vector<hw::ParamBlock>& topology_param_blocks();
/// One of them by section; "topology" for the keys every kind reads.
const hw::ParamBlock& topology_params(std::string_view section = "topology");

}  // namespace fabricsim::sim
