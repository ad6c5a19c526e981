// The error a configuration raises, for tests of the messages users see.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/config_reader.h"

namespace fabricsim::testing {

/// The message of the ConfigError that `load` raises. Any other outcome returns a text
/// that no expected message matches, saying what happened.
template <class Load>
std::string config_error_of(Load&& load) {
  try {
    load();
  } catch (const sim::ConfigError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a ConfigError: ") + e.what() + ">";
  }
  return "<no error>";
}

/// The error of the configuration file `file` with the `--set` overrides.
inline std::string file_error_of(const std::string& file, const std::vector<std::string>& overrides = {}) {
  return config_error_of([&] { sim::load_config(file, overrides); });
}

/// The error of `yaml`, read as the file "bad.yaml", with the `--set` overrides.
inline std::string yaml_error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return config_error_of([&] { sim::load_config_text(yaml, "bad.yaml", overrides); });
}

}  // namespace fabricsim::testing
