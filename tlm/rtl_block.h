// What every kind of RTL block implementation shares beside the transactor
// (tlm/rtl_transactor.h: time in messages and waveforms, folders, debug ports): this
// process's model table per kind.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tlm/rtl_model.h"

namespace fabricsim::tlm_fabric {

/// This process's registered models of `kind` (builtin_rtl_models(), then those test code
/// added); a deque: blocks hold references to their entries while tests add theirs. Empty
/// without -DFABRICSIM_RTL=ON.
std::deque<RtlModel>& rtl_model_table(const std::string& kind);
/// The entry of `kind` named `name` built at `sizes`, or nullptr.
const RtlModel* find_rtl_model(const std::string& kind, std::string_view name, const std::vector<int>& sizes);
/// Adds the models of `kind` among `models` (test_only_rtl_models()) marked test_only. For
/// test code. Throws std::logic_error when one (name, sizes) is there already.
void add_rtl_models_of(const std::string& kind, const std::vector<RtlModel>& models);

/// The RTL twin inside `block` when it is an `Rtl` or a `Lockstep` (its rtl()); null for
/// the hw core alone. Each kind's finish_waveform() and rtl_block() look through it.
template <class Rtl, class Lockstep, class Block>
auto* rtl_twin_of(Block& block) {
  using R = std::conditional_t<std::is_const_v<Block>, const Rtl, Rtl>;
  using L = std::conditional_t<std::is_const_v<Block>, const Lockstep, Lockstep>;
  R* rtl = dynamic_cast<R*>(&block);
  if (auto* lockstep = dynamic_cast<L*>(&block)) rtl = &lockstep->rtl();
  return rtl;
}

}  // namespace fabricsim::tlm_fabric
