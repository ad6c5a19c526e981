#include "hw/allocator.h"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace fabricsim::hw {

bool Grant::operator==(const Grant& other) const {
  return input == other.input && output == other.output;
}

namespace {

constexpr int kUnmatched = -1;

/// Bits of an index 0..n-1 in RTL (at least 1): $clog2(n).
int index_bits(int n) {
  int bits = 1;
  while ((1 << bits) < n) ++bits;
  return bits;
}

void check_range(const char* what, long long value) {
  const ParamSpec& spec = allocator_params()[what];
  if (value < spec.lo<std::int64_t>() || value > spec.hi<std::int64_t>())
    throw std::invalid_argument(std::string("allocator ") + what + " " + std::to_string(value) + " outside " +
                                spec.range_text());
}

const AllocatorParams& validated(const AllocatorParams& p) {
  check_range("inputs", p.inputs);
  check_range("outputs", p.outputs);
  check_range("iterations", p.iterations);
  return p;
}

/// Request table shared by every policy: one request per (input, output) pair, the
/// better one kept, looked up through a dense slot index so duplicates cost O(1).
class AllocatorBase : public SwitchAllocator {
 public:
  AllocatorBase(std::string_view name, const AllocatorParams& p)
      : p_(validated(p)), slot_(static_cast<std::size_t>(p_.inputs) * p_.outputs, kUnmatched), name_(name) {}

  void add_request(const AllocRequest& r) override {
    if (r.input < 0 || r.input >= p_.inputs || r.output < 0 || r.output >= p_.outputs)
      throw std::out_of_range("allocator request " + std::to_string(r.input) + " -> " +
                              std::to_string(r.output) + " outside " + std::to_string(p_.inputs) +
                              " inputs x " + std::to_string(p_.outputs) + " outputs");
    int& slot = slot_[index(r)];
    if (slot == kUnmatched) {
      slot = static_cast<int>(requests_.size());
      requests_.push_back(r);
      return;
    }
    AllocRequest& kept = requests_[slot];
    if (r.priority > kept.priority || (r.priority == kept.priority && r.age < kept.age)) kept = r;
  }

  void clear() override {
    for (const auto& r : requests_) slot_[index(r)] = kUnmatched;
    requests_.clear();
    grants_.clear();
  }

  std::string_view name() const override { return name_; }

 protected:
  std::size_t index(const AllocRequest& r) const {
    return static_cast<std::size_t>(r.input) * p_.outputs + r.output;
  }

  // What every round reads first, the name last: a round's lines are few.
  AllocatorParams p_;
  bool pending_ = false;       ///< the last arbitrate()'s state changes, not yet committed by update_state()
  std::vector<AllocRequest> requests_;
  std::vector<Grant> grants_;  ///< the last arbitrate()'s matching, by input

 private:
  std::vector<int> slot_;  ///< (input, output) -> index in requests_, or kUnmatched
  std::string name_;
};

/// How a grant or accept arbiter picks among its candidates.
enum class Choice { kRoundRobin, kRandom };
/// Which accepted/issued grants move the round-robin pointers.
enum class PointerUpdate {
  kEveryGrant,            ///< RRM: grant pointer past every issued grant, accept past every accept
  kFirstIterationAccept,  ///< iSLIP: both pointers only for grants accepted in iteration 1
  kNever,                 ///< PIM: no pointers
};

/// Separable input/output allocator run as request-grant-accept iterations: each
/// unmatched output grants one unmatched requesting input, each input accepts one
/// granting output; later iterations fill in around the matches made so far. The
/// policies differ in how the pointers move (PointerUpdate): round_robin (RRM) moves the
/// grant pointer past every grant, so outputs synchronise; islip only on grants accepted
/// in the first iteration, which desynchronises them; pim has none (uniform random
/// grant and accept). docs/switch.md, "Switch allocators", cites each one's source.
class SeparableAllocator final : public AllocatorBase {
 public:
  SeparableAllocator(std::string_view name, const AllocatorParams& p, int iterations,
                     Choice choice, PointerUpdate update)
      : AllocatorBase(name, p), update_(update), pointers_(static_cast<std::size_t>(p.outputs) + p.inputs, 0),
        iterations_(iterations), choice_(choice), requesters_(p.outputs), granters_(p.inputs),
        match_(static_cast<std::size_t>(p.inputs) + p.outputs, kUnmatched), rng_(p.seed) {}

  const std::vector<Grant>& arbitrate() override {
    // Only the outputs that were requested and the inputs that received grants are
    // visited, so a round costs what it decides, not the radix.
    for (int o : requested_) requesters_[o].clear();
    requested_.clear();
    std::vector<Grant>& result = grants_;
    result.clear();
    if (conflict_free(result)) return result;
    for (const auto& r : requests_) {
      if (requesters_[r.output].empty()) requested_.push_back(r.output);
      requesters_[r.output].push_back(r.input);
    }
    std::sort(requested_.begin(), requested_.end());
    for (int o : requested_) std::sort(requesters_[o].begin(), requesters_[o].end());
    pointer_moves_.clear();
    moves_from_grants_ = false;
    if (choice_ == Choice::kRandom) next_rng_ = rng_;  // draws are committed by update_state(), so arbitrate() repeats

    for (int it = 0; it < iterations_; ++it) {
      // Grant: every unmatched output picks one unmatched input that requested it.
      granted_.clear();
      for (int o : requested_) {
        if (out_match(o) != kUnmatched) continue;
        candidates_.clear();
        for (int i : requesters_[o])
          if (in_match(i) == kUnmatched) candidates_.push_back(i);
        if (candidates_.empty()) continue;
        const int i = choose(candidates_, grant_ptr(o));
        if (granters_[i].empty()) granted_.push_back(i);
        granters_[i].push_back(o);  // ascending o
        if (update_ == PointerUpdate::kEveryGrant) pointer_moves_.push_back({&grant_ptr(o), (i + 1) % p_.inputs});
      }
      if (granted_.empty()) break;  // no grant was possible, later iterations cannot add any
      // Accept: every input that received grants takes one of them.
      std::sort(granted_.begin(), granted_.end());
      for (int i : granted_) {
        auto& grants = granters_[i];
        const int o = choose(grants, accept_ptr(i));
        grants.clear();
        in_match(i) = o;
        out_match(o) = i;
        result.push_back(Grant{i, o});
        const bool islip_move = update_ == PointerUpdate::kFirstIterationAccept && it == 0;
        if (islip_move) pointer_moves_.push_back({&grant_ptr(o), (i + 1) % p_.inputs});
        if (islip_move || update_ == PointerUpdate::kEveryGrant)
          pointer_moves_.push_back({&accept_ptr(i), (o + 1) % p_.outputs});
      }
    }
    pending_ = true;
    for (const Grant& g : result) in_match(g.input) = out_match(g.output) = kUnmatched;
    std::sort(result.begin(), result.end(), [](const Grant& a, const Grant& b) { return a.input < b.input; });
    return result;
  }

  /// iSLIP and RRM: grant_ptr per output, accept_ptr per input (the RTL's pointer registers).
  void debug_state(std::vector<StateVector>& out) const override {
    if (update_ == PointerUpdate::kNever) {
      out.clear();
      return;
    }
    // Refilled in place: lockstep reads it after every committing edge.
    out.resize(2);
    out[0].name = "grant_ptr";
    out[0].bits = index_bits(p_.inputs);
    out[1].name = "accept_ptr";
    out[1].bits = index_bits(p_.outputs);
    const auto begin = pointers_.begin();
    out[0].values.assign(begin, begin + p_.outputs);
    out[1].values.assign(begin + p_.outputs, pointers_.end());
  }

  void update_state() override {
    if (!pending_) return;
    if (moves_from_grants_) {  // a conflict-free round: each pointer moves once, past its grant
      if (update_ != PointerUpdate::kNever)
        for (const Grant& g : grants_) {
          grant_ptr(g.output) = (g.input + 1) % p_.inputs;
          accept_ptr(g.input) = (g.output + 1) % p_.outputs;
        }
    } else {
      for (const auto& [pointer, value] : pointer_moves_) *pointer = value;  // in decision order: the last move wins
      if (choice_ == Choice::kRandom) rng_ = next_rng_;
    }
    pending_ = false;
  }

 private:
  /// When no two requests share an input or an output (a switch forwarding disjoint
  /// flows, S3's ring), every iteration-1 grant is accepted and nothing is chosen among
  /// candidates: fills `result` (by input) without building the rounds' per-port lists;
  /// update_state() then moves each pointer once, past its grant, as the rounds below
  /// would. False (nothing changed) otherwise.
  bool conflict_free(std::vector<Grant>& result) {
    // The matching is all kUnmatched between rounds: marks here (one request needs none).
    if (requests_.size() > 1) {
      bool disjoint = true;
      std::size_t marked = 0;
      for (; marked < requests_.size(); ++marked) {
        const AllocRequest& r = requests_[marked];
        if (in_match(r.input) != kUnmatched || out_match(r.output) != kUnmatched) {
          disjoint = false;
          break;
        }
        in_match(r.input) = r.output;
        out_match(r.output) = r.input;
      }
      for (std::size_t k = 0; k < marked; ++k) in_match(requests_[k].input) = out_match(requests_[k].output) = kUnmatched;
      if (!disjoint) return false;
    }
    // No draw (each choice has one candidate); update_state() moves the pointers from the grants.
    for (const AllocRequest& r : requests_) result.push_back(Grant{r.input, r.output});
    pending_ = true;
    moves_from_grants_ = true;
    if (result.size() > 1)
      std::sort(result.begin(), result.end(), [](const Grant& a, const Grant& b) { return a.input < b.input; });
    return true;
  }

  /// Picks from ascending `candidates`: the first at or after `pointer` (wrapping), or a
  /// uniform draw `rng() % n` when there is a choice (deterministic across platforms).
  int choose(const std::vector<int>& candidates, int pointer) {
    if (choice_ == Choice::kRandom) {
      if (candidates.size() == 1) return candidates.front();
      return candidates[next_rng_() % candidates.size()];
    }
    const auto it = std::lower_bound(candidates.begin(), candidates.end(), pointer);
    return it == candidates.end() ? candidates.front() : *it;
  }

  // What a conflict-free round reads, first.
  PointerUpdate update_;
  bool moves_from_grants_ = false;  ///< the last round was conflict-free: its moves are its grants' (update_state)
  /// The round-robin pointers in one array: per output its grant pointer (the highest-priority
  /// input), then per input its accept pointer (the highest-priority output).
  std::vector<int> pointers_;
  int& grant_ptr(int o) { return pointers_[static_cast<std::size_t>(o)]; }
  int& accept_ptr(int i) { return pointers_[static_cast<std::size_t>(p_.outputs + i)]; }
  std::vector<int> requested_;                ///< outputs with requests, ascending
  int iterations_;
  Choice choice_;
  std::vector<std::pair<int*, int>> pointer_moves_;  ///< the last arbitrate()'s pointer updates, for update_state()
  std::vector<std::vector<int>> requesters_;  ///< per output: requesting inputs, ascending
  std::vector<std::vector<int>> granters_;    ///< per input: granting outputs, ascending (empty between rounds)
  std::vector<int> granted_;                  ///< inputs granted in this iteration
  std::vector<int> candidates_;
  /// This round's matching, per input (the output it is matched to) and then per output
  /// (the input), in one array (a round reads both); all kUnmatched between rounds.
  std::vector<int> match_;
  int& in_match(int i) { return match_[static_cast<std::size_t>(i)]; }
  int& out_match(int o) { return match_[static_cast<std::size_t>(p_.inputs + o)]; }
  // After what every round reads (5 KiB: a round without a random choice does not touch them).
  std::mt19937_64 rng_, next_rng_;
};

/// Greedy allocator over a total order of requests: walk the requests best first and
/// grant each whose input and output are both still free (a maximal matching).
///   oldest_first: age ascending, ties by lower input then lower output (age-based
///     allocation; Dally & Towles, "Principles and Practices of Interconnection
///     Networks", 2004, ch. 19).
///   strict_priority: priority descending, then age ascending, then round-robin from a
///     per-output pointer that update_state() moves past each winner (Dally & Towles
///     ch. 18: priority arbitration with round-robin among equals).
class GreedyAllocator final : public AllocatorBase {
 public:
  GreedyAllocator(std::string_view name, const AllocatorParams& p, bool by_priority)
      : AllocatorBase(name, p), by_priority_(by_priority), rr_ptr_(p.outputs, 0),
        in_busy_(p.inputs, 0), out_busy_(p.outputs, 0) {}

  const std::vector<Grant>& arbitrate() override {
    order_ = requests_;
    std::sort(order_.begin(), order_.end(), [this](const AllocRequest& a, const AllocRequest& b) {
      if (by_priority_ && a.priority != b.priority) return a.priority > b.priority;
      if (a.age != b.age) return a.age < b.age;
      if (by_priority_) {
        const int da = rr_distance(a), db = rr_distance(b);
        if (da != db) return da < db;
      }
      return a.input != b.input ? a.input < b.input : a.output < b.output;
    });
    grants_.clear();
    for (const auto& r : order_) {
      if (in_busy_[r.input] || out_busy_[r.output]) continue;
      in_busy_[r.input] = out_busy_[r.output] = 1;
      grants_.push_back(Grant{r.input, r.output});
    }
    for (const Grant& g : grants_) in_busy_[g.input] = out_busy_[g.output] = 0;
    std::sort(grants_.begin(), grants_.end(),
              [](const Grant& a, const Grant& b) { return a.input < b.input; });
    pending_ = true;
    return grants_;
  }

  void update_state() override {
    if (by_priority_ && pending_)
      for (const auto& g : grants_) rr_ptr_[g.output] = (g.input + 1) % p_.inputs;
    pending_ = false;
  }

 private:
  /// Inputs after the output's pointer come first: 0 for the pointed-to input.
  int rr_distance(const AllocRequest& r) const {
    return (r.input - rr_ptr_[r.output] + p_.inputs) % p_.inputs;
  }

  bool by_priority_;
  std::vector<int> rr_ptr_;  ///< per output: input preferred among equal priority and age
  std::vector<AllocRequest> order_;            ///< scratch: this round's requests, best first
  std::vector<std::uint8_t> in_busy_, out_busy_;  ///< scratch: matched in this round; all 0 between rounds
};

}  // namespace

const std::vector<std::string>& allocator_names() {
  static const std::vector<std::string> names{"round_robin", "islip", "pim", "oldest_first",
                                              "strict_priority"};
  return names;
}

std::unique_ptr<SwitchAllocator> make_allocator(std::string_view name, const AllocatorParams& p) {
  if (name == "round_robin")
    return std::make_unique<SeparableAllocator>(name, p, 1, Choice::kRoundRobin,
                                                PointerUpdate::kEveryGrant);
  if (name == "islip")
    return std::make_unique<SeparableAllocator>(name, p, p.iterations, Choice::kRoundRobin,
                                                PointerUpdate::kFirstIterationAccept);
  if (name == "pim")
    return std::make_unique<SeparableAllocator>(name, p, p.iterations, Choice::kRandom,
                                                PointerUpdate::kNever);
  if (name == "oldest_first") return std::make_unique<GreedyAllocator>(name, p, false);
  if (name == "strict_priority") return std::make_unique<GreedyAllocator>(name, p, true);
  std::string valid;
  for (const auto& n : allocator_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown allocator '" + std::string(name) + "'; valid: " + valid);
}

const ParamBlock& allocator_params() {
  static const ParamBlock block{"allocator",
                                "the switch allocator core",
                                {{"inputs", ParamType::integer, "", "4", "1", "1024", {}, "", "crossbar inputs"},
                                 {"outputs", ParamType::integer, "", "4", "1", "1024", {}, "", "crossbar outputs"},
                                 {"iterations", ParamType::integer, "", "1", "1", "16", {}, "",
                                  "request-grant-accept iterations (islip, pim)"}}};
  return block;
}

}  // namespace fabricsim::hw
