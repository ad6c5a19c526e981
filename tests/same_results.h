// results.json of two implementations of one block compared (the RTL co-simulation
// tests): equal apart from the wall-clock section and the keys that choose the
// implementation.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fabricsim::testing {

/// `r` without the simulator section and the configuration keys in `impl_keys`, each
/// `section.key` (switch.allocator_impl, link.credit_manager_impl).
inline nlohmann::json comparable_results(nlohmann::json r, const std::vector<std::string>& impl_keys) {
  r.erase("simulator");
  for (const auto& key : impl_keys) {
    const auto dot = key.find('.');
    nlohmann::json& section = r["config"][key.substr(0, dot)];
    if (section.is_object()) section.erase(key.substr(dot + 1));
  }
  return r;
}

/// Equal results, or the differing paths (not the whole documents) in the failure.
inline void expect_same_results(const nlohmann::json& a, const nlohmann::json& b,
                                const std::vector<std::string>& impl_keys) {
  const nlohmann::json d = nlohmann::json::diff(comparable_results(a, impl_keys), comparable_results(b, impl_keys));
  EXPECT_TRUE(d.empty()) << d.size() << " differences, the first: " << d.dump().substr(0, 1500);
}

}  // namespace fabricsim::testing
