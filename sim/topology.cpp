#include "sim/topology.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

namespace fabricsim::sim {

int hosts_per_leaf(int radix, double oversubscription) {
  // radix = hosts + uplinks and hosts = oversubscription x uplinks.
  return static_cast<int>(std::lround(radix * oversubscription / (1.0 + oversubscription)));
}

int LeafSpineParams::hosts_per_leaf() const { return sim::hosts_per_leaf(radix, oversubscription); }

int LeafSpineParams::spines() const { return radix - hosts_per_leaf(); }

int KaryNtreeParams::switches_per_level() const {
  int w = 1;
  for (int i = 1; i < n; ++i) w *= k;
  return w;
}

int KaryNtreeParams::endpoints() const { return switches_per_level() * k; }

int RailParams::hosts_per_leaf() const { return sim::hosts_per_leaf(radix, oversubscription); }

int RailParams::spines() const { return radix - hosts_per_leaf(); }

int RailParams::leaves_per_rail() const {
  const int h = hosts_per_leaf();
  return h > 0 ? (servers + h - 1) / h : 0;
}

int ThreeTierParams::hosts_per_leaf() const { return sim::hosts_per_leaf(radix, oversubscription); }

int ThreeTierParams::spines_per_pod() const { return radix - hosts_per_leaf(); }

int ThreeTierParams::cores_per_group() const {
  const int half = radix / 2;
  for (int c = 1; c < half; ++c)
    if (half % c == 0 && c * radix >= pod_count() * half) return c;
  return half;
}

int TopologyParams::endpoint_count() const {
  switch (kind) {
    case TopologyKind::single_switch: return endpoints;
    case TopologyKind::leaf_spine: return leaf_spine.leaf_count() * leaf_spine.hosts_per_leaf();
    case TopologyKind::fat_tree: return fat_tree_k * fat_tree_k * fat_tree_k / 4;
    case TopologyKind::kary_ntree: return kary_ntree.endpoints();
    case TopologyKind::explicit_graph: return explicit_graph.endpoints;
    case TopologyKind::back_to_back: return 2;
    case TopologyKind::rail_optimized: return rail.servers * rail.gpus_per_server;
    case TopologyKind::three_tier: return three_tier.endpoints();
  }
  return 0;
}

const hw::EnumNames<TopologyKind>& topology_kind_names() {
  static const hw::EnumNames<TopologyKind> names{
      {TopologyKind::single_switch, "single_switch"}, {TopologyKind::leaf_spine, "leaf_spine"},
      {TopologyKind::fat_tree, "fat_tree"},           {TopologyKind::kary_ntree, "kary_ntree"},
      {TopologyKind::explicit_graph, "explicit"},     {TopologyKind::back_to_back, "back_to_back"},
      {TopologyKind::rail_optimized, "rail_optimized"}, {TopologyKind::three_tier, "three_tier"}};
  return names;
}

const hw::EnumNames<HostLayout>& host_layout_names() {
  static const hw::EnumNames<HostLayout> names{{HostLayout::leaf, "leaf"}, {HostLayout::rail, "rail"}};
  return names;
}

std::string_view to_string(TopologyKind k) { return hw::name_of(topology_kind_names(), k); }

const std::vector<hw::ParamBlock>& topology_param_blocks() {
  using hw::ParamType;
  using hw::names_of;
  static const std::vector<hw::ParamBlock> blocks{
      {"topology",
       "the shape of the fabric; each kind reads its own keys, in the tables below",
       {{"kind", ParamType::name, "", "single_switch", "", "", names_of(topology_kind_names()), "",
          "shape of the fabric; only the keys of the chosen kind are read (the others are unknown keys)"},
        {"host_link", ParamType::section, "", "", "", "", {}, "as `link` (PHY keys below)",
          "every endpoint cable (with `back_to_back`: the one cable); a key it leaves out takes `link`'s value"},
        {"fabric_link", ParamType::section, "", "", "", "", {}, "as `link` (PHY keys below)",
          "every switch-switch cable; a key it leaves out takes `link`'s value"},
        {"links", ParamType::list, "maps", "", "", "", {}, "",
          "per-endpoint cable overrides on top of `host_link`, see below"}}},
      {"topology (kind: single_switch)",
       "one switch",
       {{"endpoints", ParamType::integer, "", "4", "1", "256", {}, "<= `switch.ports`",
          "number of NICs, endpoint *i* on port *i*; unused ports stay open"}}},
      {"topology (kind: leaf_spine)",
       "leaves and spines",
       {{"radix", ParamType::integer, "", "8", "2", "256", {}, "",
          "ports per leaf"},
        {"oversubscription", ParamType::number, "", "1", "0.1", "16", {}, "",
          "host ports : uplink ports on a leaf"},
        {"leaves", ParamType::integer, "", "0", "0", "256", {}, "0 or 2..`radix`",
          "number of leaves; 0: `radix`"}}},
      {"topology (kind: fat_tree)",
       "a k-ary fat tree",
       {{"k", ParamType::integer, "", "4", "2", "24", {}, "even",
          "k-ary fat tree (k=24: 3456 hosts)"}}},
      {"topology (kind: kary_ntree)",
       "a k-ary n-tree",
       {{"k", ParamType::integer, "", "4", "2", "64", {}, "",
          "down (and up) ports per switch; radix 2k"},
        {"n", ParamType::integer, "", "3", "1", "8", {}, "k^n <= 65536",
          "levels; k^n endpoints, n k^(n-1) switches"}}},
      {"topology (kind: rail_optimized)",
       "rails of leaves under shared spines",
       {{"servers", ParamType::integer, "", "4", "1", "4096", {}, "",
          "GPU servers"},
        {"gpus_per_server", ParamType::integer, "", "8", "1", "64", {}, "",
          "GPUs per server = NICs per server = rails"},
        {"radix", ParamType::integer, "", "8", "2", "256", {}, "",
          "ports per rail leaf"},
        {"oversubscription", ParamType::number, "", "1", "0.1", "16", {}, "",
          "server ports : uplink ports on a rail leaf"}}},
      {"topology (kind: three_tier)",
       "leaf, spine and core (a fat tree), pod by pod",
       {{"radix", ParamType::integer, "", "8", "4", "256", {}, "even",
          "ports per switch; a full tree at 1:1 has radix^3/4 endpoints"},
        {"oversubscription", ParamType::number, "", "1", "0.1", "16", {}, "",
          "host ports : uplink ports on a leaf (spines per pod = uplinks)"},
        {"pods", ParamType::integer, "", "0", "0", "256", {}, "0 or 1..`radix`",
          "pods of leaves and spines; 0: `radix` (a full tree)"},
        {"leaves_per_pod", ParamType::integer, "", "0", "0", "128", {}, "0 or 1..`radix`/2",
          "leaves per pod; 0: `radix`/2"},
        {"layout", ParamType::name, "", "leaf", "", "", names_of(host_layout_names()), "",
          "`leaf`: endpoints fill leaf after leaf; `rail`: GPU g of each server on the pod's rail-g leaves"},
        {"gpus_per_server", ParamType::integer, "", "8", "1", "64", {}, "`layout: rail` only; divides `leaves_per_pod`",
          "GPUs (rails) per server; endpoint e is GPU e mod this of server e / this"}}},
      {"topology (kind: explicit)",
       "switches and cables as listed",
       {{"switches", ParamType::integer, "", "1", "1", "4096", {}, "",
          "switches `sw0`..`sw<n-1>`"},
        {"endpoints", ParamType::integer, "", "2", "1", "65536", {}, "",
          "endpoints `ep0`..`ep<n-1>`"},
        {"cables", ParamType::list, "name pairs", "", "", "", {}, "required; e.g. `[[ep0, sw0], [sw0, sw1]]`",
          "every cable; each endpoint exactly one, no switch to itself"}}},
      {"topology.links[i]",
       "one endpoint's cable",
       {{"endpoint", ParamType::integer, "", "", "0", "", {}, "below the topology's endpoint count",
         "whose cable"}}}};
  return blocks;
}

const hw::ParamBlock& topology_params(std::string_view section) { return hw::block_of(topology_param_blocks(), section); }

namespace {

constexpr int kMaxRadix = 256;  // SwitchParams::ports

// Adds switches and wires ports in order of cable creation.
struct Builder {
  TopologyGraph g;
  std::vector<int> next_port;

  int add_switch(const std::string& name, int level) {
    g.switches.push_back({name, 0, level});
    next_port.push_back(0);
    return static_cast<int>(g.switches.size()) - 1;
  }
  void add_host(int sw) {
    g.host_switch.push_back(sw);
    g.host_port.push_back(next_port[sw]++);
  }
  void connect(int a, int b, const std::string& tier) {
    g.cables.push_back({a, next_port[a]++, b, next_port[b]++, tier});
  }
  TopologyGraph done() {
    for (std::size_t s = 0; s < g.switches.size(); ++s) g.switches[s].radix = std::max(next_port[s], 2);
    return g;
  }
};

TopologyGraph leaf_spine(const LeafSpineParams& p) {
  const int hosts = p.hosts_per_leaf(), spines = p.spines(), leaves = p.leaf_count();
  if (hosts < 1 || spines < 1)
    throw std::invalid_argument("leaf_spine radix " + std::to_string(p.radix) + " with oversubscription " +
                                std::to_string(p.oversubscription) + " leaves no host or no uplink port");
  if (leaves < 2 || leaves > p.radix)
    throw std::invalid_argument("leaf_spine leaves must be in 2..radix (" + std::to_string(p.radix) +
                                "), got " + std::to_string(leaves));
  Builder b;
  for (int l = 0; l < leaves; ++l) b.add_switch("leaf" + std::to_string(l), 0);
  for (int s = 0; s < spines; ++s) b.add_switch("spine" + std::to_string(s), 1);
  for (int l = 0; l < leaves; ++l)
    for (int h = 0; h < hosts; ++h) b.add_host(l);
  for (int l = 0; l < leaves; ++l)
    for (int s = 0; s < spines; ++s) b.connect(l, leaves + s, "leaf-spine");
  return b.done();
}

TopologyGraph fat_tree(int k) {
  if (k < 2 || k % 2 != 0 || k > 64) throw std::invalid_argument("fat_tree k must be even and in 2..64");
  const int half = k / 2;
  Builder b;
  // Pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core switches.
  std::vector<int> edge, agg, core;
  for (int p = 0; p < k; ++p)
    for (int i = 0; i < half; ++i) edge.push_back(b.add_switch("edge" + std::to_string(p * half + i), 0));
  for (int p = 0; p < k; ++p)
    for (int i = 0; i < half; ++i) agg.push_back(b.add_switch("agg" + std::to_string(p * half + i), 1));
  for (int c = 0; c < half * half; ++c) core.push_back(b.add_switch("core" + std::to_string(c), 2));
  for (int e : edge)
    for (int h = 0; h < half; ++h) b.add_host(e);
  for (int p = 0; p < k; ++p)
    for (int i = 0; i < half; ++i)
      for (int j = 0; j < half; ++j) b.connect(edge[p * half + i], agg[p * half + j], "edge-agg");
  // Aggregation switch j of every pod connects to core switches j*k/2 .. j*k/2 + k/2 - 1.
  for (int p = 0; p < k; ++p)
    for (int j = 0; j < half; ++j)
      for (int c = 0; c < half; ++c) b.connect(agg[p * half + j], core[j * half + c], "agg-core");
  return b.done();
}

// k-ary n-tree (Petrini and Vanneschi, 1997), the shape BookSim2 calls `fattree`.
// Switch <w, l>: level l (0 = hosts' level) and w, n-1 base-k digits. <w, l> and
// <w', l+1> are cabled when w and w' differ at most in digit l; the up-port digit u
// reaches the parent whose digit l is u. Every switch has k down ports (0..k-1:
// hosts or the children, child digit l-1 = port) and k up ports (k..2k-1: port k+u);
// the top level leaves its up ports open. Minimal paths climb to the nearest common
// ancestor level over any up port, then descend on the one down path.
TopologyGraph kary_ntree(const KaryNtreeParams& p) {
  if (p.k < 2 || p.n < 1) throw std::invalid_argument("kary_ntree needs k >= 2 and n >= 1");
  if (std::pow(double(p.k), double(p.n)) > 65536)
    throw std::invalid_argument("kary_ntree k^n must be at most 65536 endpoints");
  const int k = p.k, n = p.n, width = p.switches_per_level();
  Builder b;
  for (int l = 0; l < n; ++l)
    for (int w = 0; w < width; ++w) b.add_switch("level" + std::to_string(l) + "_" + std::to_string(w), l);
  for (int w = 0; w < width; ++w)
    for (int h = 0; h < k; ++h) b.add_host(w);
  // Level by level: a switch takes its k down ports before its k up ports; children
  // visit a parent in the order of their digit l, which becomes the parent's port.
  int digit = 1;  // k^l: weight of digit l
  for (int l = 0; l + 1 < n; ++l, digit *= k) {
    const std::string tier = "level" + std::to_string(l) + "-level" + std::to_string(l + 1);
    for (int w = 0; w < width; ++w)
      for (int u = 0; u < k; ++u) {
        const int parent = w - (w / digit % k) * digit + u * digit;
        b.connect(l * width + w, (l + 1) * width + parent, tier);
      }
  }
  TopologyGraph g = b.done();
  for (auto& s : g.switches) s.radix = 2 * k;  // the top level's up ports stay open
  return g;
}

// Rail leaves rail<g>_leaf<i> serve servers i x h .. i x h + h - 1 on rail g (their NIC g);
// each rail leaf has one uplink to every spine, so traffic between two NICs of one
// rail leaf takes one switch hop and anything else crosses a spine (three hops).
TopologyGraph rail_optimized(const RailParams& p) {
  const int hosts = p.hosts_per_leaf(), spines = p.spines();
  if (hosts < 1 || spines < 1)
    throw std::invalid_argument("rail_optimized radix " + std::to_string(p.radix) + " with oversubscription " +
                                std::to_string(p.oversubscription) + " leaves no host or no uplink port");
  const int per_rail = p.leaves_per_rail(), rails = p.gpus_per_server;
  if (rails * per_rail > 256)
    throw std::invalid_argument("rail_optimized needs " + std::to_string(rails * per_rail) +
                                " rail leaves (gpus_per_server x ceil(servers / " + std::to_string(hosts) +
                                " servers per leaf)), more than a spine's 256 ports");
  Builder b;
  for (int g = 0; g < rails; ++g)
    for (int i = 0; i < per_rail; ++i) b.add_switch("rail" + std::to_string(g) + "_leaf" + std::to_string(i), 0);
  for (int s = 0; s < spines; ++s) b.add_switch("spine" + std::to_string(s), 1);
  // Endpoints server by server, GPU by GPU; host ports are taken in that order.
  for (int server = 0; server < p.servers; ++server)
    for (int g = 0; g < rails; ++g) b.add_host(g * per_rail + p.leaf_of_server(server));
  for (int l = 0; l < rails * per_rail; ++l)
    for (int s = 0; s < spines; ++s) b.connect(l, rails * per_rail + s, "leaf-spine");
  return b.done();
}

// Leaves, then spines, then cores, each numbered across pods; hosts take each leaf's
// first ports, leaf-spine cables the next, spine-core cables the spines' last radix/2
// (radix/2 / cores per group parallel cables to each core of the spine's group).
// Every switch keeps `radix` ports (a partial tree leaves core ports open).
TopologyGraph three_tier(const ThreeTierParams& p) {
  const int r = p.radix, h = p.hosts_per_leaf(), u = p.spines_per_pod();
  const int pods = p.pod_count(), lpp = p.leaves_in_pod(), half = r / 2;
  if (r < 4 || r % 2 || r > kMaxRadix) throw std::invalid_argument("three_tier radix must be even and in 4..256");
  if (h < 1 || u < 1 || u > half)
    throw std::invalid_argument("three_tier radix " + std::to_string(r) + " with oversubscription " +
                                std::to_string(p.oversubscription) + " gives " + std::to_string(h) + " hosts and " +
                                std::to_string(u) + " uplinks per leaf; needs at least 1 of each and at most radix/2 uplinks");
  if (pods < 1 || pods > r) throw std::invalid_argument("three_tier pods must be in 1..radix (" + std::to_string(r) + ")");
  if (lpp < 1 || lpp > half)
    throw std::invalid_argument("three_tier leaves_per_pod must be in 1..radix/2 (" + std::to_string(half) + ")");
  const int g = p.gpus_per_server;
  if (p.layout == HostLayout::rail && (g < 1 || lpp % g))
    throw std::invalid_argument("three_tier rail layout needs leaves_per_pod (" + std::to_string(lpp) +
                                ") to be a multiple of gpus_per_server (" + std::to_string(g) + ")");
  Builder b;
  const int leaves = pods * lpp, spines = pods * u;
  for (int l = 0; l < leaves; ++l) b.add_switch("leaf" + std::to_string(l), 0);
  for (int s = 0; s < spines; ++s) b.add_switch("spine" + std::to_string(s), 1);
  for (int c = 0; c < p.cores(); ++c) b.add_switch("core" + std::to_string(c), 2);
  const int endpoints = leaves * h;
  for (int e = 0; e < endpoints; ++e) {
    if (p.layout == HostLayout::leaf) {
      b.add_host(e / h);
      continue;
    }
    // Server s of pod s / servers_per_pod: its GPU i on rail i's leaves of that pod.
    const int server = e / g, gpu = e % g, per_rail = lpp / g, servers_per_pod = per_rail * h;
    const int pod = server / servers_per_pod, local = server % servers_per_pod;
    b.add_host(pod * lpp + gpu * per_rail + local / h);
  }
  for (int pod = 0; pod < pods; ++pod)
    for (int l = 0; l < lpp; ++l)
      for (int s = 0; s < u; ++s) b.connect(pod * lpp + l, leaves + pod * u + s, "leaf-spine");
  const int group = p.cores_per_group();
  for (int pod = 0; pod < pods; ++pod)
    for (int s = 0; s < u; ++s)
      for (int k = 0; k < half; ++k) b.connect(leaves + pod * u + s, leaves + spines + s * group + k % group, "spine-core");
  TopologyGraph graph = b.done();
  for (auto& sw : graph.switches) sw.radix = r;
  return graph;
}

TopologyGraph explicit_graph(const ExplicitParams& p) {
  Builder b;
  for (int s = 0; s < p.switches; ++s) b.add_switch("sw" + std::to_string(s), 0);
  std::vector<int> host(p.endpoints, -1);
  auto parse = [&](const std::string& name, char& kind) {
    kind = name.rfind("sw", 0) == 0 ? 's' : name.rfind("ep", 0) == 0 ? 'e' : '?';
    std::size_t pos = 0;
    int idx = -1;
    try {
      idx = std::stoi(name.substr(2), &pos);
    } catch (...) {
      kind = '?';
    }
    const int limit = kind == 's' ? p.switches : p.endpoints;
    if (kind == '?' || pos + 2 != name.size() || idx < 0 || idx >= limit)
      throw std::invalid_argument("unknown node '" + name + "'; nodes are sw0..sw" + std::to_string(p.switches - 1) +
                                  " and ep0..ep" + std::to_string(p.endpoints - 1));
    return idx;
  };
  std::vector<std::pair<int, int>> hosts;  // endpoint, switch in cable order
  for (const auto& [x, y] : p.cables) {
    char kx, ky;
    const int ix = parse(x, kx), iy = parse(y, ky);
    if (kx == 'e' && ky == 'e') throw std::invalid_argument("cable " + x + " - " + y + " joins two endpoints");
    if (kx == 's' && ky == 's') {
      if (ix == iy) throw std::invalid_argument("cable " + x + " - " + y + " loops a switch to itself");
      b.connect(ix, iy, "switch-switch");
      continue;
    }
    const int e = kx == 'e' ? ix : iy, s = kx == 'e' ? iy : ix;
    if (host[e] >= 0) throw std::invalid_argument("endpoint ep" + std::to_string(e) + " has two cables (one NIC port)");
    host[e] = s;
    hosts.emplace_back(e, s);
  }
  for (int e = 0; e < p.endpoints; ++e)
    if (host[e] < 0) throw std::invalid_argument("endpoint ep" + std::to_string(e) + " has no cable");
  // Hosts get ports in cable order; keep endpoint ids as the index.
  b.g.host_switch.assign(p.endpoints, -1);
  b.g.host_port.assign(p.endpoints, -1);
  for (const auto& [e, s] : hosts) {
    b.g.host_switch[e] = s;
    b.g.host_port[e] = b.next_port[s]++;
  }
  // A switch is a real ASIC: at least one cable and no more ports than the largest radix.
  for (int s = 0; s < p.switches; ++s) {
    const std::string sw = "switch sw" + std::to_string(s);
    if (b.next_port[s] == 0) throw std::invalid_argument(sw + " has no cable (a disconnected node)");
    if (b.next_port[s] > kMaxRadix)
      throw std::invalid_argument(sw + " has " + std::to_string(b.next_port[s]) + " cables, more ports than the " +
                                  std::to_string(kMaxRadix) + " a switch can have");
  }
  return b.done();
}

}  // namespace

TopologyGraph build_graph(const TopologyParams& params) {
  switch (params.kind) {
    case TopologyKind::single_switch: {
      Builder b;
      b.add_switch("sw0", 0);
      for (int e = 0; e < params.endpoints; ++e) b.add_host(0);
      return b.done();
    }
    case TopologyKind::leaf_spine: return leaf_spine(params.leaf_spine);
    case TopologyKind::fat_tree: return fat_tree(params.fat_tree_k);
    case TopologyKind::kary_ntree: return kary_ntree(params.kary_ntree);
    case TopologyKind::explicit_graph: return explicit_graph(params.explicit_graph);
    case TopologyKind::rail_optimized: return rail_optimized(params.rail);
    case TopologyKind::three_tier: return three_tier(params.three_tier);
    case TopologyKind::back_to_back: {
      TopologyGraph g;
      g.host_switch = {-1, -1};  // each endpoint's cable goes to the other endpoint
      g.host_port = {0, 0};
      return g;
    }
  }
  return {};
}

namespace {

// Per switch: (neighbour switch, local port) of each switch-switch cable.
using Adjacency = std::vector<std::vector<std::pair<int, int>>>;

Adjacency adjacency(const TopologyGraph& g) {
  Adjacency adj(g.switches.size());
  for (const Cable& c : g.cables) {
    adj[c.a].push_back({c.b, c.a_port});
    adj[c.b].push_back({c.a, c.b_port});
  }
  return adj;
}

// Breadth-first hop counts from `from` into `d` (-1: unreachable); `queue` is scratch.
void distances(const Adjacency& adj, int from, std::vector<int>& d, std::vector<int>& queue) {
  d.assign(adj.size(), -1);
  queue.assign(1, from);
  d[from] = 0;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const int s = queue[head];
    for (const auto& [t, port] : adj[s])
      if (d[t] < 0) {
        d[t] = d[s] + 1;
        queue.push_back(t);
      }
  }
}

}  // namespace

std::vector<int> switch_distances(const TopologyGraph& g, int from) {
  std::vector<int> d, queue;
  distances(adjacency(g), from, d, queue);
  return d;
}

SwitchTree reduction_tree(const TopologyGraph& g, const std::vector<int>& endpoints) {
  const int n = static_cast<int>(g.switches.size());
  std::set<int> home;
  for (int e : endpoints) home.insert(g.host_switch[e]);
  std::vector<int> worst(n, 0);
  for (int h : home) {
    const auto d = switch_distances(g, h);
    for (int s = 0; s < n; ++s) worst[s] = std::max(worst[s], d[s]);
  }
  const int root = static_cast<int>(std::min_element(worst.begin(), worst.end()) - worst.begin());
  const auto depth = switch_distances(g, root);
  std::vector<int> up(n, -1);  // parent switch
  for (const Cable& c : g.cables)
    for (auto [s, t] : {std::pair{c.a, c.b}, std::pair{c.b, c.a}})
      if (depth[t] == depth[s] - 1 && (up[s] < 0 || t < up[s])) up[s] = t;
  std::set<int> members;
  for (int h : home)
    for (int s = h; members.insert(s).second && s != root;) s = up[s];
  SwitchTree tree;
  tree.switches.assign(members.begin(), members.end());
  std::map<int, int> node;
  for (std::size_t i = 0; i < tree.switches.size(); ++i) node[tree.switches[i]] = static_cast<int>(i);
  for (int s : tree.switches) tree.parent.push_back(s == root ? -1 : node.at(up[s]));
  for (int e : endpoints) tree.node_of.push_back(node.at(g.host_switch[e]));
  return tree;
}

std::uint64_t estimated_run_bytes(const TopologyGraph& g, int vls) {
  // An upper bound fitted to the peaks of 1 us runs of k-ary 3-trees (k = 16, 32) with
  // S2's VOQ switch, 4 VLs, link and NIC under light uniform traffic (bench/scale.py,
  // docs/performance.md "Memory at scale"): a base, each switch port with its per-VL
  // queues, statistics and link, each endpoint's NIC and traffic source, and each
  // forwarding entry (a switch's 4-byte entry per destination switch, and the tables
  // built for it: RouteTables, Switch::set_routes).
  constexpr std::uint64_t kBase = 16ull << 20, kPerEndpoint = 36ull << 10, kPerEntry = 8;
  const std::uint64_t kPerPort = (10ull << 10) + (2ull << 10) * static_cast<std::uint64_t>(std::max(vls, 1));
  std::uint64_t ports = 0;
  for (const SwitchNode& s : g.switches) ports += static_cast<std::uint64_t>(s.radix);
  const auto endpoints = static_cast<std::uint64_t>(g.endpoints());
  const auto destinations = static_cast<std::uint64_t>(std::set<int>(g.host_switch.begin(), g.host_switch.end()).size());
  return kBase + kPerPort * ports + kPerEndpoint * endpoints + kPerEntry * g.switches.size() * destinations;
}

std::vector<std::uint64_t> d_mod_k_divisors(const TopologyGraph& g) {
  int levels = 0;
  for (const auto& sw : g.switches) levels = std::max(levels, sw.level + 1);
  std::vector<int> first_of_level(static_cast<std::size_t>(levels), -1);
  for (std::size_t s = 0; s < g.switches.size(); ++s)
    if (first_of_level[g.switches[s].level] < 0) first_of_level[g.switches[s].level] = static_cast<int>(s);
  std::vector<std::uint64_t> up_ports(static_cast<std::size_t>(levels), 0);
  for (const auto& c : g.cables)
    for (const auto& [from, to] : {std::pair{c.a, c.b}, std::pair{c.b, c.a}})
      if (from == first_of_level[g.switches[from].level] && g.switches[to].level == g.switches[from].level + 1)
        ++up_ports[g.switches[from].level];
  std::vector<std::uint64_t> of_level(static_cast<std::size_t>(levels), 1);
  for (int l = 1; l < levels; ++l) of_level[l] = of_level[l - 1] * std::max<std::uint64_t>(1, up_ports[l - 1]);
  std::vector<std::uint64_t> divisor;
  for (const auto& sw : g.switches) divisor.push_back(of_level[sw.level]);
  return divisor;
}

RouteTables::RouteTables(const TopologyGraph& g)
    : switches_(g.switches.size()), host_switch_(g.host_switch), host_index_(g.switches.size(), -1), lists_(1) {
  list_index_.emplace(std::vector<int>{}, 0);
  for (int e = 0; e < g.endpoints(); ++e) host_port_.push_back({g.host_port[e]});
  int hosts = 0;
  for (int home : g.host_switch)
    if (home >= 0 && host_index_[home] < 0) host_index_[home] = hosts++;
  toward_.assign(static_cast<std::size_t>(hosts) * switches_, 0);
  last_set_.assign(switches_, 0);
}

void RouteTables::set(int s, int home, const std::vector<int>& ports) {
  // A switch mostly has one list toward most destinations (its up-ports in a tree): the
  // list it was given last is tried before the search.
  std::int32_t& last = last_set_[static_cast<std::size_t>(s)];
  if (lists_[last] != ports) {
    const auto [it, added] = list_index_.try_emplace(ports, static_cast<std::int32_t>(lists_.size()));
    if (added) lists_.push_back(ports);
    last = it->second;
  }
  toward_[static_cast<std::size_t>(host_index_.at(home)) * switches_ + s] = last;
}

RouteTables minimal_routes(const TopologyGraph& g) {
  const int n = static_cast<int>(g.switches.size());
  RouteTables routes(g);
  if (n == 0) return routes;  // back to back: no switch to route in
  const Adjacency adj = adjacency(g);
  // Per switch that hosts endpoints: the distances to it and each switch's next hops toward it.
  std::vector<bool> done(static_cast<std::size_t>(n), false);
  std::vector<int> hops, distance, queue;
  for (int e = 0; e < g.endpoints(); ++e) {
    const int home = g.host_switch[e];
    if (done[home]) continue;
    done[home] = true;
    distances(adj, home, distance, queue);
    for (int s = 0; s < n; ++s) {
      if (s == home) continue;
      if (distance[s] < 0)
        throw std::invalid_argument("endpoint ep" + std::to_string(e) + " is unreachable from switch " + g.switches[s].name);
      hops.clear();
      for (const auto& [next, port] : adj[s])
        if (distance[next] == distance[s] - 1) hops.push_back(port);
      routes.set(s, home, hops);
    }
  }
  return routes;
}

void check_routes(const TopologyGraph& g, const RouteTables& routes) {
  const int n = static_cast<int>(g.switches.size());
  // Where each port of each switch leads: another switch, or -1 (host or open).
  std::vector<std::vector<int>> next(n);
  for (int s = 0; s < n; ++s) next[s].assign(static_cast<std::size_t>(g.switches[s].radix), -1);
  for (const Cable& c : g.cables) {
    next[c.a][c.a_port] = c.b;
    next[c.b][c.b_port] = c.a;
  }
  // Every endpoint of one switch has the same routes elsewhere (RouteTables): one walk per
  // destination switch, with its first endpoint.
  std::vector<bool> walked(static_cast<std::size_t>(n), false);
  for (int e = 0; e < g.endpoints() && n > 0; ++e) {
    const int home = g.host_switch[e];
    if (walked[home]) continue;
    walked[home] = true;
    // Depth-first over every equal-cost choice: state 1 on the current path, 2 proven to reach home.
    std::vector<int> state(n, 0);
    std::vector<int> path;
    auto fail = [&](const std::string& what) {
      std::string p;
      for (int s : path) p += (p.empty() ? "" : " -> ") + g.switches[s].name;
      throw std::invalid_argument("route to ep" + std::to_string(e) + ": " + what + " (path " + p + ")");
    };
    std::function<void(int)> walk = [&](int s) {
      path.push_back(s);
      state[s] = 1;
      const auto& ports = routes.ports(s, e);
      if (ports.empty()) fail("switch " + g.switches[s].name + " has no route (unreachable destination)");
      for (int port : ports) {
        if (s == home && port == g.host_port[e]) continue;
        if (port < 0 || port >= g.switches[s].radix || next[s][port] < 0)
          fail("switch " + g.switches[s].name + " port " + std::to_string(port) + " leads to no switch (a dead end)");
        const int t = next[s][port];
        if (state[t] == 1) {
          path.push_back(t);
          fail("routing loop");
        }
        if (state[t] == 0) walk(t);
      }
      state[s] = 2;
      path.pop_back();
    };
    for (int s = 0; s < n; ++s)
      if (state[s] == 0) walk(s);
  }
}

const std::vector<std::string>& switch_tier_names() {
  static const std::vector<std::string> names{"leaf", "spine", "core"};
  return names;
}

}  // namespace fabricsim::sim
