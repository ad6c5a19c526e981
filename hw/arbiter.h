// Arbitration policies behind one interface (SST Merlin xbar_arb_*, BookSim
// arbiter family). The switch collects requests for a resource at a clock
// edge, asks for a winner, and commits the grant with update_state().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fabricsim::hw {

/// Result of arbitrate() when nobody requested.
inline constexpr int kNoGrant = -1;

/// One requester's bid for a resource in this arbitration round.
struct ArbiterRequest {
  int input = 0;             ///< requester index, 0..inputs-1
  std::uint64_t age = 0;     ///< arrival order (smaller = older), for age-based policies
  int priority = 0;          ///< larger wins under priority policies
};

/// One named vector of an arbiter's or allocator's internal state (a pointer per output, ...), for
/// comparing with an RTL twin's debug port: element k sits at bits [k*bits, (k+1)*bits).
struct StateVector {
  std::string name;                    ///< e.g. grant_ptr
  int bits = 1;                        ///< width of one element in the RTL packing, 1..32
  std::vector<std::uint64_t> values;   ///< one value per element
};

/// A single-resource arbiter over a fixed number of requesters.
class Arbiter {
 public:
  virtual ~Arbiter() = default;
  /// Adds a request for this round; at most one per input.
  virtual void add_request(const ArbiterRequest& request) = 0;
  /// Chooses a winner among this round's requests, or kNoGrant; does not change state.
  virtual int arbitrate() const = 0;
  /// Commits a grant to `winner` (advances pointers / history).
  virtual void update_state(int winner) = 0;
  /// Drops this round's requests.
  virtual void clear() = 0;
  /// Number of requests in this round.
  virtual int request_count() const = 0;
  /// The state an RTL twin exposes on debug ports (round robin: `ptr`); empty by default.
  virtual void debug_state(std::vector<StateVector>& out) const { out.clear(); }
};

/// Round-robin: the requester after the last winner has highest priority.
class RoundRobinArbiter final : public Arbiter {
 public:
  explicit RoundRobinArbiter(int inputs);
  void add_request(const ArbiterRequest& request) override;
  int arbitrate() const override;
  void update_state(int winner) override;
  void clear() override;
  int request_count() const override { return count_; }
  /// Index with highest priority in the next round.
  int pointer() const { return pointer_; }
  /// `ptr`: pointer(), $clog2(inputs) bits wide (at least 1), as rtl/rr_arbiter.sv's ptr_o.
  void debug_state(std::vector<StateVector>& out) const override;

 private:
  std::vector<bool> requested_;
  int pointer_ = 0;
  int count_ = 0;
};

/// Names accepted by make_arbiter().
const std::vector<std::string>& arbiter_names();
/// Builds the named policy; throws std::invalid_argument listing valid names.
std::unique_ptr<Arbiter> make_arbiter(std::string_view name, int inputs);

}  // namespace fabricsim::hw
