// Configuration includes and the fabric presets (presets/*.yaml): `include:` merges the
// included document under the including one (the including file wins, maps merge key by
// key, paths resolve against the including file, `--set` applies last); an error inside
// an included file names that file and line; cycles are errors; every preset is valid,
// has the data rate its name promises and a source or "assumption" on every value;
// `fabricsim compare` on two presets writes its table, IB NDR's small-message latency
// below RoCE's.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hw/phy.h"
#include "sim/compare.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "tests/command.h"
#include "tests/config_error.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::sim::ConfigError;
using fabricsim::sim::FabricConfig;
using fabricsim::sim::load_config;
using fabricsim::testing::file_error_of;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kPresets = fs::path(FABRICSIM_SOURCE_DIR) / "presets";

// A scratch folder per test with files written from YAML literals.
class IncludeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fabricsim_presets_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(IncludeTest, IncludingFileOverridesIncludedKeys) {
  write("base.yaml",
        "link:\n"
        "  cable_length: 30m\n"
        "  lanes: 4\n"
        "switch:\n"
        "  core_clock: 1GHz\n");
  const std::string main = write("main.yaml",
                                 "include: base.yaml\n"
                                 "link:\n"
                                 "  cable_length: 2m\n");
  const FabricConfig c = load_config(main);
  EXPECT_DOUBLE_EQ(c.link.phy.cable_length.in_metres(), 2.0);          // the including file wins
  EXPECT_EQ(c.link.phy.lanes, 4);                                       // the rest of link: from base
  EXPECT_DOUBLE_EQ(c.switch_params.core_clock.in_hertz(), 1e9);            // a whole section from base
  EXPECT_FALSE(c.echo.contains("include"));                             // the echo is the merged document
  EXPECT_EQ(c.echo["link"]["lanes"], "4");
}

TEST_F(IncludeTest, NestedMapsMergeKeyByKeyAndListsAreReplaced) {
  write("base.yaml",
        "link: {flow_control: pfc}\n"
        "switch:\n"
        "  pfc: {xoff: 128KiB, xon: 64KiB, headroom: 96KiB}\n"
        "  input_buffer: 512KiB\n"  // lossless: 2 VLs x (xoff + headroom)
        "  sl_to_vl: [0, 0, 0]\n"
        "  vls: 2\n");
  const std::string main = write("main.yaml",
                                 "include: base.yaml\n"
                                 "switch:\n"
                                 "  pfc:\n"
                                 "    xon: 32KiB\n"
                                 "  sl_to_vl: [1]\n");
  const FabricConfig c = load_config(main);
  EXPECT_EQ(c.switch_params.pfc.xoff_bytes, 128u * 1024);  // from base, two levels down
  EXPECT_EQ(c.switch_params.pfc.xon_bytes, 32u * 1024);    // overridden two levels down
  EXPECT_EQ(c.switch_params.pfc.headroom_bytes, 96u * 1024);
  EXPECT_EQ(c.switch_params.vls, 2);
  EXPECT_EQ(c.switch_params.sl_to_vl, std::vector<int>({1}));  // a list is replaced, not merged
}

TEST_F(IncludeTest, ListOfIncludesLaterWinsAndPathsAreRelativeToTheIncludingFile) {
  write("presets/a.yaml",
        "include: sub/b.yaml\n"  // relative to presets/
        "link: {lanes: 2, cable_length: 7m}\n");
  write("presets/sub/b.yaml", "link: {lanes: 1, cable_length: 9m, fec: none}\n");
  write("presets/c.yaml", "link: {cable_length: 11m}\n");
  const std::string main = write("configs/main.yaml",
                                 "include: [../presets/a.yaml, ../presets/c.yaml]\n"
                                 "simulation: {seed: 5}\n");
  const FabricConfig c = load_config(main);
  EXPECT_EQ(c.link.phy.lanes, 2);                                  // a over b
  EXPECT_DOUBLE_EQ(c.link.phy.cable_length.in_metres(), 11.0);     // c (later) over a
  EXPECT_EQ(c.link.phy.fec, fabricsim::hw::FecKind::none);         // b, two levels down
  EXPECT_EQ(c.simulation.seed, 5u);
}

TEST_F(IncludeTest, SetAppliesAfterTheIncludes) {
  write("base.yaml", "link: {lanes: 4}\n");
  const std::string main = write("main.yaml", "include: base.yaml\nlink: {lanes: 2}\n");
  EXPECT_EQ(load_config(main, {"link.lanes=1"}).link.phy.lanes, 1);
  EXPECT_THAT(file_error_of(main, {"link.lanes=99"}), HasSubstr("--set link.lanes: link.lanes: must be an integer in 1..16"));
}

TEST_F(IncludeTest, ErrorInAnIncludedFileNamesThatFileAndLine) {
  const std::string base = write("base.yaml",
                                 "# a preset\n"
                                 "link:\n"
                                 "  lanes: 99\n");
  const std::string main = write("main.yaml",
                                 "include: base.yaml\n"
                                 "link: {cable_length: 2m}\n");
  EXPECT_THAT(file_error_of(main), HasSubstr(base + ":3:10: link.lanes: must be an integer in 1..16, got '99'"));
}

TEST_F(IncludeTest, UnknownKeyInAnIncludedFileNamesThatFileAndLine) {
  const std::string base = write("deep/base.yaml",
                                 "switch:\n"
                                 "  pfc:\n"
                                 "    xof: 1KiB\n");
  const std::string main = write("main.yaml", "include: deep/base.yaml\nswitch: {pfc: {xon: 1KiB}}\n");
  const std::string e = file_error_of(main);
  EXPECT_THAT(e, HasSubstr(base + ":3:5: switch.pfc.xof: unknown key"));
  EXPECT_THAT(e, HasSubstr("did you mean 'xoff'?"));
}

TEST_F(IncludeTest, SyntaxErrorInAnIncludedFileNamesThatFile) {
  const std::string base = write("base.yaml", "link:\n  lanes: [4\n");
  const std::string main = write("main.yaml", "include: base.yaml\n");
  EXPECT_THAT(file_error_of(main), HasSubstr(base + ":"));
  EXPECT_THAT(file_error_of(main), HasSubstr("YAML syntax error"));
}

TEST_F(IncludeTest, ErrorsInTheIncludingFileStillNameIt) {
  write("base.yaml", "link: {lanes: 4}\n");
  const std::string main = write("main.yaml",
                                 "include: base.yaml\n"
                                 "switch:\n"
                                 "  ports: 1\n");
  EXPECT_THAT(file_error_of(main), HasSubstr(main + ":3:10: switch.ports: must be an integer in 2..256"));
}

TEST_F(IncludeTest, MissingIncludedFileIsReportedAtTheIncludeLine) {
  const std::string main = write("main.yaml",
                                 "simulation: {seed: 1}\n"
                                 "include: nowhere.yaml\n");
  const std::string e = file_error_of(main);
  EXPECT_THAT(e, HasSubstr(main + ":2:10: include: included file '"));
  EXPECT_THAT(e, HasSubstr("nowhere.yaml' cannot be opened: No such file or directory"));
  EXPECT_THAT(e, HasSubstr("nowhere.yaml"));
}

TEST_F(IncludeTest, IncludeMustBeAPathOrAListOfPaths) {
  const std::string main = write("main.yaml", "include: {file: a.yaml}\n");
  EXPECT_THAT(file_error_of(main), HasSubstr(main + ":1:10: include: expected a file path or a non-empty list"));
}

TEST_F(IncludeTest, CycleIsAnError) {
  const std::string a = write("a.yaml", "include: b.yaml\nlink: {lanes: 4}\n");
  const std::string b = write("b.yaml", "link: {lanes: 2}\ninclude: a.yaml\n");
  const std::string e = file_error_of(a);
  EXPECT_THAT(e, HasSubstr(b + ":2:10: include: include cycle: "));
  EXPECT_THAT(e, HasSubstr("a.yaml -> "));
  EXPECT_THAT(e, HasSubstr("b.yaml -> "));
}

TEST_F(IncludeTest, SelfIncludeIsACycle) {
  const std::string a = write("a.yaml", "include: ./a.yaml\n");
  EXPECT_THAT(file_error_of(a), HasSubstr("include cycle"));
}

TEST_F(IncludeTest, DiamondIsNotACycle) {
  write("d.yaml", "link: {lanes: 4}\n");
  write("b.yaml", "include: d.yaml\n");
  write("c.yaml", "include: d.yaml\nlink: {cable_length: 3m}\n");
  const std::string a = write("a.yaml", "include: [b.yaml, c.yaml]\n");
  const FabricConfig c = load_config(a);
  EXPECT_EQ(c.link.phy.lanes, 4);
  EXPECT_DOUBLE_EQ(c.link.phy.cable_length.in_metres(), 3.0);
}

// ---------------------------------------------------------------- presets

const std::vector<std::string> kPresetNames{"ib_ndr", "ib_xdr", "roce_400g", "roce_800g", "roce_400g_lossy",
                                             "ethernet_ai_fabric"};

// A preset on a small leaf-spine, as `fabricsim compare` runs it.
FabricConfig preset_on_leaf_spine(const std::string& name) {
  return load_config((kPresets / (name + ".yaml")).string(),
                     {"topology={kind: leaf_spine, radix: 8}", "traffic.pattern=none"});
}

TEST(Presets, EachIsValidOnALeafSpineWithItsNominalDataRate) {
  const std::map<std::string, double> gbps{{"ib_ndr", 400},    {"ib_xdr", 800},          {"roce_400g", 400},
                                           {"roce_800g", 800}, {"roce_400g_lossy", 400}, {"ethernet_ai_fabric", 400}};
  for (const auto& name : kPresetNames) {
    SCOPED_TRACE(name);
    const FabricConfig c = preset_on_leaf_spine(name);
    EXPECT_NEAR(fabricsim::hw::PhyTiming(c.link.phy).data_rate().bps() / 1e9, gbps.at(name), 1e-6);
  }
}

// The presets themselves raise no configuration warning (PFC headroom short for the cable,
// WRED on a lossless link, ...).
TEST(Presets, RaiseNoWarnings) {
  for (const auto& name : kPresetNames) EXPECT_THAT(preset_on_leaf_spine(name).warnings, ::testing::IsEmpty()) << name;
}

TEST(Presets, LosslessnessAndTransportAreWhatTheNamesSay) {
  using fabricsim::tlm_fabric::FlowControl;
  using fabricsim::tlm_fabric::RetransmitMode;
  EXPECT_EQ(preset_on_leaf_spine("ib_ndr").link.flow_control, FlowControl::credit);
  EXPECT_EQ(preset_on_leaf_spine("ib_ndr").link.phy.framing, fabricsim::hw::Framing::infiniband);
  EXPECT_EQ(preset_on_leaf_spine("roce_400g").link.flow_control, FlowControl::pfc);
  EXPECT_EQ(preset_on_leaf_spine("roce_400g").link.phy.framing, fabricsim::hw::Framing::roce_v2);
  EXPECT_TRUE(preset_on_leaf_spine("roce_400g").switch_params.ecn.enabled);
  EXPECT_EQ(preset_on_leaf_spine("roce_400g").nic.cc.kind, fabricsim::hw::CcKind::dcqcn);
  EXPECT_EQ(preset_on_leaf_spine("roce_400g_lossy").link.flow_control, FlowControl::none);
  EXPECT_EQ(preset_on_leaf_spine("ethernet_ai_fabric").routing.algorithm, fabricsim::hw::RoutingAlgorithm::adaptive);
  EXPECT_EQ(preset_on_leaf_spine("ethernet_ai_fabric").nic.transport.mode, RetransmitMode::selective_repeat);
  EXPECT_EQ(preset_on_leaf_spine("ethernet_ai_fabric").link.flow_control, FlowControl::pfc);  // from roce_400g
}

// "Each parameter carries a comment with its source or says it is an assumption":
// every line that sets a value has a comment, on it or on the line that opens its map.
TEST(Presets, EveryValueCarriesASourceOrSaysItIsAnAssumption) {
  const std::regex value_line(R"(^(\s*)([A-Za-z_]+):\s*([^#\s][^#]*?)\s*(#.*)?$)");
  const std::regex opener(R"(^(\s*)([A-Za-z_]+):\s*(#.*)?$)");
  for (const auto& name : kPresetNames) {
    std::ifstream in(kPresets / (name + ".yaml"));
    ASSERT_TRUE(in) << name;
    std::vector<std::pair<int, bool>> openers;  // indentation, has a comment
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      const auto indent_of = [](const std::string& s) { return static_cast<int>(s.size()); };
      if (std::regex_match(line, m, opener)) {
        while (!openers.empty() && openers.back().first >= indent_of(m[1])) openers.pop_back();
        openers.emplace_back(indent_of(m[1]), m[3].matched);
        continue;
      }
      if (!std::regex_match(line, m, value_line) || m[2] == "include") continue;
      while (!openers.empty() && openers.back().first >= indent_of(m[1])) openers.pop_back();
      bool commented = m[4].matched;
      for (const auto& o : openers) commented = commented || o.second;
      EXPECT_TRUE(commented) << name << ".yaml:" << n << ": '" << line << "' has no source or assumption comment";
    }
  }
}

// --sizes on tiny clusters of radix-4 switches: one switch (4), a 2-tier leaf-spine (8)
// and a 3-tier Clos of 4 pods (16). The training step (--job's) gives iteration rates,
// the threshold marks and the ratio; the prices file gives cost.
TEST(Compare, SizesBuildEachTierWithMaterialsAndCost) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_compare_sizes_" + std::to_string(::getpid()));
  fs::remove_all(out);
  fs::create_directories(out);
  const std::string ib = (out / "ib.yaml").string(), roce = (out / "roce.yaml").string();
  const std::string step = "training: {forward: 20us, backward: 40us, optimizer: 2us, gradient_size: 256KiB, "
                           "bucket_size: 128KiB, steps: 1}\n";
  std::ofstream(ib) << "include: " << (kPresets / "ib_ndr.yaml").string() << "\n";
  std::ofstream(roce) << "include: " << (kPresets / "roce_400g.yaml").string() << "\n";
  std::ofstream(out / "step.yaml") << step;
  std::ofstream(out / "prices.yaml")
      << "currency: USD\n"
         "infiniband: {speed: 400Gb/s, switches: [{radix: 4, price: 1000}], transceiver: 10, fibre: 1, dac: 2, aec: 3, nic: 100}\n"
         "ethernet: {speed: 400Gb/s, switches: [{radix: 4, price: 500}], transceiver: 10, fibre: 1, dac: 2, aec: 3, nic: 100}\n";
  const auto r = fabricsim::testing::run_command("compare " + ib + " " + roce + " --workload training --sizes 4,8,16 "
                                                 "--radix 4 --comm-threshold 0.05 --no-plots --job " + (out / "step.yaml").string() + " --prices " +
                                                 (out / "prices.yaml").string() + " --out " + (out / "res").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("{kind: three_tier, radix: 4, oversubscription: 1, pods: 4, leaves_per_pod: 2}"));
  std::ifstream in(out / "res" / "compare.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["points"].size(), 3u);
  auto row = [&](int point, const std::string& metric) {
    for (const auto& x : j["points"][point]["rows"])
      if (x["metric"] == metric) return x["values"];
    return nlohmann::json();
  };
  for (int p = 0; p < 3; ++p) EXPECT_EQ(row(p, "fabric: switch tiers")["ib"], p + 1);
  // 16 endpoints, radix 4: 8 leaves, 8 spines, 4 cores (Al-Fares k = 4); 16 links per tier.
  EXPECT_EQ(row(2, "fabric: core switches (radix 4)")["ib"], 4);
  EXPECT_EQ(row(2, "fabric: spine-core links")["roce"], 16);
  // Cost: 20 switches, 2 x 16 optical links of 2 transceivers + a fibre, 16 AEC host
  // cables (the presets' 5 m host cable), 16 NICs.
  EXPECT_DOUBLE_EQ(row(2, "cost: fabric (switches, optics, copper, NICs)")["ib"].get<double>(),
                   20 * 1000.0 + 32 * 21 + 16 * 3 + 16 * 100);
  EXPECT_DOUBLE_EQ(row(2, "cost: fabric (switches, optics, copper, NICs)")["roce"].get<double>(),
                   20 * 500.0 + 32 * 21 + 16 * 3 + 16 * 100);
  // The rate ratio is against the InfiniBand column; the threshold marks follow the fraction.
  const double ib_step = j["points"][2]["runs"]["ib"]["training"]["step_time_us"].get<double>();
  const double roce_step = j["points"][2]["runs"]["roce"]["training"]["step_time_us"].get<double>();
  EXPECT_NEAR(row(2, "training: iteration rate relative to column 1")["roce"].get<double>(), ib_step / roce_step, 1e-9);
  for (const char* l : {"ib", "roce"}) {
    const double f = j["points"][2]["runs"][l]["training"]["communication_fraction"].get<double>();
    EXPECT_EQ(row(2, "training: exposed communication above 5%")[l].get<double>(), f > 0.05 ? 1.0 : 0.0) << l;
  }
  EXPECT_DOUBLE_EQ(row(2, "cost: fabric per training throughput")["ib"].get<double>(),
                   row(2, "cost: fabric (switches, optics, copper, NICs)")["ib"].get<double>() * ib_step / 1e6);
  fs::remove_all(out);
}

// A generated training job (--job) with dp 0 re-derives dp at each size (endpoints /
// tp); each point's iteration time is the Chakra run's, per iteration. With a scale-up
// domain (`server:` in the first configuration, servers of --gpus-per-server 2) each tp
// pair's all-reduces stay in its server: fewer packets enter the fabric than when the
// same job goes through the NICs (the second configuration, without `server:`).
TEST(Compare, SizesRunAGeneratedTrainingJobWithTpInServers) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_compare_job_" + std::to_string(::getpid()));
  fs::remove_all(out);
  fs::create_directories(out);
  const std::string job = (out / "job.yaml").string(), up = (out / "up.yaml").string(), nics = (out / "nics.yaml").string();
  std::ofstream(job) << "training:\n  model: {layers: 2, hidden: 256, heads: 4, seq: 128, vocab: 1000}\n"
                        "  parallelism: {tp: 2}\n  global_batch: 16\n";
  std::ofstream(up) << "include: " << (kPresets / "ib_ndr.yaml").string() << "\nserver: {scale_up: {}}\n";
  std::ofstream(nics) << "include: " << (kPresets / "ib_ndr.yaml").string() << "\n";
  const auto r = fabricsim::testing::run_command("compare " + up + " " + nics + " --workload training --sizes 4,8 "
                                                 "--radix 4 --gpus-per-server 2 --job " + job +
                                                 " --no-plots --out " + (out / "res").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("warning")));
  std::ifstream in(out / "res" / "compare.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["points"].size(), 2u);
  auto injected = [&](const nlohmann::json& m) {
    std::ifstream f(out / "res" / m["results"].get<std::string>());
    return nlohmann::json::parse(f)["packets"]["injected"].get<std::uint64_t>();
  };
  for (int p = 0; p < 2; ++p) {
    const nlohmann::json& m = j["points"][p]["runs"]["up"]["training"];
    EXPECT_EQ(m["job"]["plan"]["dp"], 2 * (p + 1)) << m.dump();  // 4 and 8 endpoints / tp 2
    EXPECT_EQ(m["job"]["ranks"], 4 * (p + 1));
    EXPECT_GT(m["step_time_us"].get<double>(), 0);
    EXPECT_GT(m["communication_fraction"].get<double>(), 0);
    EXPECT_LT(m["communication_fraction"].get<double>(), 1);
    const nlohmann::json& n = j["points"][p]["runs"]["nics"]["training"];
    EXPECT_GT(injected(m), 0u);
    EXPECT_LT(injected(m), injected(n)) << "point " << p;
    EXPECT_LT(m["step_time_us"].get<double>(), n["step_time_us"].get<double>()) << "point " << p;
  }
  // A server size other than --gpus-per-server, and --job without the training workload, are refused.
  std::ofstream(up) << "include: " << (kPresets / "ib_ndr.yaml").string() << "\nserver: {gpus: 4, scale_up: {}}\n";
  const auto bad = fabricsim::testing::run_command("compare " + up + " --workload training --sizes 4 --radix 4 "
                                                   "--gpus-per-server 2 --job " + job + " --no-plots --out " +
                                                   (out / "bad").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("up.yaml:2:16: server.gpus: differs from --gpus-per-server 2"));
  const auto unused = fabricsim::testing::run_command("compare " + nics + " --workload latency --job " + job);
  EXPECT_EQ(unused.exit_code, 2);
  EXPECT_THAT(unused.output, HasSubstr("--workload leaves training out"));
  fs::remove_all(out);
}

// The quickstart's cluster-size comparison at its smallest size (scripts/quickstart.sh):
// examples/training/gpt_small.yaml's job on a 16-endpoint radix-8 leaf-spine under both
// presets, with cost. Its tp groups (4 consecutive ranks in 8-GPU servers) run their
// all-reduces over NVLink: the fastest at a bus bandwidth above what a 400 Gb/s NIC
// (50 GB/s) could carry.
TEST(Compare, QuickstartJobAtOneSizeKeepsTpOnTheScaleUpDomain) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_compare_quickstart_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string src = FABRICSIM_SOURCE_DIR;
  const auto r = fabricsim::testing::run_command(
      "compare " + (kPresets / "ib_ndr.yaml").string() + " " + (kPresets / "roce_400g.yaml").string() +
      " --workload training --job " + src + "/examples/training/gpt_small.yaml --sizes 16 --radix 8 --prices " + src +
      "/examples/prices/400g.yaml --no-plots --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("warning")));
  std::ifstream in(out / "compare.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  for (const char* label : {"ib_ndr", "roce_400g"}) {
    const nlohmann::json& m = j["points"][0]["runs"][label]["training"];
    EXPECT_EQ(m["job"]["plan"]["tp"], 4);
    EXPECT_EQ(m["job"]["plan"]["dp"], 2);
    std::ifstream f(out / m["results"].get<std::string>());
    const nlohmann::json run = nlohmann::json::parse(f);
    ASSERT_TRUE(run["chakra"]["finished"].get<bool>()) << label;
    double fastest = 0;  // an all-reduce that waited behind no other transfer on its ports
    for (const auto& c : run["chakra"]["collectives"])
      if (c["type"] == "ALL_REDUCE" && c["ranks"] == 4) fastest = std::max(fastest, c["busbw_GBps"].get<double>());
    EXPECT_GT(fastest, 50.0) << label;
  }
  bool cost = false;
  for (const auto& row : j["points"][0]["rows"]) cost = cost || row["metric"] == "cost: fabric per training throughput";
  EXPECT_TRUE(cost);
  fs::remove_all(out);
}

// A prices file without the fabric's switch radix is an error before anything runs; the
// shape options need --sizes.
TEST(Compare, PricesThatDoNotFitFailBeforeTheRuns) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_compare_prices_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto r = fabricsim::testing::run_command("compare " + (kPresets / "ib_ndr.yaml").string() +
                                                 " --workload training --sizes 8 --radix 4 --no-plots --prices " +
                                                 (fs::path(FABRICSIM_SOURCE_DIR) / "examples/prices/400g.yaml").string() + " --out " +
                                                 out.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("400g.yaml:16:5: infiniband.switches: no price for a switch of radix 4"));
  EXPECT_FALSE(fs::exists(out / "runs" / "n8_ib_ndr_training.json"));
  const auto shape = fabricsim::testing::run_command("compare " + (kPresets / "ib_ndr.yaml").string() + " --radix 8");
  EXPECT_EQ(shape.exit_code, 2) << shape.output;
  EXPECT_THAT(shape.output, HasSubstr("--radix: shapes the fabric of each --sizes entry; give --sizes"));
  fs::remove_all(out);
}

// --bom-only prices 32768 endpoints without simulating them: 1024 leaves and spines,
// 512 cores of radix 64, four transceivers per endpoint.
TEST(Compare, BomOnlyReportsLargeFabricsWithoutRunning) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_compare_bom_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto r = fabricsim::testing::run_command("compare " + (kPresets / "ib_ndr.yaml").string() +
                                                 " --bom-only --sizes 2048,32768 --no-plots --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("{kind: three_tier, radix: 64, oversubscription: 1, pods: 32, leaves_per_pod: 32}"));
  std::ifstream in(out / "compare.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  auto row = [&](const std::string& metric) {
    for (const auto& x : j["points"][1]["rows"])
      if (x["metric"] == metric) return x["values"]["ib_ndr"];
    return nlohmann::json();
  };
  EXPECT_EQ(row("fabric: core switches (radix 64)"), 512);
  EXPECT_EQ(row("fabric: leaf-spine transceivers").get<double>() + row("fabric: spine-core transceivers").get<double>(),
            4 * 32768);
  EXPECT_FALSE(fs::exists(out / "runs" / "n32768_ib_ndr_training.json"));
  fs::remove_all(out);
}

// --bom-only plots only what it priced: the fabric per size of a sweep, nothing for one
// size (no workload ran to plot).
TEST(Compare, BomOnlyPlotsTheFabricsAlone) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_compare_bom_plots_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string cmd = "compare " + (kPresets / "ib_ndr.yaml").string() + " --bom-only --out " + out.string();
  const auto one = fabricsim::testing::run_command(cmd + " --sizes 512");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  if (one.output.find("install python3-matplotlib") != std::string::npos) GTEST_SKIP() << "no matplotlib";
  EXPECT_THAT(one.output, HasSubstr("plots: none (nothing was run)"));
  const auto two = fabricsim::testing::run_command(cmd + " --sizes 512,2048");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_TRUE(fs::exists(out / "sweep_fabric.png")) << two.output;
  EXPECT_FALSE(fs::exists(out / "sweep_allreduce.png")) << two.output;
  fs::remove_all(out);
}

// The README's comparison on the smallest fabric: the table and files are written, and
// the IB NDR 2 B write latency is below RoCE 400G's (switch pipeline and framing, not a
// latency parameter).
TEST(Compare, IbVersusRoceLatencyTableAndFiles) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_compare_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto r = fabricsim::testing::run_command(
      "compare " + (kPresets / "ib_ndr.yaml").string() + " " + (kPresets / "roce_400g.yaml").string() +
      " --workload latency --latency-iterations 20 --topology '{kind: leaf_spine, radix: 4}' --no-plots --out " +
      out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("RDMA write latency 2 B p50"));
  ASSERT_TRUE(fs::exists(out / "compare.csv"));
  std::ifstream in(out / "compare.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  const auto& runs = j["points"][0]["runs"];
  const double ib = runs["ib_ndr"]["latency"]["sizes"][0]["p50_us"].get<double>();
  const double roce = runs["roce_400g"]["latency"]["sizes"][0]["p50_us"].get<double>();
  EXPECT_EQ(j["points"][0]["latency_pair"]["path_switches"], 3);  // leaf, spine, leaf
  EXPECT_GT(ib, 0.5);
  EXPECT_LT(ib, roce);
  fs::remove_all(out);
}

// simulation.threads from --set: the runs that lanes can split take it, the latency
// workload (a perftest: its runner acts on two NICs at once) runs on one lane.
TEST(Compare, ThreadsLeaveTheLatencyWorkloadOnOneThread) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_compare_threads_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto r = fabricsim::testing::run_command(
      "compare " + (kPresets / "ib_ndr.yaml").string() +
      " --workload latency,allreduce --latency-iterations 5 --allreduce-size 64KiB"
      " --topology '{kind: leaf_spine, radix: 4}' --no-plots --set simulation.threads=2 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lanes = [&](const char* run) {
    std::ifstream in(out / "runs" / run);
    return nlohmann::json::parse(in)["simulator"]["lanes"].get<int>();
  };
  EXPECT_EQ(lanes("ib_ndr_latency.json"), 1);
  EXPECT_EQ(lanes("ib_ndr_allreduce.json"), 2);
  fs::remove_all(out);
}

TEST(Compare, UnknownWorkloadIsAUsageError) {
  const auto r = fabricsim::testing::run_command("compare " + (kPresets / "ib_ndr.yaml").string() + " --workload lat");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--workload lat: unknown workload; allowed: latency, allreduce, incast, training"));
}

}  // namespace
