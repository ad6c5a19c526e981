// Switch allocators: each allocation round, match crossbar inputs to outputs so that
// every input and every output carries at most one connection. Same round protocol as
// the single-resource arbiters in arbiter.h (add_request, arbitrate, update_state,
// clear), policies chosen by name (BookSim's allocator family, SST Merlin xbar_arb_*).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hw/arbiter.h"  // StateVector
#include "hw/param_spec.h"

namespace fabricsim::hw {

/// One input's request for one output in this allocation round.
struct AllocRequest {
  int input = 0;            ///< 0..inputs-1
  int output = 0;           ///< 0..outputs-1
  std::uint64_t age = 0;    ///< smaller = older (the switch gives the time the packet left its source), for oldest_first
  int priority = 0;         ///< larger wins, for strict_priority
};

/// A granted input -> output connection through the crossbar.
struct Grant {
  int input = 0;   ///< crossbar input, 0..inputs-1
  int output = 0;  ///< crossbar output, 0..outputs-1
  bool operator==(const Grant&) const;
};

/// Shape and knobs of a switch allocator, checked by make_allocator().
struct AllocatorParams {
  int inputs = 4;           ///< crossbar inputs (range: allocator_params())
  int outputs = 4;          ///< crossbar outputs
  int iterations = 1;       ///< request-grant-accept iterations (islip, pim)
  std::uint64_t seed = 1;   ///< random stream (pim)
};

/// A switch allocator: computes a conflict-free matching of inputs to outputs.
class SwitchAllocator {
 public:
  virtual ~SwitchAllocator() = default;
  /// Adds a request; a second request for the same (input, output) pair keeps the better one
  /// (higher priority, then older). Throws std::out_of_range for bad indices.
  virtual void add_request(const AllocRequest& r) = 0;
  /// Computes this round's matching (each input and each output at most once), sorted by input.
  /// Does not clear requests; the state changes it implies (pointer moves) are held until
  /// update_state(). The matching is the allocator's own (nothing is allocated per round):
  /// it stays valid until the next arbitrate() or clear().
  virtual const std::vector<Grant>& arbitrate() = 0;
  /// Commits the pointer/priority updates of the last arbitrate() (the switch calls it for
  /// every round it uses), before clear(): the updates follow from that round's requests
  /// and matching, which clear() drops.
  virtual void update_state() = 0;
  /// Drops this round's requests.
  virtual void clear() = 0;
  /// Registry name of the policy.
  virtual std::string_view name() const = 0;
  /// The committed state as named vectors (nothing by default): what lockstep compares
  /// with an RTL twin's debug ports after every committing edge.
  virtual void debug_state(std::vector<StateVector>& out) const { out.clear(); }
};

/// Names accepted by make_allocator(): round_robin, islip, pim, oldest_first, strict_priority.
const std::vector<std::string>& allocator_names();
/// The ranges of AllocatorParams (hw/param_spec.h).
const ParamBlock& allocator_params();
/// Builds the named policy. Throws std::invalid_argument "unknown allocator 'x'; valid:
/// round_robin, islip, ..." or for params outside their ranges.
std::unique_ptr<SwitchAllocator> make_allocator(std::string_view name, const AllocatorParams& p);

}  // namespace fabricsim::hw
