// A fresh folder per test and whole-file writes, for tests that run the binary on files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace fabricsim::testing {

/// An empty folder under the system temp folder named for the running test and process.
inline std::filesystem::path test_temp_dir(const std::string& prefix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path d = std::filesystem::path(::testing::TempDir()) /
                                  ("fabricsim_" + prefix + "_" + info->test_suite_name() + "_" + info->name() + "_" +
                                   std::to_string(getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

/// Writes `text` to `file`; returns `file`.
inline std::filesystem::path write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file) << text;
  return file;
}

}  // namespace fabricsim::testing
