// Same configuration and seed, same results: every example is run twice through the
// `fabricsim` binary (separate processes, so nothing carries over in memory) and the
// two results.json must be byte-identical once the "simulator" section (wall time,
// speed) is removed; the packets.csv timelines must be identical too.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hw/units.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "tests/command.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::hw::Time;
using fabricsim::testing::run_command;

// Longer examples are cut to this much simulated time to keep the suite quick.
const Time kMaxDuration = Time::us(100);
const Time kShortWarmup = Time::us(10);

std::vector<fs::path> examples() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(FABRICSIM_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// --set overrides that shorten a long example, if they still give a valid configuration.
std::string shortening(const fs::path& example) {
  const auto c = fabricsim::sim::load_config(example.string());
  if (!(kMaxDuration < c.simulation.duration)) return "";
  std::vector<std::string> sets{"simulation.duration=" + fabricsim::hw::to_string(kMaxDuration)};
  if (!(c.simulation.warmup < kMaxDuration))
    sets.push_back("simulation.warmup=" + fabricsim::hw::to_string(kShortWarmup));
  try {
    fabricsim::sim::load_config(example.string(), sets);
  } catch (const fabricsim::sim::ConfigError&) {
    return "";  // e.g. a flow that starts later: run it in full
  }
  std::string args;
  for (const auto& s : sets) args += " --set " + s;
  return args;
}

class Determinism : public ::testing::TestWithParam<fs::path> {};

TEST_P(Determinism, TwoRunsGiveIdenticalResults) {
  const fs::path example = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("fabricsim_determinism_" + example.stem().string() + "_" +
                                                    std::to_string(getpid()));
  fs::remove_all(dir);
  // Both runs write to the same --out folder, so the echoed configuration is the same.
  const std::string args = "run " + example.string() + shortening(example) + " --packet-csv --out " + (dir / "out").string();
  std::vector<nlohmann::json> results;
  std::vector<std::string> packets;
  for (int run = 0; run < 2; ++run) {
    const auto r = run_command(args);
    ASSERT_EQ(r.exit_code, 0) << "fabricsim " << args << "\n" << r.output;
    const std::string text = read_file(dir / "out/results.json");
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << "results.json of run " << run << " is not JSON";
    ASSERT_TRUE(j.contains("simulator"));
    j.erase("simulator");
    results.push_back(std::move(j));
    packets.push_back(read_file(dir / "out/packets.csv"));
    fs::remove_all(dir / "out");
  }
  fs::remove_all(dir);
  // A run that moves nothing would be trivially identical.
  EXPECT_GT(results[0]["packets"]["delivered"].get<std::uint64_t>(), 0u) << "no packet delivered: nothing compared";
  const std::string a = results[0].dump(1), b = results[1].dump(1);
  if (a != b) {
    // Show where they part, as JSON Patch operations (RFC 6902).
    const auto diff = nlohmann::json::diff(results[0], results[1]);
    nlohmann::json first = nlohmann::json::array();
    for (std::size_t i = 0; i < diff.size() && i < 10; ++i) first.push_back(diff[i]);
    ADD_FAILURE() << example.filename().string() << ": results.json differ between two runs (" << diff.size()
                  << " differences), first ones:\n"
                  << first.dump(1);
  }
  EXPECT_TRUE(packets[0] == packets[1]) << example.filename().string() << ": packets.csv differ between two runs";
  EXPECT_FALSE(packets[0].empty());
}

std::string test_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Examples, Determinism, ::testing::ValuesIn(examples()), test_name);

}  // namespace
