// The per-hop latency breakdown (`output.latency_breakdown`, tlm/latency_breakdown.h):
// on every example the parts of each packet in packets.csv add up to its network latency
// (each delivery also checks it to the tick, or the run fails) and the mean parts of
// results.json to the mean network latency; one packet through an idle switch has the
// closed form of docs/switch.md, "Timing"; an incast queues at the switch port it meets.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/command.h"
#include "tests/temp_files.h"

namespace {

namespace fs = std::filesystem;

struct BreakdownRun {
  int exit_code = -1;
  std::string output;
  nlohmann::json results;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  for (std::string f; std::getline(s, f, ',');) out.push_back(f);
  return out;
}

BreakdownRun run(const fs::path& config, const fs::path& out, const std::string& sets) {
  BreakdownRun r;
  const auto c = fabricsim::testing::run_command("run -q " + config.string() + " --out " + out.string() +
                                                 " --latency-breakdown --packet-csv " + sets);
  r.exit_code = c.exit_code;
  r.output = c.output;
  if (c.exit_code != 0) return r;
  std::ifstream(out / "results.json") >> r.results;
  std::ifstream csv(out / "packets.csv");
  std::string line;
  std::getline(csv, line);
  r.columns = split(line);
  while (std::getline(csv, line)) r.rows.push_back(split(line));
  return r;
}

int column(const BreakdownRun& r, const std::string& name) {
  for (std::size_t k = 0; k < r.columns.size(); ++k)
    if (r.columns[k] == name) return static_cast<int>(k);
  ADD_FAILURE() << "no column " << name;
  return 0;
}

const std::vector<std::string> kParts{"pipeline", "queueing", "arbitration", "flow_control",
                                      "serialisation", "propagation", "fec"};

// Every row: the parts (whole ps) against network_latency_ns, written to 12 significant
// digits (tolerance: half a unit of its last digit, at least half a ps).
void expect_rows_add_up(const BreakdownRun& r, const std::string& what) {
  const int latency = column(r, "network_latency_ns");
  for (const auto& row : r.rows) {
    std::int64_t sum = 0;
    for (const auto& part : kParts) sum += std::stoll(row.at(static_cast<std::size_t>(column(r, part + "_ps"))));
    const double ns = std::stod(row.at(static_cast<std::size_t>(latency)));
    ASSERT_NEAR(static_cast<double>(sum) / 1000, ns, std::max(5e-4, ns * 5e-12)) << what << ": packet " << row.at(0);
  }
}

// The mean parts (results.json) against the mean network latency: the same packets.
void expect_means_add_up(const BreakdownRun& r, const std::string& what) {
  const auto& delivered = r.results.at("latency_breakdown").at("delivered");
  if (delivered.at("packets").get<std::uint64_t>() == 0) return;
  double sum = 0;
  for (const auto& part : kParts) sum += delivered.at("mean_ns").at(part).get<double>();
  const double mean = r.results.at("latency").at("network_latency_ns").at("mean").get<double>();
  EXPECT_NEAR(sum, mean, mean * 1e-9) << what;
}

TEST(LatencyBreakdown, PartsAddUpOnEveryExample) {
  const fs::path dir = fabricsim::testing::test_temp_dir("breakdown");
  std::vector<fs::path> examples;
  for (const auto& e : fs::directory_iterator(fs::path(FABRICSIM_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".yaml") examples.push_back(e.path());
  ASSERT_FALSE(examples.empty());
  std::size_t with_rows = 0;  // a training step may still compute after 200 us
  for (const fs::path& example : examples) {
    // 20 us of each (in full where the cut is refused, e.g. a flow starting later).
    BreakdownRun r = run(example, dir / example.stem(), "--set simulation.duration=20us --set simulation.warmup=0s");
    if (r.exit_code == 2) r = run(example, dir / example.stem(), "");
    // A training step computes first: 200 us reaches its transfers.
    if (r.exit_code == 0 && r.rows.empty())
      r = run(example, dir / example.stem(), "--set simulation.duration=200us --set simulation.warmup=0s");
    ASSERT_EQ(r.exit_code, 0) << example << ":\n" << r.output;
    with_rows += !r.rows.empty();
    expect_rows_add_up(r, example.string());
    expect_means_add_up(r, example.string());
  }
  EXPECT_GE(with_rows + 1, examples.size());
}

// examples/single_switch.yaml, one 4 KiB packet through the idle switch: no queueing,
// arbitration or flow control; propagation and FEC of two 3 m cables with KP4 FEC; the
// pipeline is the switch's 200 cycles at 1.5 GHz after the header's edge (docs/switch.md,
// "Timing"); exact to the ps.
TEST(LatencyBreakdown, OnePacketThroughAnIdleSwitch) {
  const fs::path dir = fabricsim::testing::test_temp_dir("breakdown");
  const fs::path example = fs::path(FABRICSIM_SOURCE_DIR) / "examples" / "single_switch.yaml";
  const BreakdownRun r = run(example, dir / "one",
                    "--set simulation.warmup=0s --set traffic.pattern=explicit "
                    "--set 'traffic.flows=[{src: 0, dst: 1, messages: 1, message_size: 4KiB}]'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.rows.size(), 1U);
  auto part = [&](const std::string& p) { return std::stoll(r.rows[0].at(static_cast<std::size_t>(column(r, p + "_ps")))); };
  EXPECT_EQ(part("queueing"), 0);
  EXPECT_EQ(part("arbitration"), 0);
  EXPECT_EQ(part("flow_control"), 0);
  EXPECT_EQ(part("propagation"), 2 * 15000);  // 3 m at 5 ns/m, twice
  // From the header to the first edge after it (less than a cycle) and 200 cycles.
  const std::int64_t cycle_ps = 667;
  EXPECT_GE(part("pipeline"), 200 * 2000 / 3);
  EXPECT_LT(part("pipeline"), 200 * 2000 / 3 + cycle_ps);
  expect_rows_add_up(r, "one packet");
  const auto& sw = r.results.at("latency_breakdown").at("switches");
  ASSERT_EQ(sw.size(), 1U);
  EXPECT_EQ(sw.begin()->at("packets").get<std::uint64_t>(), 1U);
  EXPECT_EQ(sw.begin()->at("tier").get<std::string>(), "leaf");
}

// An incast: every packet's queueing is at the switch, on the target's port.
TEST(LatencyBreakdown, AnIncastQueuesAtTheTargetsPort) {
  const fs::path dir = fabricsim::testing::test_temp_dir("breakdown");
  const fs::path example = fs::path(FABRICSIM_SOURCE_DIR) / "examples" / "single_switch.yaml";
  const BreakdownRun r = run(example, dir / "incast",
                    "--set simulation.warmup=0s --set simulation.duration=30us --set traffic.pattern=incast "
                    "--set traffic.incast_target=0 --set traffic.load=0.5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto& b = r.results.at("latency_breakdown");
  const double queueing = b.at("delivered").at("mean_ns").at("queueing").get<double>() +
                          b.at("delivered").at("mean_ns").at("arbitration").get<double>();
  EXPECT_GT(queueing, b.at("delivered").at("mean_ns").at("pipeline").get<double>());
  const auto& ports = b.at("switches").begin()->at("ports");
  ASSERT_EQ(ports.size(), 1U) << ports.dump();
  expect_rows_add_up(r, "incast");
  expect_means_add_up(r, "incast");
}

}  // namespace
