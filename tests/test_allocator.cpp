// hw/ cores: switch allocators (round_robin = RRM, islip, pim, oldest_first,
// strict_priority). Sources: McKeown, "The iSLIP scheduling algorithm for input-queued
// switches", IEEE/ACM ToN 7(2), 1999 (RRM §II.B, iSLIP §III); Anderson, Owicki, Saxe,
// Thacker, "High-speed switch scheduling for local-area networks", ASPLOS 1992 (PIM).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hw/allocator.h"

namespace fabricsim::hw {
// Readable failure messages for grant lists.
void PrintTo(const Grant& g, std::ostream* os) { *os << g.input << "->" << g.output; }
}  // namespace fabricsim::hw

namespace {

using fabricsim::hw::AllocatorParams;
using fabricsim::hw::allocator_names;
using fabricsim::hw::AllocRequest;
using fabricsim::hw::Grant;
using fabricsim::hw::make_allocator;
using fabricsim::hw::SwitchAllocator;
using ::testing::HasSubstr;

/// Request matrix: req[i][o] set when input i has a cell for output o.
using Matrix = std::vector<std::vector<bool>>;

Matrix random_matrix(int inputs, int outputs, double density, std::mt19937_64& rng) {
  std::bernoulli_distribution bit(density);
  Matrix m(inputs, std::vector<bool>(outputs, false));
  for (auto& row : m)
    for (std::size_t o = 0; o < row.size(); ++o) row[o] = bit(rng);
  return m;
}

Matrix all_ones(int n) { return Matrix(n, std::vector<bool>(n, true)); }

void load(SwitchAllocator& a, const Matrix& m) {
  a.clear();
  for (int i = 0; i < static_cast<int>(m.size()); ++i)
    for (int o = 0; o < static_cast<int>(m[i].size()); ++o)
      if (m[i][o]) a.add_request(AllocRequest{i, o, 0, 0});
}

/// One allocation round as the switch runs it: load, arbitrate, commit.
std::vector<Grant> round(SwitchAllocator& a, const Matrix& m) {
  load(a, m);
  auto g = a.arbitrate();
  a.update_state();
  return g;
}

/// Size of a maximum bipartite matching (Kuhn's augmenting paths), the reference bound.
int maximum_matching(const Matrix& m) {
  const int inputs = static_cast<int>(m.size());
  const int outputs = inputs ? static_cast<int>(m[0].size()) : 0;
  std::vector<int> owner(outputs, -1);
  std::function<bool(int, std::vector<bool>&)> augment = [&](int i, std::vector<bool>& seen) {
    for (int o = 0; o < outputs; ++o) {
      if (!m[i][o] || seen[o]) continue;
      seen[o] = true;
      if (owner[o] < 0 || augment(owner[o], seen)) {
        owner[o] = i;
        return true;
      }
    }
    return false;
  };
  int size = 0;
  for (int i = 0; i < inputs; ++i) {
    std::vector<bool> seen(outputs, false);
    if (augment(i, seen)) ++size;
  }
  return size;
}

/// Checks the matching invariants; returns an explanation or "" when valid.
std::string matching_error(const std::vector<Grant>& grants, const Matrix& m) {
  std::set<int> ins, outs;
  int last_input = -1;
  for (const auto& g : grants) {
    const std::string at = " at " + std::to_string(g.input) + "->" + std::to_string(g.output);
    if (g.input < 0 || g.input >= static_cast<int>(m.size()) || g.output < 0 ||
        g.output >= static_cast<int>(m[0].size()) || !m[g.input][g.output])
      return "grant without request" + at;
    if (!ins.insert(g.input).second) return "input granted twice" + at;
    if (!outs.insert(g.output).second) return "output granted twice" + at;
    if (g.input <= last_input) return "grants not sorted by input" + at;
    last_input = g.input;
  }
  return "";
}

/// True when no request could be added to the matching (both its ends are free).
bool is_maximal(const std::vector<Grant>& grants, const Matrix& m) {
  std::set<int> ins, outs;
  for (const auto& g : grants) ins.insert(g.input), outs.insert(g.output);
  for (int i = 0; i < static_cast<int>(m.size()); ++i)
    for (int o = 0; o < static_cast<int>(m[i].size()); ++o)
      if (m[i][o] && !ins.count(i) && !outs.count(o)) return false;
  return true;
}

AllocatorParams params(int inputs, int outputs, int iterations = 1, std::uint64_t seed = 1) {
  AllocatorParams p;
  p.inputs = inputs;
  p.outputs = outputs;
  p.iterations = iterations;
  p.seed = seed;
  return p;
}

/// Mean matching size of `policy` over `rounds` random matrices drawn from `seed`.
double mean_match(const std::string& policy, int n, int iterations, double density, int rounds,
                  std::uint64_t seed, double* mean_maximum = nullptr) {
  auto a = make_allocator(policy, params(n, n, iterations, seed));
  std::mt19937_64 rng(seed);
  double total = 0, best = 0;
  for (int r = 0; r < rounds; ++r) {
    const Matrix m = random_matrix(n, n, density, rng);
    total += static_cast<double>(round(*a, m).size());
    best += maximum_matching(m);
  }
  if (mean_maximum) *mean_maximum = best / rounds;
  return total / rounds;
}

// Property (definition of a switch allocation, Dally & Towles 2004 ch. 19): every
// policy returns a matching - no input or output twice, every grant backed by a request -
// on random, possibly non-square request matrices, 1..16 ports, iterations 1..16, over
// consecutive rounds so pointer/RNG state evolves. Greedy policies always return a maximal
// matching, and islip/pim do once iterations >= min(inputs, outputs), since every iteration
// that leaves a grantable request unmatched adds at least one match (McKeown 1999 §III;
// Anderson 1992).
TEST(AllocatorProperty, EveryPolicyReturnsValidMatching) {
  std::mt19937_64 rng(2024);
  for (const auto& policy : allocator_names()) {
    for (int inputs = 1; inputs <= 16; ++inputs) {
      for (int iterations = 1; iterations <= 16; ++iterations) {
        const int outputs = 1 + static_cast<int>(rng() % 16);
        auto a = make_allocator(policy, params(inputs, outputs, iterations, rng()));
        for (int r = 0; r < 4; ++r) {
          const double density = 0.1 + 0.3 * r;
          const Matrix m = random_matrix(inputs, outputs, density, rng);
          const auto grants = round(*a, m);
          SCOPED_TRACE(policy + " " + std::to_string(inputs) + "x" + std::to_string(outputs) +
                       " k=" + std::to_string(iterations) + " round " + std::to_string(r));
          ASSERT_EQ(matching_error(grants, m), "");
          const bool separable = policy == "round_robin" || policy == "islip" || policy == "pim";
          const bool converged = policy != "round_robin" && iterations >= std::min(inputs, outputs);
          if (!separable || converged) {
            EXPECT_TRUE(is_maximal(grants, m));
          }
        }
      }
    }
  }
}

// With nothing requested there is nothing to connect, also after clear().
TEST(AllocatorProperty, NoRequestsNoGrants) {
  for (const auto& policy : allocator_names()) {
    auto a = make_allocator(policy, params(8, 8, 4));
    EXPECT_TRUE(a->arbitrate().empty()) << policy;
    a->add_request({1, 2, 0, 0});
    EXPECT_EQ(a->arbitrate(), (std::vector<Grant>{{1, 2}})) << policy;
    a->clear();
    EXPECT_TRUE(a->arbitrate().empty()) << policy;
    EXPECT_EQ(a->name(), policy);
  }
}

// The interface contract: arbitrate() only proposes; state moves in update_state(). Two
// calls without update_state() give the same matching for every policy, including pim
// (its random draws are committed with the state).
TEST(AllocatorProperty, ArbitrateWithoutUpdateIsRepeatable) {
  std::mt19937_64 rng(7);
  for (const auto& policy : allocator_names()) {
    auto a = make_allocator(policy, params(12, 12, 3, 99));
    for (int r = 0; r < 20; ++r) {
      const Matrix m = random_matrix(12, 12, 0.4, rng);
      load(*a, m);
      const auto first = a->arbitrate();
      EXPECT_EQ(a->arbitrate(), first) << policy;
      a->update_state();
    }
  }
}

// McKeown 1999 §III (iSLIP, property 2/3): under a full request matrix the grant pointers
// desynchronise within N rounds, after which every round is a perfect N-match (100%
// throughput under uniform saturating load) with a single iteration.
TEST(IslipAllocator, DesynchronisesToPerfectMatchingUnderFullLoad) {
  for (int n : {2, 4, 8, 16}) {
    auto a = make_allocator("islip", params(n, n, 1));
    std::vector<std::size_t> sizes;
    for (int r = 0; r < 4 * n; ++r) sizes.push_back(round(*a, all_ones(n)).size());
    EXPECT_LT(sizes.front(), static_cast<std::size_t>(n)) << "starts synchronised, N=" << n;
    for (int r = n; r < 4 * n; ++r)
      EXPECT_EQ(sizes[r], static_cast<std::size_t>(n)) << "N=" << n << " round " << r;
  }
}

// McKeown 1999 §II.B: RRM moves the grant pointer past the granted input even when the
// grant is refused, so with every input requesting every output all outputs keep the
// same pointer, all grant the same input, and only one connection is made per round
// (the 2x2 example's 50% throughput generalises to 1/N).
TEST(RoundRobinAllocator, SynchronisesUnderFullLoad) {
  for (int n : {2, 4, 8, 16}) {
    auto a = make_allocator("round_robin", params(n, n, 1));
    for (int r = 0; r < 4 * n; ++r) {
      const auto grants = round(*a, all_ones(n));
      ASSERT_EQ(grants.size(), 1u) << "N=" << n << " round " << r;
      EXPECT_EQ(grants[0].input, r % n) << "all outputs grant the same, rotating input";
    }
  }
}

// McKeown 1999 §III: pointers move only for grants accepted in the first iteration. Here
// 1->1 is matched in iteration 2; had output 1's grant pointer moved past input 1, round 2
// would grant 2->1 and 0->0 instead of the single 0->1.
TEST(IslipAllocator, OnlyFirstIterationAcceptsMovePointers) {
  auto a = make_allocator("islip", params(3, 3, 2));
  Matrix m(3, std::vector<bool>(3, false));
  m[0][0] = m[0][1] = m[1][1] = m[2][1] = true;
  EXPECT_EQ(round(*a, m), (std::vector<Grant>{{0, 0}, {1, 1}}));
  EXPECT_EQ(round(*a, m), (std::vector<Grant>{{0, 1}}));
}

// A round whose requests share no input and no output (the allocator's shortcut: every
// grant accepted, no choice made) moves the pointers as any first-iteration accept does:
// grant pointer past the input, accept pointer past the output.
TEST(AllocatorPointers, ConflictFreeRoundMovesThemLikeAnyOther) {
  for (const char* policy : {"round_robin", "islip"}) {
    Matrix alone(3, std::vector<bool>(3, false));
    alone[0][1] = true;  // 0->1 only
    auto grant_side = make_allocator(policy, params(3, 3, 1));
    EXPECT_EQ(round(*grant_side, alone), (std::vector<Grant>{{0, 1}})) << policy;
    Matrix contend(3, std::vector<bool>(3, false));
    contend[0][1] = contend[1][1] = contend[2][1] = true;  // output 1's pointer now at input 1
    EXPECT_EQ(round(*grant_side, contend), (std::vector<Grant>{{1, 1}})) << policy;
    auto accept_side = make_allocator(policy, params(3, 3, 1));
    round(*accept_side, alone);
    Matrix offers(3, std::vector<bool>(3, true));
    offers[1] = offers[2] = std::vector<bool>(3, false);  // input 0 alone, granted by all; its pointer at output 2
    EXPECT_EQ(round(*accept_side, offers), (std::vector<Grant>{{0, 2}})) << policy;
  }
}

// A conflict-free round chooses nothing, so it draws nothing from PIM's random stream,
// even when the round before it was arbitrated (its draws made) but never committed: the
// rounds after it match as if the discarded round had not been.
TEST(PimAllocator, ConflictFreeRoundDrawsNothing) {
  std::mt19937_64 rng(5);
  Matrix alone(8, std::vector<bool>(8, false));
  alone[2][5] = true;
  auto a = make_allocator("pim", params(8, 8, 1, 42));
  auto b = make_allocator("pim", params(8, 8, 1, 42));
  load(*a, all_ones(8));
  a->arbitrate();  // draws, discarded: no update_state()
  EXPECT_EQ(round(*a, alone), (std::vector<Grant>{{2, 5}}));
  EXPECT_EQ(round(*b, alone), (std::vector<Grant>{{2, 5}}));
  for (int r = 0; r < 20; ++r) {
    const Matrix m = random_matrix(8, 8, 0.5, rng);
    EXPECT_EQ(round(*a, m), round(*b, m)) << "round " << r;
  }
}

// McKeown 1999 §III.C / Fig. 13: more iSLIP iterations fill in unmatched ports, so the
// average match size grows with k on random request matrices.
TEST(IslipAllocator, MoreIterationsMatchMore) {
  double one = 0, four = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    one += mean_match("islip", 16, 1, 0.3, 400, seed);
    four += mean_match("islip", 16, 4, 0.3, 400, seed);
  }
  EXPECT_GT(four, one * 1.05) << "k=1 " << one / 5 << ", k=4 " << four / 5;
}

// McKeown 1999 §III (fairness, no starvation): under saturating all-ones 4x4 load iSLIP
// serves every (input, output) pair with an equal share of the crossbar over the long run.
TEST(IslipAllocator, FairShareUnderFullLoad) {
  constexpr int n = 4, rounds = 400;
  auto a = make_allocator("islip", params(n, n, 1));
  std::vector<int> count(n * n, 0);
  for (int r = 0; r < rounds; ++r)
    for (const auto& g : round(*a, all_ones(n))) ++count[g.input * n + g.output];
  const double mean = std::accumulate(count.begin(), count.end(), 0.0) / (n * n);
  for (int c : count) EXPECT_NEAR(c, mean, 0.01 * mean);
}

// Anderson et al. 1992: PIM converges to a maximal match in O(log N) iterations on
// average (log2 N + 4/3 expected); with 4 iterations on dense 16x16 matrices it reaches at
// least 90% of the maximum matching.
TEST(PimAllocator, FourIterationsNearMaximum) {
  double maximum = 0;
  const double mean = mean_match("pim", 16, 4, 0.5, 500, 3, &maximum);
  EXPECT_GE(mean, 0.9 * maximum) << "pim " << mean << " of maximum " << maximum;
  const double single = mean_match("pim", 16, 1, 0.5, 500, 3);
  EXPECT_LT(single, 0.8 * maximum) << "one PIM iteration should be well short (~63%)";
}

// PIM is reproducible from its seed (deterministic mt19937_64 draws), the seed matters,
// and update_state() advances the stream so successive rounds draw afresh.
TEST(PimAllocator, SeededStreamIsDeterministic) {
  auto run = [](std::uint64_t seed) {
    auto a = make_allocator("pim", params(8, 8, 2, seed));
    std::vector<std::vector<Grant>> out;
    for (int r = 0; r < 20; ++r) out.push_back(round(*a, all_ones(8)));
    return out;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
  const auto rounds = run(5);
  int changes = 0;
  for (std::size_t r = 1; r < rounds.size(); ++r) changes += rounds[r] != rounds[r - 1];
  EXPECT_GT(changes, 10) << "PIM replays the same draws every round";
}

// Age-based allocation: when two inputs want the same output the older request wins,
// regardless of port order; equal ages fall back to the lower input.
TEST(OldestFirstAllocator, OldestRequestWinsContendedOutput) {
  auto a = make_allocator("oldest_first", params(4, 4));
  a->add_request({0, 2, 50, 0});
  a->add_request({3, 2, 10, 0});
  a->add_request({3, 1, 60, 0});
  a->add_request({0, 1, 70, 0});
  // 3->2 (age 10) first, then 0->2 blocked, 3->1 blocked (input 3 busy), 0->1 granted.
  EXPECT_EQ(a->arbitrate(), (std::vector<Grant>{{0, 1}, {3, 2}}));
  a->clear();
  a->add_request({2, 0, 5, 0});
  a->add_request({1, 0, 5, 0});
  EXPECT_EQ(a->arbitrate(), (std::vector<Grant>{{1, 0}}));
}

// Strict priority: the higher priority wins even when younger; among equal priority and
// age the per-output round-robin pointer rotates the winner (no starvation among equals).
TEST(StrictPriorityAllocator, HigherPriorityWinsAndEqualsRotate) {
  auto a = make_allocator("strict_priority", params(4, 2));
  a->add_request({0, 0, 1, 1});
  a->add_request({1, 0, 9, 5});
  EXPECT_EQ(a->arbitrate(), (std::vector<Grant>{{1, 0}}));
  a->clear();
  std::vector<int> winners;
  for (int r = 0; r < 6; ++r) {
    a->clear();
    for (int i : {0, 2, 3}) a->add_request({i, 1, 0, 3});
    const auto g = a->arbitrate();
    ASSERT_EQ(g.size(), 1u);
    winners.push_back(g[0].input);
    a->update_state();
  }
  EXPECT_EQ(winners, (std::vector<int>{0, 2, 3, 0, 2, 3}));
}

// Duplicate requests for the same (input, output) keep the better one: higher priority,
// then older; a worse duplicate does not overwrite it.
TEST(AllocatorRequests, DuplicateKeepsBetterRequest) {
  auto p = make_allocator("strict_priority", params(2, 1));
  p->add_request({0, 0, 0, 1});
  p->add_request({0, 0, 0, 5});  // upgrade
  p->add_request({0, 0, 0, 2});  // worse, ignored
  p->add_request({1, 0, 0, 4});
  EXPECT_EQ(p->arbitrate(), (std::vector<Grant>{{0, 0}}));

  auto o = make_allocator("oldest_first", params(2, 1));
  o->add_request({0, 0, 30, 0});
  o->add_request({0, 0, 10, 0});  // older, kept
  o->add_request({0, 0, 40, 0});  // younger, ignored
  o->add_request({1, 0, 20, 0});
  EXPECT_EQ(o->arbitrate(), (std::vector<Grant>{{0, 0}}));
}

TEST(AllocatorRequests, IndicesOutsideCrossbarThrow) {
  for (const auto& policy : allocator_names()) {
    auto a = make_allocator(policy, params(3, 2));
    EXPECT_THROW(a->add_request({3, 0, 0, 0}), std::out_of_range) << policy;
    EXPECT_THROW(a->add_request({0, 2, 0, 0}), std::out_of_range) << policy;
    EXPECT_THROW(a->add_request({-1, 0, 0, 0}), std::out_of_range) << policy;
  }
}

TEST(AllocatorRegistry, UnknownNameListsValidOnes) {
  EXPECT_EQ(allocator_names(), (std::vector<std::string>{"round_robin", "islip", "pim",
                                                         "oldest_first", "strict_priority"}));
  try {
    make_allocator("wavefront9", AllocatorParams{});
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown allocator 'wavefront9'; valid: round_robin, islip, "
                                    "pim, oldest_first, strict_priority"));
  }
}

TEST(AllocatorRegistry, BadParamsThrow) {
  for (const auto& policy : allocator_names()) {
    EXPECT_THROW(make_allocator(policy, params(4, 4, 0)), std::invalid_argument) << policy;
    EXPECT_THROW(make_allocator(policy, params(4, 4, 17)), std::invalid_argument) << policy;
    EXPECT_THROW(make_allocator(policy, params(0, 4)), std::invalid_argument) << policy;
    EXPECT_THROW(make_allocator(policy, params(4, 0)), std::invalid_argument) << policy;
    EXPECT_THROW(make_allocator(policy, params(1025, 4)), std::invalid_argument) << policy;
    EXPECT_NO_THROW(make_allocator(policy, params(1024, 1024, 16))) << policy;
  }
}

}  // namespace
