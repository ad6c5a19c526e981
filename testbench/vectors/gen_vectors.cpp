// rtl_vector_gen: writes the shared RTL test vectors (testbench/vectors/*.json): directed
// sequences or seeded random streams, every expected output from the hw/ core through
// ref_models.h; directed sequences also assert textbook results (round-robin rotation,
// iSLIP convergence, credit conservation). Deterministic: the same build writes
// byte-identical files (mt19937_64 draws, no library distributions, which differ
// between standard libraries).
// Usage: rtl_vector_gen [out_dir]   (default: the source tree's testbench/vectors)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "hw/seed.h"
#include "testbench/vectors/ref_models.h"

namespace {

using fabricsim::vectors::json;

/// Seeded draws that do not depend on the standard library's distributions.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  /// Uniform in [0, n).
  std::uint64_t below(std::uint64_t n) { return rng_() % n; }
  /// Uniform in [lo, hi].
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo + 1)));
  }
  bool chance(double p) { return fabricsim::hw::unit_interval(rng_()) < p; }

 private:
  std::mt19937_64 rng_;
};

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "rtl_vector_gen: " << what << "\n";
  std::exit(1);
}

/// Records one vector file: runs the hw core cycle by cycle while the stimulus is built, so
/// a stimulus can react to outputs (a writer waiting for wr_ready, VOQs draining on grants).
class Recorder {
 public:
  Recorder(std::string block, std::string name, std::string description, json params, json stimulus)
      : block_(std::move(block)), name_(std::move(name)), description_(std::move(description)),
        params_(std::move(params)), stimulus_(std::move(stimulus)),
        ref_(fabricsim::vectors::make_ref_model(block_, params_)) {}

  /// Applies one cycle to the core, records it and returns its outputs.
  json cycle(const json& in) {
    json out = ref_->step(in);
    cycles_.push_back(json{{"in", in}, {"out", out}});
    return out;
  }
  /// Cycles recorded so far (the index the next cycle() gets).
  int size() const { return static_cast<int>(cycles_.size()); }
  /// Aborts the generator when a directed expectation does not hold.
  void require(bool ok, const std::string& what) const {
    if (!ok) fail(name_ + " cycle " + std::to_string(size() - 1) + ": " + what);
  }

  void write(const std::filesystem::path& dir) const {
    const auto path = dir / (name_ + ".json");
    std::ofstream f(path);
    if (!f) fail("cannot write " + path.string());
    f << "{\n"
      << "  \"format\": \"fabricsim-rtl-vectors/1\",\n"
      << "  \"block\": " << json(block_).dump() << ",\n"
      << "  \"name\": " << json(name_).dump() << ",\n"
      << "  \"description\": " << json(description_).dump() << ",\n"
      << "  \"generator\": \"testbench/vectors/gen_vectors.cpp (expected outputs from the hw/ core)\",\n"
      << "  \"params\": " << params_.dump() << ",\n"
      << "  \"stimulus\": " << stimulus_.dump() << ",\n"
      << "  \"cycles\": [\n";
    for (std::size_t c = 0; c < cycles_.size(); ++c)
      f << "    " << cycles_[c].dump() << (c + 1 < cycles_.size() ? ",\n" : "\n");
    f << "  ]\n}\n";
    std::cout << path.string() << ": " << cycles_.size() << " cycles\n";
  }

 private:
  std::string block_, name_, description_;
  json params_, stimulus_;
  std::unique_ptr<fabricsim::vectors::RefModel> ref_;
  std::vector<json> cycles_;
};

std::vector<int> all_of(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

// ---------------------------------------------------------------------------------------------
// Round-robin arbiter.

void rr_directed(const std::filesystem::path& dir) {
  Recorder r("rr_arbiter", "rr_arbiter_n4_directed",
             "idle, full-load rotation with wrap, arbitrate without update, pointer skips to the next "
             "requester, update with no grant keeps the pointer",
             json{{"requesters", 4}}, json{{"kind", "directed"}});
  auto rr = [&](std::vector<int> req, bool update) { return r.cycle(json{{"req", req}, {"update", update}}); };
  r.require(rr({}, true)["grant"] == -1, "idle: no grant");
  for (int g : {0, 1, 2, 3, 0}) r.require(rr(all_of(4), true)["grant"] == g, "full load rotates 0,1,2,3,0");
  r.require(rr({2}, false)["grant"] == 2, "lone requester wins");
  r.require(rr({2}, false)["pointer"] == 1, "no update: pointer stays");
  r.require(rr({0, 3}, true)["grant"] == 3, "first at or after pointer 1");
  r.require(rr({0, 3}, true)["grant"] == 0, "wrap after 3");
  r.require(rr({}, true)["pointer"] == 1, "update without a grant keeps the pointer");
  r.require(rr({1}, true)["grant"] == 1, "pointer's own requester");
  r.require(rr(all_of(4), true)["grant"] == 2, "winner + 1");
  r.require(rr({1, 3}, false)["grant"] == 3, "arbitrate only");
  r.require(rr({1, 3}, true)["grant"] == 3, "same grant until committed");
  r.require(rr({0, 3}, true)["grant"] == 0, "pointer wrapped to 0");
  for (int c = 0; c < 6; ++c) rr({c % 4, (c + 2) % 4}, c % 3 != 2);
  r.write(dir);
}

void rr_random(const std::filesystem::path& dir, int n, std::uint64_t seed, int cycles) {
  Draw d(seed);
  Recorder r("rr_arbiter", "rr_arbiter_n" + std::to_string(n) + "_random_s" + std::to_string(seed),
             "seeded random requests, density in phases 0.1/0.4/0.8/1.0, update with probability 0.85",
             json{{"requesters", n}},
             json{{"kind", "random"}, {"seed", seed}, {"cycles", cycles}, {"update_probability", 0.85}});
  const double density[] = {0.1, 0.4, 0.8, 1.0};
  for (int c = 0; c < cycles; ++c) {
    const double p = density[(c * 4) / cycles];
    std::vector<int> req;
    for (int i = 0; i < n; ++i)
      if (d.chance(p)) req.push_back(i);
    r.cycle(json{{"req", req}, {"update", d.chance(0.85)}});
  }
  r.write(dir);
}

// ---------------------------------------------------------------------------------------------
// iSLIP allocator.

using Matrix = std::vector<std::vector<int>>;  // per input: requested outputs, ascending

int matched(const json& out) {
  int m = 0;
  for (int g : out["grant"]) m += g >= 0;
  return m;
}

void islip_directed(const std::filesystem::path& dir, int n, int k) {
  Recorder r("islip_allocator", "islip_n" + std::to_string(n) + "_k" + std::to_string(k) + "_directed",
             "idle; a request pattern that a second iteration completes; all-ones load until the "
             "pointers desynchronise (McKeown 1999: 100% under uniform load); arbitrate without update; "
             "hotspot rotation; permutation; diagonal plus a full row",
             json{{"inputs", n}, {"outputs", n}, {"iterations", k}}, json{{"kind", "directed"}});
  auto step = [&](const Matrix& m, bool update) { return r.cycle(json{{"req", m}, {"update", update}}); };
  const Matrix none(n);
  for (int c = 0; c < 2; ++c) r.require(matched(step(none, true)) == 0, "idle");

  // in0 -> {o0, o1}, in1 -> {o1}: iteration 1 matches in0-o0 only, iteration 2 adds in1-o1.
  Matrix two(n);
  two[0] = {0, 1};
  two[1] = {1};
  for (bool update : {false, true})
    r.require(matched(step(two, update)) == (k >= 2 ? 2 : 1), "second iteration completes the match");

  Matrix ones(n, all_of(n));
  for (int c = 0; c < 2 * n; ++c) {
    const json out = step(ones, true);
    if (c >= n) r.require(matched(out) == n, "all-ones load: full matching once desynchronised");
  }

  Matrix mixed(n);
  for (int i = 0; i < n; ++i)
    for (int o = 0; o < n; ++o)
      if ((i * 3 + o) % 4 != 0) mixed[i].push_back(o);
  const json first = step(mixed, false);
  for (int c = 0; c < 2; ++c) r.require(step(mixed, false) == first, "arbitrate without update repeats");
  step(mixed, true);

  Matrix hot(n, std::vector<int>{0});
  int prev = -1;
  for (int c = 0; c < n + 2; ++c) {
    const json out = step(hot, true);
    int winner = -1;
    for (int i = 0; i < n; ++i)
      if (out["grant"][i] == 0) winner = i;
    if (prev >= 0) r.require(winner == (prev + 1) % n, "hotspot grants rotate");
    prev = winner;
  }

  Matrix perm(n);
  for (int i = 0; i < n; ++i) perm[i] = {(i + 1) % n};
  r.require(matched(step(perm, true)) == n, "a permutation is matched in full");

  Matrix diag(n);
  for (int i = 0; i < n; ++i) diag[i] = {i};
  diag[0] = all_of(n);
  for (int c = 0; c < 4; ++c) step(diag, c % 2 == 0);
  r.write(dir);
}

void islip_random(const std::filesystem::path& dir, int n, int k, std::uint64_t seed, int cycles) {
  Draw d(seed);
  Recorder r("islip_allocator",
             "islip_n" + std::to_string(n) + "_k" + std::to_string(k) + "_random_s" + std::to_string(seed),
             "first half: i.i.d. request matrices, density in phases 0.15/0.4/0.75/1.0, update with "
             "probability 0.9; second half: virtual output queues fed by Bernoulli arrivals (load ramping "
             "0.5 to 1.0, uniform destinations) that drain on committed grants",
             json{{"inputs", n}, {"outputs", n}, {"iterations", k}},
             json{{"kind", "random"}, {"seed", seed}, {"cycles", cycles}});
  const int half = cycles / 2;
  const double density[] = {0.15, 0.4, 0.75, 1.0};
  for (int c = 0; c < half; ++c) {
    const double p = density[(c * 4) / half];
    Matrix m(n);
    for (int i = 0; i < n; ++i)
      for (int o = 0; o < n; ++o)
        if (d.chance(p)) m[i].push_back(o);
    r.cycle(json{{"req", m}, {"update", d.chance(0.9)}});
  }
  std::vector<std::vector<int>> voq(n, std::vector<int>(n, 0));
  for (int c = 0; c < cycles - half; ++c) {
    const double load = 0.5 + 0.5 * c / (cycles - half);
    for (int i = 0; i < n; ++i)
      if (d.chance(load)) ++voq[i][d.below(n)];
    Matrix m(n);
    for (int i = 0; i < n; ++i)
      for (int o = 0; o < n; ++o)
        if (voq[i][o] > 0) m[i].push_back(o);
    const bool update = d.chance(0.95);
    const json out = r.cycle(json{{"req", m}, {"update", update}});
    if (update)
      for (int i = 0; i < n; ++i)
        if (out["grant"][i] >= 0) --voq[i][out["grant"][i].get<int>()];
  }
  r.write(dir);
}

// ---------------------------------------------------------------------------------------------
// Credit manager.

json no_ops(const std::vector<int>& heads) { return json{{"head_bytes", heads}}; }

void credit_directed(const std::filesystem::path& dir) {
  Recorder r("credit_manager", "credit_manager_directed",
             "exact fit, rounding up to 64-byte blocks, refused underflow and overflow (state kept), "
             "consume and restore on one VL in one cycle (consume first), zero-byte packet",
             json{{"vls", 4}, {"block_bytes", 64}, {"capacity_blocks", {16, 8, 1, 64}}},
             json{{"kind", "directed"}});
  auto step = [&](std::vector<int> heads, json consume, json restore) {
    json in = no_ops(heads);
    if (!consume.is_null()) in["consume"] = consume;
    if (!restore.is_null()) in["restore"] = restore;
    return r.cycle(in);
  };
  auto use = [](int vl, int bytes) { return json{{"vl", vl}, {"bytes", bytes}}; };
  auto ret = [](int vl, int blocks) { return json{{"vl", vl}, {"blocks", blocks}}; };
  json out = step({64, 512, 64, 4096}, nullptr, nullptr);
  r.require(out["can_send"] == json({true, true, true, true}), "every head fits exactly");
  step({64, 512, 64, 4096}, use(1, 512), nullptr);
  out = step({65, 1, 1, 4097}, use(1, 1), nullptr);
  r.require(out["available"][1] == 0 && out["underflow"] == true, "VL1 empty: 1 byte refused");
  r.require(out["can_send"] == json({true, false, true, false}), "65 B = 2 blocks; 4097 B = 65 blocks");
  step({0, 0, 0, 0}, nullptr, ret(1, 3));
  out = step({0, 0, 0, 0}, use(0, 65), ret(1, 6));
  r.require(out["overflow"] == true && out["underflow"] == false, "3 + 6 > 8 blocks refused");
  out = step({0, 128, 0, 0}, use(2, 64), ret(2, 1));
  r.require(out["overflow"] == false && out["available"][1] == 3, "consume then restore in one cycle");
  r.require(step({0, 0, 0, 0}, nullptr, ret(2, 1))["overflow"] == true, "VL2 already full");
  step({0, 0, 0, 4096}, use(3, 4096), ret(3, 64));
  out = step({0, 0, 0, 0}, use(3, 0), nullptr);
  r.require(out["available"][3] == 64 && out["underflow"] == false, "64 out and back; 0 bytes = 0 blocks");
  out = step({1024, 0, 0, 0}, use(0, 1024), ret(0, 2));
  r.require(out["available"][0] == 14 && out["underflow"] == true, "16 blocks needed, 14 held");
  out = step({1024, 0, 0, 0}, use(0, 1024), nullptr);
  r.require(out["available"][0] == 16 && out["can_send"][0] == true, "restored to 16");
  step({0, 0, 0, 0}, nullptr, ret(0, 0));
  out = step({1, 1, 1, 1}, use(0, 1), ret(0, 17));
  r.require(out["underflow"] == true && out["overflow"] == true, "both refused");
  for (int c = 0; c < 3; ++c) step({64, 64, 64, 64}, nullptr, nullptr);
  r.write(dir);
}

void credit_random(const std::filesystem::path& dir, std::uint64_t seed, int cycles) {
  Draw d(seed);
  const int vls = 4;
  std::vector<std::uint64_t> cap(vls);
  for (auto& c : cap) c = static_cast<std::uint64_t>(d.range(1, 200));
  Recorder r("credit_manager", "credit_manager_random_s" + std::to_string(seed),
             "random capacities 1..200 blocks; per cycle random head sizes, a consume (p 0.5) and a "
             "restore (p 0.45) on random VLs, about 1 in 10 deliberately violating conservation",
             json{{"vls", vls}, {"block_bytes", 64}, {"capacity_blocks", cap}},
             json{{"kind", "random"}, {"seed", seed}, {"cycles", cycles}});
  std::vector<fabricsim::hw::CreditCounter> shadow;
  for (auto c : cap) shadow.emplace_back(64, c);
  for (int c = 0; c < cycles; ++c) {
    std::vector<int> heads(vls);
    for (int v = 0; v < vls; ++v)
      heads[v] = d.chance(0.2) ? 0 : static_cast<int>(d.range(1, static_cast<std::int64_t>(cap[v]) * 64 + 128));
    json in = no_ops(heads);
    if (d.chance(0.5)) {
      const int v = static_cast<int>(d.below(vls));
      const auto held = static_cast<std::int64_t>(shadow[v].available());
      const std::int64_t bytes = d.chance(0.9) ? d.range(0, held * 64) : d.range(held * 64 + 1, held * 64 + 640);
      in["consume"] = json{{"vl", v}, {"bytes", bytes}};
      try {
        shadow[v].consume(static_cast<std::uint64_t>(bytes));
      } catch (const std::logic_error&) {
      }
    }
    if (d.chance(0.45)) {
      const int v = static_cast<int>(d.below(vls));
      const auto lent = static_cast<std::int64_t>(shadow[v].capacity() - shadow[v].available());
      const std::int64_t blocks = d.chance(0.9) ? d.range(0, lent) : d.range(lent + 1, lent + 10);
      in["restore"] = json{{"vl", v}, {"blocks", blocks}};
      try {
        shadow[v].restore(static_cast<std::uint64_t>(blocks));
      } catch (const std::logic_error&) {
      }
    }
    r.cycle(in);
  }
  r.write(dir);
}

// ---------------------------------------------------------------------------------------------
// IB VL arbiter.

void vl_directed_a(const std::filesystem::path& dir) {
  const json params{{"vls", 4},
                    {"high", {{0, 2}, {1, 1}}},
                    {"low", {{2, 4}, {3, 2}, {2, 0}}},
                    {"high_limit", 1}};
  Recorder r("vl_arbiter", "vl_arbiter_directed_limit",
             "high table VL0 x2, VL1 x1; low table VL2 x4, VL3 x2, an unused entry; high limit 4 KiB. "
             "Weighted turns, high over low, the limit owing one low packet after more than 4 KiB of "
             "high traffic, low-only service, select without update, overdrawn entries, idle",
             params, json{{"kind", "directed"}});
  auto step = [&](std::vector<int> heads, bool update) {
    return r.cycle(json{{"head_bytes", heads}, {"update", update}})["vl"].get<int>();
  };
  for (int vl : {0, 0, 1, 0, 0, 1}) r.require(step({64, 64, 0, 0}, true) == vl, "high table weights 2:1");
  r.require(step({4096, 4096, 64, 64}, true) == 0, "high before low; 64 blocks overdraw VL0's entry");
  r.require(step({4096, 4096, 64, 64}, true) == 1, "64 blocks sent: not over the limit yet");
  r.require(step({4096, 4096, 64, 64}, true) == 2, "over 4 KiB while low waited: low owed");
  r.require(step({4096, 4096, 64, 64}, true) == 0, "back to high");
  for (int vl : {1, 2, 0, 0}) r.require(step({64, 64, 64, 64}, true) == vl, "limit counts blocks: 65 > 64");
  for (int vl : {2, 2, 3, 3, 2, 2}) r.require(step({0, 0, 64, 64}, true) == vl, "low weights 4:2, VL2 had sent 2 of 4");
  r.require(step({0, 0, 0, 64}, false) == 3, "VL2 idle: its entry forfeits");
  r.require(step({0, 0, 0, 64}, false) == 3, "select without update repeats");
  r.require(step({0, 0, 1000, 64}, true) == 2, "VL2 back");
  r.require(step({0, 0, 1000, 64}, true) == 3, "1000 B overdrew the 4-block entry");
  r.require(step({0, 0, 0, 0}, true) == -1, "idle");
  for (int c = 0; c < 10; ++c) step({c % 2 ? 200 : 0, 64 * (c % 3), 1, c % 4 ? 4096 : 0}, c % 5 != 4);
  r.write(dir);
}

void vl_directed_b(const std::filesystem::path& dir) {
  const json params{{"vls", 2}, {"high", json::array()}, {"low", {{0, 1}, {1, 3}, {0, 0}, {1, 2}}},
                    {"high_limit", 255}};
  Recorder r("vl_arbiter", "vl_arbiter_directed_low_only",
             "empty high table; low table VL0 x1, VL1 x3, an unused entry, VL1 x2; unlimited",
             params, json{{"kind", "directed"}});
  auto step = [&](std::vector<int> heads, bool update) {
    return r.cycle(json{{"head_bytes", heads}, {"update", update}})["vl"].get<int>();
  };
  for (int vl : {0, 1, 1, 1, 1, 1, 0, 1}) r.require(step({64, 64}, true) == vl, "weights 1, 3, (0), 2");
  r.require(step({64, 0}, true) == 0, "only VL0");
  r.require(step({0, 128}, true) == 1, "only VL1");
  for (int c = 0; c < 8; ++c) step({c % 3 ? 64 : 0, 300}, true);
  r.write(dir);
}

json random_vl_table(Draw& d, int vls, int depth) {
  json t = json::array();
  const int n = static_cast<int>(d.range(0, depth));
  for (int e = 0; e < n; ++e) {
    const int w = d.chance(0.15) ? 0 : d.chance(0.7) ? static_cast<int>(d.range(1, 8)) : static_cast<int>(d.range(9, 255));
    t.push_back({static_cast<int>(d.below(vls)), w});
  }
  return t;
}

bool has_live(const json& t) {
  for (const auto& e : t)
    if (e[1].get<int>() > 0) return true;
  return false;
}

void vl_random(const std::filesystem::path& dir, std::uint64_t seed, int cycles) {
  Draw d(seed);
  const int vls = static_cast<int>(d.range(1, 8));
  json high, low;
  do {
    high = random_vl_table(d, vls, 16);
    low = random_vl_table(d, vls, 16);
  } while (!has_live(high) && !has_live(low));
  const int limits[] = {0, 1, 2, 3, 255};
  const json params{{"vls", vls}, {"high", high}, {"low", low}, {"high_limit", limits[d.below(5)]}};
  Recorder r("vl_arbiter", "vl_arbiter_random_s" + std::to_string(seed),
             "random tables (0..16 entries, weights 0..255, mostly 1..8) and high limit; per cycle each "
             "VL idle with p 0.35, else a head of 1..256 B (p 0.5), 257..4096 B (p 0.4) or up to 16 KiB; "
             "update with probability 0.9",
             params, json{{"kind", "random"}, {"seed", seed}, {"cycles", cycles}});
  for (int c = 0; c < cycles; ++c) {
    std::vector<int> heads(vls);
    for (auto& h : heads) {
      if (d.chance(0.35)) h = 0;
      else if (d.chance(0.5)) h = static_cast<int>(d.range(1, 256));
      else if (d.chance(0.8)) h = static_cast<int>(d.range(257, 4096));
      else h = static_cast<int>(d.range(4097, 16384));
    }
    r.cycle(json{{"head_bytes", heads}, {"update", d.chance(0.9)}});
  }
  r.write(dir);
}

// ---------------------------------------------------------------------------------------------
// Packet FIFO.

constexpr int kFifoDepth = 6;      // RTL: Depth of the Verilated model
constexpr int kFifoDataMask = 0xFFFF;  // RTL: DataW = 16

/// Writes packets word by word; a word offered and not accepted (wr_ready low) is offered again.
class PacketWriter {
 public:
  explicit PacketWriter(std::vector<int> lengths) : lengths_(std::move(lengths)) {}
  bool done() const { return pkt_ >= lengths_.size(); }
  json word() const {
    return json{{"data", ((static_cast<int>(pkt_) + 1) * 256 + word_) & kFifoDataMask},
                {"last", word_ + 1 == lengths_[pkt_]}};
  }
  void accepted() {
    if (++word_ == lengths_[pkt_]) {
      word_ = 0;
      ++pkt_;
    }
  }

 private:
  std::vector<int> lengths_;
  std::size_t pkt_ = 0;
  int word_ = 0;
};

/// One FIFO cycle: offers the writer's next word when `offer`, advances it when taken.
json fifo_cycle(Recorder& r, PacketWriter& w, bool saf, bool offer, bool rd_ready) {
  json in{{"saf", saf}, {"rd_ready", rd_ready}};
  const bool offered = offer && !w.done();
  if (offered) in["wr"] = w.word();
  json out = r.cycle(in);
  if (offered && out["wr_ready"].get<bool>()) w.accepted();
  return out;
}

void fifo_directed(const std::filesystem::path& dir, bool saf) {
  const std::string mode = saf ? "saf" : "ct";
  Recorder r("packet_fifo", "packet_fifo_directed_" + mode,
             saf ? "store-and-forward: a packet readable only after its last word; the next, incomplete "
                   "packet held back; full FIFO of complete packets; switch to cut-through when empty"
                 : "cut-through: head readable the cycle after its first word; reader catching up with the "
                   "writer mid-packet; full FIFO refuses words, no bypass in the cycle it is read; a "
                   "packet longer than the FIFO streams through",
             json{{"depth_words", kFifoDepth}, {"data_bits", 16}}, json{{"kind", "directed"}});
  if (!saf) {
    PacketWriter w({3, 2, 8, 1, 1});
    json out = fifo_cycle(r, w, false, true, true);
    r.require(out["rd_valid"] == false, "empty");
    out = fifo_cycle(r, w, false, false, true);
    r.require(out["rd_valid"] == true && out["rd_last"] == false, "first word readable next cycle");
    out = fifo_cycle(r, w, false, true, true);
    r.require(out["rd_valid"] == false, "mid-packet underrun");
    for (int c = 0; c < 3; ++c) fifo_cycle(r, w, false, true, true);
    for (int c = 0; c < 8; ++c) fifo_cycle(r, w, false, true, false);
    out = fifo_cycle(r, w, false, true, true);
    r.require(out["wr_ready"] == false && out["words"] == kFifoDepth, "full: the word is refused although "
              "a word leaves in the same cycle (no bypass)");
    out = fifo_cycle(r, w, false, true, true);
    r.require(out["wr_ready"] == true && out["words"] == kFifoDepth - 1, "the read freed a slot, only now");
    while (!w.done()) fifo_cycle(r, w, false, true, true);
    for (int c = 0; c < 8; ++c) fifo_cycle(r, w, false, false, c % 3 != 1);
  } else {
    PacketWriter w({3, 2, 2, 2, 2, 1, 4});
    json out;
    for (int c = 0; c < 3; ++c) {
      out = fifo_cycle(r, w, true, true, true);
      r.require(out["rd_valid"] == false, "incomplete packet held");
    }
    out = fifo_cycle(r, w, true, true, true);  // first word of packet 2 goes in
    r.require(out["rd_valid"] == true && out["packets"] == 1, "complete after the last word");
    fifo_cycle(r, w, true, false, true);
    out = fifo_cycle(r, w, true, false, true);
    r.require(out["rd_last"] == true, "last word of packet 1");
    out = fifo_cycle(r, w, true, false, true);
    r.require(out["rd_valid"] == false && out["words"] == 1, "packet 2 incomplete: held");
    for (int c = 0; c < 7; ++c) fifo_cycle(r, w, true, true, false);
    out = fifo_cycle(r, w, true, true, false);
    r.require(out["wr_ready"] == false && out["packets"] == 3, "full of complete packets");
    while (out["words"] != 0) out = fifo_cycle(r, w, true, false, true);
    for (int c = 0; c < 3; ++c) fifo_cycle(r, w, false, true, true);
    while (!w.done()) fifo_cycle(r, w, false, true, true);
    for (int c = 0; c < 4; ++c) fifo_cycle(r, w, false, false, true);
  }
  r.write(dir);
}

void fifo_random(const std::filesystem::path& dir, std::uint64_t seed, int cycles, bool toggle_mode) {
  Draw d(seed);
  const int max_len = toggle_mode ? kFifoDepth : 2 * kFifoDepth;
  std::vector<int> lengths;
  for (int p = 0; p < cycles; ++p) lengths.push_back(static_cast<int>(d.range(1, max_len)));
  PacketWriter w(lengths);
  Recorder r("packet_fifo", "packet_fifo_random_s" + std::to_string(seed),
             toggle_mode ? "packets of 1..6 words (fit the FIFO), mode toggling between cut-through and "
                           "store-and-forward with p 0.02 per cycle, offer and read probabilities in phases"
                         : "cut-through only, packets of 1..12 words (up to twice the FIFO), offer and read "
                           "probabilities in phases",
             json{{"depth_words", kFifoDepth}, {"data_bits", 16}},
             json{{"kind", "random"}, {"seed", seed}, {"cycles", cycles}});
  const double offer_p[] = {0.9, 0.5, 0.3, 0.8};
  const double read_p[] = {0.3, 0.5, 0.9, 0.8};
  bool saf = toggle_mode;
  for (int c = 0; c < cycles; ++c) {
    const int phase = (c * 4) / cycles;
    if (toggle_mode && d.chance(0.02)) saf = !saf;
    fifo_cycle(r, w, saf, d.chance(offer_p[phase]), d.chance(read_p[phase]));
  }
  r.write(dir);
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path dir =
      argc > 1 ? std::filesystem::path(argv[1]) : std::filesystem::path(FABRICSIM_SOURCE_DIR) / "testbench/vectors";
  std::filesystem::create_directories(dir);

  rr_directed(dir);
  rr_random(dir, 4, 1, 1000);
  rr_random(dir, 5, 2, 1000);

  for (int n : {4, 8})
    for (int k : {1, 3}) islip_directed(dir, n, k);
  islip_random(dir, 4, 1, 11, 1500);
  islip_random(dir, 4, 3, 12, 1500);
  islip_random(dir, 8, 1, 13, 1500);
  islip_random(dir, 8, 3, 14, 1500);

  credit_directed(dir);
  credit_random(dir, 21, 1500);

  vl_directed_a(dir);
  vl_directed_b(dir);
  for (std::uint64_t seed : {31, 32, 33, 34}) vl_random(dir, seed, 800);

  fifo_directed(dir, false);
  fifo_directed(dir, true);
  fifo_random(dir, 41, 1500, true);
  fifo_random(dir, 42, 1500, false);
  return 0;
}
