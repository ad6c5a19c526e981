#include "hw/arbiter.h"

#include <stdexcept>

namespace fabricsim::hw {

RoundRobinArbiter::RoundRobinArbiter(int inputs) : requested_(inputs > 0 ? inputs : 0, false) {
  if (inputs <= 0) throw std::invalid_argument("arbiter needs at least one input");
}

void RoundRobinArbiter::add_request(const ArbiterRequest& request) {
  if (request.input < 0 || request.input >= static_cast<int>(requested_.size()))
    throw std::out_of_range("arbiter request from input " + std::to_string(request.input) +
                            " outside 0.." + std::to_string(requested_.size() - 1));
  if (!requested_[request.input]) ++count_;
  requested_[request.input] = true;
}

int RoundRobinArbiter::arbitrate() const {
  if (count_ == 0) return kNoGrant;
  // From the pointer up, then around from 0.
  const int n = static_cast<int>(requested_.size());
  for (int i = pointer_; i < n; ++i)
    if (requested_[i]) return i;
  for (int i = 0; i < pointer_; ++i)
    if (requested_[i]) return i;
  return kNoGrant;
}

void RoundRobinArbiter::update_state(int winner) {
  // Grant-and-advance: the winner becomes lowest priority next round.
  if (winner >= 0) pointer_ = (winner + 1) % static_cast<int>(requested_.size());
}

void RoundRobinArbiter::debug_state(std::vector<StateVector>& out) const {
  int bits = 1;
  while ((1 << bits) < static_cast<int>(requested_.size())) ++bits;
  out.assign(1, StateVector{"ptr", bits, {static_cast<std::uint64_t>(pointer_)}});
}

void RoundRobinArbiter::clear() {
  requested_.assign(requested_.size(), false);
  count_ = 0;
}

const std::vector<std::string>& arbiter_names() {
  static const std::vector<std::string> names{"round_robin"};
  return names;
}

std::unique_ptr<Arbiter> make_arbiter(std::string_view name, int inputs) {
  if (name == "round_robin") return std::make_unique<RoundRobinArbiter>(inputs);
  std::string valid;
  for (const auto& n : arbiter_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown arbiter '" + std::string(name) + "'; valid: " + valid);
}

}  // namespace fabricsim::hw
