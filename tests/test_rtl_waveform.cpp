// The waveform of a registered RTL block (RtlPins' trace protocol, tlm/rtl_waveform.h) on the
// 8x8 iSLIP the switches use, made through the model table: the time window (nothing outside it, the values
// holding at its start recorded there), the size limit (the file stops growing near it, one
// warning, the flag), and the VCD conversion (header, $var lines, every change), read back
// from the files; then `fabricsim run --trace*` end to end.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <gtkwave/fstapi.h>

#include <nlohmann/json.hpp>

#include "sim/config.h"
#include "tests/command.h"
#include "tests/config_error.h"
#include "tlm/rtl_model.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::tlm_fabric::RtlPins;
using fabricsim::tlm_fabric::WaveformFormat;
using fabricsim::tlm_fabric::WaveformOptions;
using ::testing::HasSubstr;

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("fabricsim_test_rtl_waveform_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// The registered 8x8 k=1 islip_allocator (builtin_rtl_models()), traceable pins.
std::unique_ptr<RtlPins> islip8() {
  for (const auto& m : fabricsim::tlm_fabric::builtin_rtl_models())
    if (m.info.name == "islip_allocator" && m.info.sizes == std::vector<int>{8, 1}) return m.make(true);
  ADD_FAILURE() << "islip_allocator 8x8 k=1 is not registered";
  return nullptr;
}

/// The 8x8 iSLIP out of reset (active low), its requests set by hand.
struct Block {
  std::unique_ptr<RtlPins> pins = islip8();
  Block() {
    pins->clock(false);
    pins->commit(false);
    pins->reset(false);
    pins->eval();
    pins->reset(true);
    pins->eval();
  }
  void set(std::uint64_t req) {
    pins->put(0, {static_cast<std::uint32_t>(req), static_cast<std::uint32_t>(req >> 32)});
    pins->eval();
  }
};

/// The block's waveform: RtlPins' trace calls under the recorder's names.
struct Waveform {
  Waveform(Block& b, const WaveformOptions& o, const fs::path& stem) : pins(*b.pins) {
    path_ = pins.trace_open(stem.string(), o);
  }
  ~Waveform() { pins.trace_close(); }
  void advance(std::uint64_t ps) { pins.trace_advance(ps); }
  void dump(std::uint64_t ps) { pins.trace_dump(ps); }
  void close() { pins.trace_close(); }
  bool limit_reached() const { return pins.trace_limit_reached(); }
  const std::string& path() const { return path_; }
  RtlPins& pins;
  std::string path_;
};

/// A VCD read back: the top-level signals' identifiers and every value change by identifier.
struct Vcd {
  std::string header;                        // up to $enddefinitions
  std::map<std::string, std::string> id_of;  // signal name in scope TOP -> identifier
  std::vector<std::uint64_t> times;          // the #time lines, in order
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::string>>> changes;  // identifier -> (time, value)

  /// The value of `signal` at time `t` (its last change at or before t); "" when none.
  std::string at(const std::string& signal, std::uint64_t t) const {
    std::string v;
    const auto it = changes.find(id_of.at(signal));
    if (it == changes.end()) return v;
    for (const auto& [when, value] : it->second)
      if (when <= t) v = value;
    return v;
  }
};

Vcd read_vcd(const fs::path& path) {
  std::ifstream in(path);
  Vcd vcd;
  std::string line, scope;
  bool body = false;
  std::uint64_t now = 0;
  while (std::getline(in, line)) {
    if (!body) {
      vcd.header += line + "\n";
      std::istringstream s(line);
      std::string tok, kind, width, id, name;
      s >> tok;
      if (tok == "$scope") s >> kind >> scope;
      if (tok == "$var" && (s >> kind >> width >> id >> name) && scope == "TOP") vcd.id_of.emplace(name, id);
      if (line.find("$enddefinitions") != std::string::npos) body = true;
      continue;
    }
    if (line.empty() || line[0] == '$') continue;
    if (line[0] == '#') {
      now = std::stoull(line.substr(1));
      vcd.times.push_back(now);
    } else if (line[0] == 'b' || line[0] == 'r') {
      const auto sp = line.find(' ');
      vcd.changes[line.substr(sp + 1)].emplace_back(now, line.substr(1, sp - 1));
    } else {
      vcd.changes[line.substr(1)].emplace_back(now, line.substr(0, 1));
    }
  }
  return vcd;
}

/// A VCD value (binary) as a number.
std::uint64_t num(const std::string& v) { return v.empty() ? ~std::uint64_t{0} : std::stoull(v, nullptr, 2); }

WaveformOptions options(const fs::path& dir, WaveformFormat format) {
  WaveformOptions o;
  o.dir = dir.string();
  o.format = format;
  return o;
}

/// Requests k at time k * step for k = 0..steps-1, with advance() before each change.
void drive(Block& b, Waveform& w, std::uint64_t step, int steps) {
  for (int k = 0; k < steps; ++k) {
    const std::uint64_t t = static_cast<std::uint64_t>(k) * step;
    w.advance(t);
    b.set(static_cast<std::uint64_t>(k) + 1);
    w.dump(t);
  }
}

TEST(RtlWaveform, VcdHasTheHeaderAndEveryChange) {
  const fs::path dir = scratch("vcd");
  Block b;
  {
    Waveform w(b, options(dir, WaveformFormat::vcd), dir / "blk");
    drive(b, w, 100, 50);
    w.close();
    EXPECT_EQ(w.path(), (dir / "blk.vcd").string());
    EXPECT_FALSE(w.limit_reached());
  }
  EXPECT_FALSE(fs::exists(dir / "blk.fst")) << "the FST is deleted once converted";
  const Vcd v = read_vcd(dir / "blk.vcd");
  EXPECT_THAT(v.header, ::testing::ContainsRegex("\\$timescale\\s+1ps\\s+\\$end"));
  EXPECT_THAT(v.header, ::testing::ContainsRegex("\\$var wire 64 \\S+ req_i \\[63:0\\] \\$end"));
  EXPECT_THAT(v.header, ::testing::ContainsRegex("\\$var wire 64 \\S+ gnt_o \\[63:0\\] \\$end"));
  EXPECT_THAT(v.header, ::testing::ContainsRegex("\\$var wire 1 \\S+ clk_i \\$end"));
  ASSERT_TRUE(v.id_of.count("req_i") && v.id_of.count("gnt_o") && v.id_of.count("rst_ni"));
  ASSERT_EQ(v.times.size(), 50U);
  EXPECT_EQ(v.times.front(), 0U);
  EXPECT_EQ(v.times.back(), 4900U);
  for (int k = 0; k < 50; ++k) EXPECT_EQ(num(v.at("req_i", k * 100ULL)), k + 1ULL) << "at " << k * 100;
  EXPECT_EQ(v.at("rst_ni", 0), "1");
  // A single request is granted: the grant follows the request in every step.
  EXPECT_EQ(num(v.at("gnt_o", 0)), 1U);
}

TEST(RtlWaveform, WindowHoldsOnlyItsDumpsAndTheValuesAtItsStart) {
  const fs::path dir = scratch("window");
  Block b;
  WaveformOptions o = options(dir, WaveformFormat::vcd);
  o.from_ps = 1000;  // between the dumps at 900 and 1200
  o.to_ps = 2000;    // between the dumps at 1800 and 2100
  {
    Waveform w(b, o, dir / "blk");
    drive(b, w, 300, 12);  // requests 1..12 at 0, 300, ... 3300
  }
  const Vcd v = read_vcd(dir / "blk.vcd");
  ASSERT_FALSE(v.times.empty());
  for (auto t : v.times) {
    EXPECT_GE(t, 1000U);
    EXPECT_LE(t, 2000U);
  }
  EXPECT_EQ(v.times.front(), 1000U) << "the file starts at the window's start";
  // At 1000 the values set at 900 (request 4) hold; every signal has a value there.
  EXPECT_EQ(num(v.at("req_i", 1000)), 4U);
  for (const auto& [name, id] : v.id_of) EXPECT_FALSE(v.at(name, 1000).empty()) << name << " has no value at from";
  EXPECT_EQ(num(v.at("req_i", 1200)), 5U);
  EXPECT_EQ(num(v.at("req_i", 1800)), 7U);
  EXPECT_EQ(num(v.at("req_i", 2000)), 7U);
  for (const auto& [t, value] : v.changes.at(v.id_of.at("req_i"))) EXPECT_NE(num(value), 8U) << "the change at 2100";
}

TEST(RtlWaveform, FstWindowStartsAtFromWithoutAdvance) {
  // Without advance() the first dump inside the window carries every signal.
  const fs::path dir = scratch("fst_window");
  Block b;
  WaveformOptions o = options(dir, WaveformFormat::fst);
  o.from_ps = 1200;
  o.to_ps = 1800;
  {
    Waveform w(b, o, dir / "blk");
    for (int k = 0; k < 12; ++k) {
      b.set(k + 1ULL);
      w.dump(k * 300ULL);
    }
  }
  void* r = fstReaderOpen((dir / "blk.fst").string().c_str());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(fstReaderGetStartTime(r), 1200U);
  EXPECT_EQ(fstReaderGetEndTime(r), 1800U);
  fstReaderClose(r);
}

/// Random requests every 10 ps into `w` for `steps` steps (advance() before each change).
void drive_random(Block& b, Waveform& w, int steps) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < steps; ++k) {
    const std::uint64_t t = static_cast<std::uint64_t>(k) * 10;
    w.advance(t);
    b.set(rng());
    w.dump(t);
  }
}

/// drive_random through a recorder with `o`, closed: whether it reached its limit and what it
/// printed.
struct Recording {
  bool reached = false;
  std::string err;
};
Recording record_random(const WaveformOptions& o, const fs::path& stem, int steps) {
  Block b;
  Recording r;
  testing::internal::CaptureStderr();
  {
    Waveform w(b, o, stem);
    drive_random(b, w, steps);
    w.close();
    r.reached = w.limit_reached();
  }
  r.err = testing::internal::GetCapturedStderr();
  return r;
}

TEST(RtlWaveform, SizeLimitStopsTheFstNearTheLimitAndSaysSoOnce) {
  const fs::path dir = scratch("limit");
  constexpr std::uint64_t kLimit = 256 * 1024;
  constexpr int kSteps = 50000;
  EXPECT_FALSE(record_random(options(dir, WaveformFormat::fst), dir / "all", kSteps).reached);
  ASSERT_GT(fs::file_size(dir / "all.fst"), 4 * kLimit) << "the run must outgrow the limit for the test to mean anything";

  WaveformOptions o = options(dir, WaveformFormat::fst);
  o.max_bytes = kLimit;
  const Recording r = record_random(o, dir / "cut", kSteps);
  EXPECT_TRUE(r.reached);
  EXPECT_THAT(r.err, HasSubstr((dir / "cut.fst").string() + " reached its size limit of 262144 bytes"));
  EXPECT_EQ(r.err.find("size limit"), r.err.rfind("size limit")) << "one warning: " << r.err;
  const auto size = fs::file_size(dir / "cut.fst");
  // Blocks of about 1/32 of the limit: the file ends within a few blocks below the limit
  // (the signal hierarchy, written at close, is a few hundred bytes here).
  EXPECT_LE(size, kLimit + 4096);
  EXPECT_GE(size, kLimit * 3 / 4);
  void* reader = fstReaderOpen((dir / "cut.fst").string().c_str());
  ASSERT_NE(reader, nullptr) << "a file cut at the limit still reads";
  EXPECT_LT(fstReaderGetEndTime(reader), (kSteps - 1) * 10ULL);
  fstReaderClose(reader);
}

TEST(RtlWaveform, SizeLimitCutsTheVcdAtATimeStep) {
  const fs::path dir = scratch("vcd_limit");
  constexpr std::uint64_t kLimit = 64 * 1024;
  WaveformOptions o = options(dir, WaveformFormat::vcd);
  o.max_bytes = kLimit;
  const Recording r = record_random(o, dir / "blk", 20000);
  EXPECT_TRUE(r.reached);
  EXPECT_THAT(r.err, HasSubstr("blk.vcd reached its size limit"));
  const auto size = fs::file_size(dir / "blk.vcd");
  EXPECT_LE(size, kLimit);
  EXPECT_GE(size, kLimit / 2);
  // The last time step is complete: every line parses and the file ends with a newline.
  std::ifstream in(dir / "blk.vcd");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.back(), '\n');
  const Vcd v = read_vcd(dir / "blk.vcd");
  ASSERT_GT(v.times.size(), 10U);
  std::mt19937_64 rng(7);
  for (std::size_t k = 0; k < v.times.size(); ++k) EXPECT_EQ(num(v.at("req_i", k * 10)), rng()) << "at " << k * 10;
}

// ---------------------------------------------------------------------------------------------
// The options as configured: switch.rtl_trace* and `fabricsim run --trace*`.

const std::string kExample = std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml";

std::vector<std::string> rtl(std::vector<std::string> more) {
  std::vector<std::string> o{"switch.buffer=voq", "switch.allocator=islip", "switch.allocator_impl=rtl",
                             "switch.rtl_trace=/tmp/fabricsim_waves"};
  o.insert(o.end(), more.begin(), more.end());
  return o;
}

TEST(RtlWaveformConfig, KeysReachTheSwitchParams) {
  const auto c = fabricsim::sim::load_config(
      kExample, rtl({"switch.rtl_trace_format=vcd", "switch.rtl_trace_scope=[fabric.sw*, islip_allocator]",
                     "switch.rtl_trace_from=2us", "switch.rtl_trace_to=2.5us", "switch.rtl_trace_max_size=10MiB"}));
  const WaveformOptions& w = c.switch_params.waveform;
  EXPECT_EQ(w.dir, "/tmp/fabricsim_waves");
  EXPECT_EQ(w.format, WaveformFormat::vcd);
  EXPECT_EQ(w.scopes, (std::vector<std::string>{"fabric.sw*", "islip_allocator"}));
  EXPECT_EQ(w.from_ps, 2000000U);
  EXPECT_EQ(w.to_ps, 2500000U);
  EXPECT_EQ(w.max_bytes, 10U * 1024 * 1024);
  // Defaults: FST, every block, the whole run, no limit; a single scope need not be a list.
  const auto d = fabricsim::sim::load_config(kExample, rtl({"switch.rtl_trace_scope=fabric.sw0.*"}));
  EXPECT_EQ(d.switch_params.waveform.format, WaveformFormat::fst);
  EXPECT_EQ(d.switch_params.waveform.scopes, (std::vector<std::string>{"fabric.sw0.*"}));
  EXPECT_EQ(d.switch_params.waveform.from_ps, 0U);
  EXPECT_EQ(d.switch_params.waveform.to_ps, UINT64_MAX);
  EXPECT_EQ(d.switch_params.waveform.max_bytes, 0U);
}

TEST(RtlWaveformConfig, BadValuesNameTheirKey) {
  using fabricsim::testing::file_error_of;
  EXPECT_THAT(file_error_of(kExample, rtl({"switch.rtl_trace_from=2uss"})), HasSubstr("switch.rtl_trace_from: "));
  EXPECT_THAT(file_error_of(kExample, rtl({"switch.rtl_trace_max_size=10MB/s"})),
              HasSubstr("switch.rtl_trace_max_size: "));
  EXPECT_THAT(file_error_of(kExample, rtl({"switch.rtl_trace_format=ghw"})),
              ::testing::AllOf(HasSubstr("switch.rtl_trace_format"), HasSubstr("fst, vcd")));
  EXPECT_THAT(file_error_of(kExample, rtl({"switch.rtl_trace_from=3us", "switch.rtl_trace_to=2us"})),
              HasSubstr("switch.rtl_trace_to: the waveform window ends (2us) before it starts (switch.rtl_trace_from 3us)"));
  EXPECT_THAT(file_error_of(kExample, rtl({"switch.rtl_trace_scope=[fabric.sw0, [x]]"})),
              HasSubstr("switch.rtl_trace_scope: expected a glob or model name, or a list of them"));
}

TEST(RtlWaveformConfig, FlagErrorsNameTheFlag) {
  const fs::path dir = scratch("flags");
  const std::string run = "run " + kExample + " --quiet --set switch.buffer=voq --set switch.allocator=islip "
                          "--set switch.allocator_impl=rtl --out " + (dir / "out").string() + " --trace rtl";
  const auto typo = fabricsim::testing::run_command(run + " --trace-from 1uss");
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_THAT(typo.output, HasSubstr("fabricsim: error: --trace-from 1uss: switch.rtl_trace_from: "));
  const auto order = fabricsim::testing::run_command(run + " --trace-from 2us --trace-to 1us");
  EXPECT_EQ(order.exit_code, 2) << order.output;
  EXPECT_THAT(order.output, HasSubstr("--trace-to 1us: switch.rtl_trace_to: the waveform window ends (1us) before it "
                                      "starts (switch.rtl_trace_from 2us)"));
  const auto format = fabricsim::testing::run_command(run + " --trace-format lxt");
  EXPECT_EQ(format.exit_code, 2) << format.output;
  EXPECT_THAT(format.output, HasSubstr("--trace-format lxt: switch.rtl_trace_format: "));
  EXPECT_FALSE(fs::exists(dir / "out" / "results.json"));
}

// ---------------------------------------------------------------------------------------------
// `fabricsim run --trace*` end to end on the single switch with the RTL allocator.

std::string rtl_run(const fs::path& dir) {
  return "run " + kExample + " --quiet --set switch.buffer=voq --set switch.allocator=islip "
         "--set switch.allocator_impl=rtl --out " + (dir / "out").string() + " --trace rtl";
}

nlohmann::json results(const fs::path& dir) {
  std::ifstream in(dir / "out" / "results.json");
  return nlohmann::json::parse(in);
}

std::vector<std::string> files_in(const fs::path& d) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(d)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RtlWaveformRun, WindowedScopedVcdOfOneBlock) {
  const fs::path dir = scratch("run_vcd");
  const auto r = fabricsim::testing::run_command(rtl_run(dir) + " --trace-format vcd --trace-from 1us --trace-to 2us "
                                                 "--trace-scope '*.sw0.allocator'");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.output;  // 3: a scoreboard verdict, not --trace's business
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  const std::string file = "fabric.sw0.allocator.islip_allocator.vcd";
  EXPECT_EQ(files_in(dir / "out" / "waveforms"), std::vector<std::string>{file}) << "one VCD, its FST deleted";
  const Vcd v = read_vcd(dir / "out" / "waveforms" / file);
  ASSERT_TRUE(v.id_of.count("req_i") && v.id_of.count("gnt_o") && v.id_of.count("clk_i"));
  ASSERT_GT(v.times.size(), 10U);
  EXPECT_EQ(v.times.front(), 1000000U) << "the file starts at --trace-from with every value";
  for (const auto& [name, id] : v.id_of) EXPECT_FALSE(v.at(name, 1000000).empty()) << name;
  for (std::size_t k = 0; k < v.times.size(); ++k) {
    EXPECT_GE(v.times[k], 1000000U);
    EXPECT_LE(v.times[k], 2000000U);
    if (k > 0) {
      EXPECT_GT(v.times[k], v.times[k - 1]);
    }
  }
  // Traffic crossed the allocator inside the window: requests and grants both changed.
  EXPECT_GT(v.changes.at(v.id_of.at("req_i")).size(), 2U);
  EXPECT_GT(v.changes.at(v.id_of.at("gnt_o")).size(), 2U);
  // Every grant drawn is a request drawn at the same instant (a matching of the requests).
  // (256-bit ports at the example's 16 ports: compared as bit strings, VCD drops leading zeros.)
  auto bit = [](const std::string& bits, std::size_t k) { return k < bits.size() && bits[bits.size() - 1 - k] == '1'; };
  for (const auto& [t, g] : v.changes.at(v.id_of.at("gnt_o"))) {
    const std::string req = v.at("req_i", t);
    for (std::size_t k = 0; k < g.size(); ++k) EXPECT_TRUE(!bit(g, k) || bit(req, k)) << "bit " << k << " at " << t;
  }
  const nlohmann::json w = results(dir)["simulator"]["waveforms"];
  ASSERT_EQ(w.size(), 1U) << w.dump();
  EXPECT_EQ(w[0]["block"], "fabric.sw0.allocator");
  EXPECT_EQ(w[0]["file"], (dir / "out" / "waveforms" / file).string());
  EXPECT_EQ(w[0]["limit_reached"], false);
}

TEST(RtlWaveformRun, ScopeMatchingNoBlockWarnsAndRecordsNothing) {
  const fs::path dir = scratch("run_scope");
  const auto r = fabricsim::testing::run_command(rtl_run(dir) + " --trace-scope 'fabric.leaf*' --trace-to 1us");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.output;
  EXPECT_THAT(r.output, HasSubstr("warning: switch.rtl_trace_scope 'fabric.leaf*' matches no RTL block of the fabric "
                                  "(e.g. fabric.sw0.allocator, model islip_allocator)"));
  EXPECT_TRUE(!fs::exists(dir / "out" / "waveforms") || fs::is_empty(dir / "out" / "waveforms"));
  EXPECT_EQ(results(dir)["simulator"]["waveforms"], nlohmann::json::array());
  // A model name is a scope too: no warning, one file.
  const fs::path dir2 = scratch("run_scope_model");
  const auto m = fabricsim::testing::run_command(rtl_run(dir2) + " --trace-scope islip_allocator --trace-to 1us");
  EXPECT_EQ(m.output.find("warning"), std::string::npos) << m.output;
  EXPECT_EQ(files_in(dir2 / "out" / "waveforms"), std::vector<std::string>{"fabric.sw0.allocator.islip_allocator.fst"});
}

TEST(RtlWaveformRun, SizeLimitLandsInTheResultsAndWarnsOnce) {
  const fs::path dir = scratch("run_limit");
  const auto r = fabricsim::testing::run_command(rtl_run(dir) + " --trace-max-size 16KiB");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.output;
  EXPECT_EQ(r.output.find("size limit"), r.output.rfind("size limit")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fabric.sw0.allocator.islip_allocator.fst reached its size limit of 16384 bytes"));
  const nlohmann::json w = results(dir)["simulator"]["waveforms"];
  ASSERT_EQ(w.size(), 1U) << w.dump();
  EXPECT_EQ(w[0]["limit_reached"], true);
  EXPECT_LE(fs::file_size(dir / "out" / "waveforms" / "fabric.sw0.allocator.islip_allocator.fst"), 16384U + 4096U);
}

TEST(RtlWaveformRun, ArbitersAndCreditManagersAreScopedByModelOrHierarchy) {
  // An output-queued switch: a round-robin write arbiter per output port, and a credit
  // manager on every link transmitter (switch ports and NICs), all RTL.
  const std::string run = "run " + kExample + " --quiet --set switch.buffer=output_queued "
                          "--set switch.write_arbiter_impl=rtl --set link.credit_manager_impl=rtl --trace-to 500ns";
  const fs::path dir = scratch("run_kinds");
  const auto r = fabricsim::testing::run_command(run + " --out " + (dir / "out").string() +
                                                 " --trace rtl --trace-scope rr_arbiter");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.output;
  const std::vector<std::string> files = files_in(dir / "out" / "waveforms");
  ASSERT_EQ(files.size(), 16U) << "one write arbiter per port";
  for (const auto& f : files) EXPECT_THAT(f, ::testing::MatchesRegex("fabric\\.sw0\\.port[0-9]+\\.write_arbiter\\.rr_arbiter\\.fst"));
  const nlohmann::json w = results(dir)["simulator"]["waveforms"];
  ASSERT_EQ(w.size(), 16U) << w.dump();
  // A hierarchy glob picks one NIC's transmitter.
  const fs::path dir2 = scratch("run_kinds_nic");
  const auto n = fabricsim::testing::run_command(run + " --out " + (dir2 / "out").string() +
                                                 " --trace rtl --trace-scope 'fabric.ep3.*'");
  ASSERT_TRUE(n.exit_code == 0 || n.exit_code == 3) << n.output;
  EXPECT_EQ(n.output.find("warning"), std::string::npos) << n.output;
  EXPECT_EQ(files_in(dir2 / "out" / "waveforms"), std::vector<std::string>{"fabric.ep3.port0.credit_manager.credit_manager.fst"});
}

}  // namespace
