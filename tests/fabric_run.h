// One simulation run by an end-to-end test: in a forked child (sim/child_run.h, SystemC
// elaborates once per process), checked for an error and for packet conservation.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/child_run.h"
#include "sim/config.h"

namespace fabricsim::testing {

/// `base` followed by `more` (--set overrides, applied in order).
inline std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

/// Runs `config` and returns its results. Expects no error and packet conservation,
/// counted independently: every injected packet is delivered, dropped (and counted) or
/// still held somewhere.
inline nlohmann::json run_checked(const sim::FabricConfig& config) {
  const nlohmann::json r = sim::run_in_child(config);
  EXPECT_FALSE(r.contains("error")) << r.dump().substr(0, 400);
  if (const auto p = r.find("packets"); p != r.end()) {
    EXPECT_EQ(p->at("injected").get<long>(),
              p->at("delivered").get<long>() + p->at("dropped").get<long>() + p->at("in_flight").get<long>());
  }
  return r;
}

}  // namespace fabricsim::testing
