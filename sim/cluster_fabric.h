// The fabric a cluster of a given size uses, its bill of materials and its cost.
// CODE FLOW: endpoints + ClusterShape (switch radix, leaf oversubscription, leaf or
// rail layout) -> fabric_for_size(): one switch, a 2-tier leaf-spine, or a 3-tier
// leaf-spine-core Clos with as few pods as hold the endpoints -> build_graph() ->
// bill_of_materials(): switches, links, transceivers and cables per tier under a
// CablingRule -> read_prices() -> fabric_cost(). `fabricsim compare --sizes`
// (sim/compare.cpp) reports all of it per size and fabric.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/param_spec.h"
#include "hw/units.h"
#include "sim/topology.h"

namespace fabricsim::sim {

/// How a cluster's fabric is built, whatever its size.
struct ClusterShape {
  int radix = 64;                ///< ports of every switch (leaf, spine, core)
  double oversubscription = 1;   ///< host ports : uplink ports on a leaf
  HostLayout layout = HostLayout::leaf;
  int gpus_per_server = 8;       ///< GPUs per server: rails of the rail layout, server.gpus of a scale-up domain
};

/// The fabric of `endpoints` endpoints: one switch up to `radix` endpoints; a 2-tier
/// leaf-spine while its leaves fit one spine's ports (radix x hosts per leaf: radix^2/2
/// at 1:1); beyond, a 3-tier Clos (`three_tier`) with the fewest pods that hold the
/// leaves in equal pods, up to radix x radix/2 leaves (radix^3/4 endpoints at 1:1).
/// Throws std::invalid_argument saying why when no such fabric holds exactly `endpoints`.
TopologyParams fabric_for_size(int endpoints, const ClusterShape& shape);

/// `params` as the YAML topology map `topology:` reads (the kinds fabric_for_size makes).
std::string topology_yaml(const TopologyParams& params);

/// The medium of a link: a copper cable (direct attach, or active electrical with
/// retimers) or an optical link (a transceiver at each end and a fibre).
enum class CableMedium { dac, aec, optics };
const hw::EnumNames<CableMedium>& cable_medium_names();

/// Which medium each link takes. Switch-switch links are optical (leaf, spine and core
/// sit in different racks). A host-leaf link is copper when the leaf sits in the
/// servers' rack and the cable reaches: `host` `auto` picks DAC up to `dac_reach`, AEC
/// up to `aec_reach`, optics beyond for the leaf layout, and optics for the rail layout
/// (a rail leaf serves servers of many racks).
struct CablingRule {
  std::optional<CableMedium> host;            ///< host-leaf medium; empty: auto
  hw::Length host_cable = hw::Length::metres(3);  ///< host-leaf cable length (the configuration's host link)
  hw::Length dac_reach = hw::Length::metres(3);   ///< assumption: passive copper at 400-800 Gb/s
  hw::Length aec_reach = hw::Length::metres(7);   ///< assumption: active electrical cable
};

/// One tier of links, with the parts that make them.
struct LinkTier {
  std::string name;               ///< host-leaf, leaf-spine, spine-core
  std::uint64_t links = 0;
  CableMedium medium = CableMedium::optics;
  std::uint64_t transceivers = 0;  ///< optics: 2 per link
  std::uint64_t fibres = 0;        ///< optics: 1 per link
  std::uint64_t copper = 0;        ///< DAC or AEC: 1 per link
};

/// What a fabric is built from.
struct BillOfMaterials {
  int tiers = 0;                        ///< switch tiers: 1, 2 or 3
  int radix = 0;                        ///< ports of the switch model
  std::uint64_t endpoints = 0;          ///< = NICs
  std::vector<std::string> switch_tiers;   ///< leaf, spine, core (as many as tiers)
  std::vector<std::uint64_t> switches;     ///< per switch tier
  std::vector<LinkTier> links;             ///< host-leaf, then one per pair of switch tiers
  std::uint64_t total_switches() const;
  std::uint64_t total_transceivers() const;
};

/// The materials of graph `g` (switches per level: leaf, spine, core) under `rule`, every
/// switch a model of `radix` ports; `layout` says where the leaves stand
/// (HostLayout::rail: away from the servers).
BillOfMaterials bill_of_materials(const TopologyGraph& g, int radix, HostLayout layout, const CablingRule& rule);

/// Prices of one fabric family's parts (one port speed), from a prices file.
struct FabricPrices {
  hw::Bandwidth speed;                        ///< port speed the prices are for
  std::map<int, double> switch_by_radix;      ///< switch price by radix
  double transceiver = 0, fibre = 0, dac = 0, aec = 0, nic = 0;
  std::string speed_at, switches_at;          ///< file:line:column of `speed` and `switches`, for errors
};

/// A prices file: InfiniBand and Ethernet parts, and optionally a GPU per endpoint.
struct Prices {
  std::string file;
  std::string currency = "USD";
  std::optional<FabricPrices> infiniband, ethernet;
  std::optional<double> gpu;
};

/// Reads a prices file (see examples/prices/400g.yaml); bad content throws ConfigError naming
/// the file, the key and the line.
Prices read_prices(const std::string& file);

/// The cost of one fabric's materials.
struct FabricCost {
  double switches = 0, optics = 0, copper = 0, nics = 0, gpus = 0;
  double fabric() const { return switches + optics + copper + nics; }  ///< without GPUs
  double total() const { return fabric() + gpus; }
};

/// Prices `bom` with the `framing` family's prices for links of `speed`. Throws
/// ConfigError (naming the prices file and key) when the file has no prices for that
/// family, for that speed, or for a switch of the BOM's radix.
FabricCost fabric_cost(const BillOfMaterials& bom, const Prices& prices, bool infiniband, hw::Bandwidth speed);

}  // namespace fabricsim::sim
