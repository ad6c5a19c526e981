#include "sim/cluster_fabric.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "sim/config_reader.h"

namespace fabricsim::sim {

namespace {

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The 3-tier fabric for `leaves` leaves: the fewest pods of equal size (each at most
// radix/2 leaves, rails in whole leaves) that hold them.
std::optional<ThreeTierParams> three_tier_for(int leaves, const ClusterShape& shape) {
  ThreeTierParams p;
  p.radix = shape.radix;
  p.oversubscription = shape.oversubscription;
  p.layout = shape.layout;
  p.gpus_per_server = shape.gpus_per_server;
  const int half = shape.radix / 2;
  for (int pods = (leaves + half - 1) / half; pods <= shape.radix; ++pods) {
    if (leaves % pods) continue;
    const int per_pod = leaves / pods;
    if (shape.layout == HostLayout::rail && per_pod % shape.gpus_per_server) continue;
    p.pods = pods;
    p.leaves_per_pod = per_pod;
    return p;
  }
  return std::nullopt;
}

}  // namespace

TopologyParams fabric_for_size(int endpoints, const ClusterShape& shape) {
  const int r = shape.radix;
  if (r < 4 || r % 2 || r > 256) throw std::invalid_argument("the radix must be even and in 4..256, got " + std::to_string(r));
  if (endpoints < 2) throw std::invalid_argument("a cluster needs at least 2 endpoints");
  const bool rail = shape.layout == HostLayout::rail;
  const int g = shape.gpus_per_server;
  if (rail && (g < 1 || endpoints % g))
    throw std::invalid_argument(std::to_string(endpoints) + " endpoints are not whole servers of " + std::to_string(g) +
                                " GPUs (--gpus-per-server)");
  TopologyParams t;
  if (endpoints <= r) {
    t.kind = TopologyKind::single_switch;
    t.endpoints = endpoints;
    return t;
  }
  const int h = hosts_per_leaf(r, shape.oversubscription);
  if (h < 1 || r - h < 1 || r - h > r / 2)
    throw std::invalid_argument("radix " + std::to_string(r) + " at oversubscription " + number_text(shape.oversubscription) +
                                " leaves " + std::to_string(h) + " host and " + std::to_string(r - h) +
                                " uplink ports per leaf; needs at least one host port and 1..radix/2 uplinks");
  // Rail leaves hold h servers' GPU g each; the leaf layout fills leaves with h endpoints.
  const int leaves = rail ? g * ((endpoints / g + h - 1) / h) : (endpoints + h - 1) / h;
  if (leaves <= r) {
    if (rail) {
      t.kind = TopologyKind::rail_optimized;
      t.rail = {endpoints / g, g, r, shape.oversubscription};
      return t;
    }
    if (endpoints % h == 0) {
      t.kind = TopologyKind::leaf_spine;
      t.leaf_spine = {r, shape.oversubscription, leaves};
      return t;
    }
  }
  const std::string why = std::to_string(endpoints) + " endpoints at radix " + std::to_string(r) + ", " +
                          number_text(shape.oversubscription) + ":1";
  if (endpoints % h)
    throw std::invalid_argument(why + ": not a whole number of leaves of " + std::to_string(h) + " hosts");
  const std::int64_t limit = std::int64_t{r} * (r / 2) * h;
  if (endpoints > limit)
    throw std::invalid_argument(why + ": more than the " + std::to_string(limit) +
                                " a 3-tier fabric of that radix holds (radix x radix/2 leaves); raise --radix");
  const auto p = three_tier_for(endpoints / h, shape);
  if (!p)
    throw std::invalid_argument(why + ": the " + std::to_string(endpoints / h) +
                                " leaves do not split into equal pods of at most radix/2 leaves" +
                                (rail ? " in whole rails of " + std::to_string(g) : std::string()));
  t.kind = TopologyKind::three_tier;
  t.three_tier = *p;
  return t;
}

std::string topology_yaml(const TopologyParams& t) {
  const std::string kind = "{kind: " + std::string(to_string(t.kind));
  switch (t.kind) {
    case TopologyKind::single_switch: return kind + ", endpoints: " + std::to_string(t.endpoints) + "}";
    case TopologyKind::leaf_spine:
      return kind + ", radix: " + std::to_string(t.leaf_spine.radix) +
             ", oversubscription: " + number_text(t.leaf_spine.oversubscription) +
             ", leaves: " + std::to_string(t.leaf_spine.leaves) + "}";
    case TopologyKind::rail_optimized:
      return kind + ", servers: " + std::to_string(t.rail.servers) + ", gpus_per_server: " +
             std::to_string(t.rail.gpus_per_server) + ", radix: " + std::to_string(t.rail.radix) +
             ", oversubscription: " + number_text(t.rail.oversubscription) + "}";
    case TopologyKind::three_tier: {
      const ThreeTierParams& p = t.three_tier;
      std::string s = kind + ", radix: " + std::to_string(p.radix) + ", oversubscription: " +
                      number_text(p.oversubscription) + ", pods: " + std::to_string(p.pod_count()) +
                      ", leaves_per_pod: " + std::to_string(p.leaves_in_pod());
      if (p.layout == HostLayout::rail) s += ", layout: rail, gpus_per_server: " + std::to_string(p.gpus_per_server);
      return s + "}";
    }
    default: throw std::logic_error("topology_yaml: kind " + std::string(to_string(t.kind)) + " not supported");
  }
}

const hw::EnumNames<CableMedium>& cable_medium_names() {
  static const hw::EnumNames<CableMedium> names{
      {CableMedium::dac, "dac"}, {CableMedium::aec, "aec"}, {CableMedium::optics, "optics"}};
  return names;
}

std::uint64_t BillOfMaterials::total_switches() const {
  std::uint64_t n = 0;
  for (auto s : switches) n += s;
  return n;
}

std::uint64_t BillOfMaterials::total_transceivers() const {
  std::uint64_t n = 0;
  for (const auto& l : links) n += l.transceivers;
  return n;
}

BillOfMaterials bill_of_materials(const TopologyGraph& g, int radix, HostLayout layout, const CablingRule& rule) {
  static const char* const kTier[] = {"leaf", "spine", "core"};
  BillOfMaterials bom;
  bom.endpoints = static_cast<std::uint64_t>(g.endpoints());
  bom.radix = radix;
  for (const auto& s : g.switches) {
    if (s.level > 2) throw std::invalid_argument("bill_of_materials: more than three switch tiers");
    if (s.radix > radix)
      throw std::invalid_argument("bill_of_materials: switch " + s.name + " has " + std::to_string(s.radix) +
                                  " ports, more than the radix " + std::to_string(radix));
    bom.tiers = std::max(bom.tiers, s.level + 1);
  }
  bom.switches.assign(static_cast<std::size_t>(bom.tiers), 0);
  for (const auto& s : g.switches) ++bom.switches[static_cast<std::size_t>(s.level)];
  for (int t = 0; t < bom.tiers; ++t) bom.switch_tiers.push_back(kTier[t]);

  auto add = [](LinkTier& l, std::uint64_t n) {
    l.links += n;
    if (l.medium == CableMedium::optics) {
      l.transceivers += 2 * n;
      l.fibres += n;
    } else {
      l.copper += n;
    }
  };
  LinkTier host{"host-leaf"};
  host.medium = rule.host                                ? *rule.host
                : layout == HostLayout::rail             ? CableMedium::optics
                : rule.host_cable <= rule.dac_reach      ? CableMedium::dac
                : rule.host_cable <= rule.aec_reach      ? CableMedium::aec
                                                         : CableMedium::optics;
  add(host, bom.endpoints);
  bom.links.push_back(host);
  for (int t = 0; t + 1 < bom.tiers; ++t) bom.links.push_back({std::string(kTier[t]) + "-" + kTier[t + 1]});
  for (const Cable& c : g.cables) {
    const int lo = std::min(g.switches[c.a].level, g.switches[c.b].level);
    if (std::abs(g.switches[c.a].level - g.switches[c.b].level) != 1)
      throw std::invalid_argument("bill_of_materials: a cable within a tier (" + g.switches[c.a].name + " - " +
                                  g.switches[c.b].name + ")");
    add(bom.links[static_cast<std::size_t>(lo) + 1], 1);
  }
  return bom;
}

namespace {

FabricPrices read_fabric_prices(ConfigMap m) {
  FabricPrices p;
  auto price = [&](const char* key) {
    if (!m.present(key)) m.fail(key, "missing: give the price of one part (a number, 0 for none)");
    return m.number(key, 0, 0, 1e9);
  };
  if (!m.present("speed")) m.fail("speed", "missing: the port speed these prices are for, e.g. 400Gb/s");
  p.speed = m.bandwidth("speed", hw::Bandwidth::gbps(400), hw::Bandwidth::gbps(1), hw::Bandwidth::gbps(10000));
  p.speed_at = m.location("speed");
  p.switches_at = m.location("switches");
  p.transceiver = price("transceiver");
  p.fibre = price("fibre");
  p.dac = price("dac");
  p.aec = price("aec");
  p.nic = price("nic");
  const auto switches = m.list_of_maps("switches");
  if (switches.empty()) m.fail("switches", "missing: a list of {radix, price}, one per switch model");
  for (auto s : switches) {
    const int radix = static_cast<int>(s.required_integer("radix", 2, 256));
    if (p.switch_by_radix.count(radix)) s.fail("radix", "a second price for radix " + std::to_string(radix));
    if (!s.present("price")) s.fail("price", "missing");
    p.switch_by_radix[radix] = s.number("price", 0, 0, 1e9);
    s.finish();
  }
  m.finish();
  return p;
}

}  // namespace

Prices read_prices(const std::string& file) {
  auto source = std::make_shared<ConfigSource>();
  source->file = file;
  ConfigMap top(load_yaml_file(file), "", source);
  Prices p;
  p.file = file;
  p.currency = top.string("currency", p.currency);
  if (top.present("infiniband")) p.infiniband = read_fabric_prices(top.map("infiniband"));
  if (top.present("ethernet")) p.ethernet = read_fabric_prices(top.map("ethernet"));
  if (top.present("gpu")) p.gpu = top.number("gpu", 0, 0, 1e9);
  top.finish();
  if (!p.infiniband && !p.ethernet) top.fail("", "needs an `infiniband` or an `ethernet` section (or both)");
  return p;
}

FabricCost fabric_cost(const BillOfMaterials& bom, const Prices& prices, bool infiniband, hw::Bandwidth speed) {
  const char* family = infiniband ? "infiniband" : "ethernet";
  const std::optional<FabricPrices>& f = infiniband ? prices.infiniband : prices.ethernet;
  if (!f) throw ConfigError(prices.file, family, "missing: the configuration is an " + std::string(family) + " fabric");
  // Port speeds as sold (400G, 800G) against the data rate the PHY leaves: within 10%.
  if (std::abs(speed.bps() - f->speed.bps()) > 0.1 * f->speed.bps())
    throw ConfigError(f->speed_at, std::string(family) + ".speed",
                      "prices are for " + hw::to_string(f->speed) + " ports, the configuration's links carry " +
                          hw::to_string(speed));
  const auto sw = f->switch_by_radix.find(bom.radix);
  if (bom.total_switches() > 0 && sw == f->switch_by_radix.end())
    throw ConfigError(f->switches_at, std::string(family) + ".switches",
                      "no price for a switch of radix " + std::to_string(bom.radix));
  FabricCost c;
  if (sw != f->switch_by_radix.end()) c.switches = static_cast<double>(bom.total_switches()) * sw->second;
  for (const auto& l : bom.links) {
    c.optics += static_cast<double>(l.transceivers) * f->transceiver + static_cast<double>(l.fibres) * f->fibre;
    c.copper += static_cast<double>(l.copper) * (l.medium == CableMedium::dac ? f->dac : f->aec);
  }
  c.nics = static_cast<double>(bom.endpoints) * f->nic;
  c.gpus = static_cast<double>(bom.endpoints) * prices.gpu.value_or(0);
  return c;
}

}  // namespace fabricsim::sim
