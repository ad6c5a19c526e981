// The shared transactor (tlm/rtl_transactor.h) on the conventions the registration
// declares, against pin-level blocks written in C++: an iSLIP with a registered grant
// (LATENCY 1), a synchronous active-high reset held two edges, and a valid/ready
// handshake, built on the hw core. Declared as it is, it matches the core in lockstep
// (grants and pointer state); declared with another latency or reset polarity, lockstep
// catches it. A two-stage register shows the waveform drawing of a latency. No Verilated
// model: the pins are the RtlPins interface itself.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/allocator.h"
#include "tlm/rtl_allocator.h"
#include "tlm/rtl_model.h"
#include "tlm/rtl_transactor.h"

namespace {

namespace tf = fabricsim::tlm_fabric;
using ::testing::HasSubstr;

constexpr int kPorts = 8;

/// The pin-level block. At every rising edge: a reset (pin high) restores the core;
/// otherwise the matching of the requests and the current pointers is registered as the
/// grant with valid high, and if ready and valid were high the pointers move as the
/// core's update_state() moves them. Before its first reset the pointers are off zero,
/// so a transactor that does not reset it sees other grants.
class RegisteredIslipPins final : public tf::RtlPins {
 public:
  RegisteredIslipPins() : core_(fresh()) {
    for (int i = 0; i < kPorts; ++i) core_->add_request({i, (i + 3) % kPorts, 0, 0});
    core_->arbitrate();
    core_->update_state();
  }
  void clock(bool high) override { clk_next_ = high; }
  void reset(bool level) override { reset_ = level; }
  void commit(bool high) override { ready_ = high; }
  bool valid() const override { return valid_q_; }
  void put(int, const tf::PortWords& w) override {
    req_.assign(2, 0);
    for (std::size_t k = 0; k < w.size() && k < 2; ++k) req_[k] = w[k];
  }
  void get(int output, tf::PortWords& w) const override {
    if (output == 0) {
      w = gnt_q_;
      return;
    }
    std::vector<fabricsim::hw::StateVector> state;
    core_->debug_state(state);
    const auto& v = state.at(static_cast<std::size_t>(output - 1));
    w.assign(1, 0);
    for (std::size_t e = 0; e < v.values.size(); ++e) w[0] |= static_cast<std::uint32_t>(v.values[e] << (e * 3));
  }
  int words(int output) const override { return output == 0 ? 2 : 1; }
  void eval() override {
    if (clk_next_ && !clk_) edge();
    clk_ = clk_next_;
  }
  std::string trace_open(const std::string& stem, const tf::WaveformOptions&) override { return stem; }
  void trace_advance(std::uint64_t) override {}
  void trace_dump(std::uint64_t) override {}
  bool trace_limit_reached() const override { return false; }
  void trace_close() override {}

 private:
  static std::unique_ptr<fabricsim::hw::SwitchAllocator> fresh() {
    return fabricsim::hw::make_allocator("islip", {kPorts, kPorts, 1, 1});
  }
  void edge() {
    if (reset_) {
      core_ = fresh();
      valid_q_ = false;
      gnt_q_.assign(2, 0);
      return;
    }
    core_->clear();
    for (int b = 0; b < kPorts * kPorts; ++b)
      if ((req_[static_cast<std::size_t>(b / 32)] >> (b % 32)) & 1U) core_->add_request({b / kPorts, b % kPorts, 0, 0});
    tf::PortWords g(2, 0);
    for (const auto& x : core_->arbitrate()) {
      const int b = x.input * kPorts + x.output;
      g[static_cast<std::size_t>(b / 32)] |= std::uint32_t{1} << (b % 32);
    }
    if (ready_ && valid_q_) core_->update_state();
    gnt_q_ = g;
    valid_q_ = true;
  }

  std::unique_ptr<fabricsim::hw::SwitchAllocator> core_;
  tf::PortWords req_ = tf::PortWords(2, 0), gnt_q_ = tf::PortWords(2, 0);
  bool clk_ = false, clk_next_ = false, reset_ = false, ready_ = false, valid_q_ = true;
};

/// The block registered under `name` with the given convention.
tf::RtlModel registered(const std::string& name, bool reset_active_high, int latency) {
  tf::RtlModel m;
  m.info.name = name;
  m.info.kind = "allocator";
  m.info.twin = "islip";
  m.info.top = "registered_islip";
  m.info.sizes = {kPorts, 1};
  m.info.timing = {reset_active_high, true, 2, tf::RtlHandshake::valid_ready, latency};
  m.info.debug_state = {"grant_ptr", "accept_ptr"};
  m.info.debug_ports = {"dbg_grant_ptr", "dbg_accept_ptr"};
  m.info.registration = "tests/test_rtl_transactor.cpp";
  m.make = [](bool) -> std::unique_ptr<tf::RtlPins> { return std::make_unique<RegisteredIslipPins>(); };
  return m;
}

[[maybe_unused]] const bool kAdded = [] {
  tf::add_rtl_models({registered("registered_islip", true, 1), registered("registered_islip_as_comb", true, 0),
                      registered("registered_islip_active_low", false, 1)});
  return true;
}();

/// Lockstep on random rounds, some never committed; the error, or empty.
std::string lockstep(const std::string& variant, int rounds) {
  tf::SwitchAllocatorSpec spec;
  spec.instance = "unit";
  spec.policy = "islip";
  spec.shape = {kPorts, kPorts, 1, 1};
  spec.impl = tf::AllocatorImpl::lockstep;
  spec.rtl_variant = variant;
  auto a = tf::make_switch_allocator(spec);
  std::mt19937_64 rng(7);
  try {
    for (int round = 0; round < rounds; ++round) {
      a->clear();
      for (int i = 0; i < kPorts; ++i)
        for (int o = 0; o < kPorts; ++o)
          if (rng() % 3 == 0) a->add_request({i, o, 0, 0});
      a->arbitrate();
      if (rng() % 4 != 0) a->update_state();
    }
  } catch (const tf::RtlAllocatorMismatch& e) {
    return e.what();
  }
  return "";
}

TEST(RtlTransactor, RegisteredValidReadyBlockWithSyncResetMatchesTheCore) {
  EXPECT_EQ(lockstep("registered_islip", 3000), "");
}

TEST(RtlTransactor, RtlModeGivesTheCoresGrants) {
  tf::SwitchAllocatorSpec spec;
  spec.policy = "islip";
  spec.shape = {kPorts, kPorts, 1, 1};
  spec.impl = tf::AllocatorImpl::rtl;
  spec.rtl_variant = "registered_islip";
  auto rtl = tf::make_switch_allocator(spec);
  auto core = fabricsim::hw::make_allocator("islip", spec.shape);
  for (int round = 0; round < 50; ++round) {
    rtl->clear();
    core->clear();
    for (int i = 0; i < kPorts; ++i) {
      rtl->add_request({i, (i + round) % kPorts, 0, 0});
      core->add_request({i, (i + round) % kPorts, 0, 0});
      rtl->add_request({i, (i * 3 + 1) % kPorts, 0, 0});
      core->add_request({i, (i * 3 + 1) % kPorts, 0, 0});
    }
    ASSERT_EQ(rtl->arbitrate(), core->arbitrate()) << "round " << round;
    rtl->update_state();
    core->update_state();
  }
}

// The same block declared with the wrong convention must not pass.
TEST(RtlTransactor, WrongLatencyIsCaught) {
  EXPECT_THAT(lockstep("registered_islip_as_comb", 100), HasSubstr("lockstep mismatch in unit.allocator"));
}

TEST(RtlTransactor, WrongResetPolarityIsCaught) {
  EXPECT_THAT(lockstep("registered_islip_active_low", 100), HasSubstr("lockstep"));
}

// ---------------------------------------------------------------------------------------------
// The waveform of a block with LATENCY 2: every cycle drawn, at its time.

/// What one FST dump would hold.
struct Dump {
  std::uint64_t ps;
  bool clk, commit;
  std::uint32_t in, out;
  bool operator==(const Dump& o) const {
    return ps == o.ps && clk == o.clk && commit == o.commit && in == o.in && out == o.out;
  }
};
std::ostream& operator<<(std::ostream& os, const Dump& d) {
  return os << "{" << d.ps << " clk " << d.clk << " commit " << d.commit << " in " << d.in << " out " << d.out << "}";
}

/// A two-stage register: the output is the input of two rising edges before; records dumps.
class TwoStagePins final : public tf::RtlPins {
 public:
  TwoStagePins(std::vector<Dump>& dumps, std::vector<Dump>& advances) : dumps_(dumps), advances_(advances) {}
  void clock(bool high) override { clk_next_ = high; }
  void reset(bool) override {}
  void commit(bool high) override { commit_ = high; }
  bool valid() const override { return true; }
  void put(int, const tf::PortWords& w) override { in_ = w.empty() ? 0 : w[0]; }
  void get(int, tf::PortWords& w) const override { w.assign(1, q2_); }
  int words(int) const override { return 1; }
  void eval() override {
    if (clk_next_ && !clk_) {
      q2_ = q1_;
      q1_ = in_;
    }
    clk_ = clk_next_;
  }
  std::string trace_open(const std::string& stem, const tf::WaveformOptions&) override { return stem; }
  void trace_advance(std::uint64_t ps) override { advances_.push_back({ps, clk_, commit_, in_, q2_}); }
  void trace_dump(std::uint64_t ps) override { dumps_.push_back({ps, clk_, commit_, in_, q2_}); }
  void trace_close() override {}
  bool trace_limit_reached() const override { return false; }

 private:
  std::vector<Dump>& dumps_;
  std::vector<Dump>& advances_;  // the values seen at each trace_advance
  bool clk_ = false, clk_next_ = false, commit_ = false;
  std::uint32_t in_ = 0, q1_ = 0, q2_ = 0;
};

TEST(RtlTransactor, DrawsEveryCycleOfARegisteredBlock) {
  std::vector<Dump> dumps, advances;
  tf::RtlTransactor x(std::make_unique<TwoStagePins>(dumps, advances), {false, false, 1, tf::RtlHandshake::strobe, 2}, 1, 1,
                      1000);
  x.trace_open("unused", {});
  x.evaluate({{5}}, 10000);
  EXPECT_EQ(x.output(0), tf::PortWords{5});
  x.commit();
  x.evaluate({{7}}, 20000);  // never committed: its last edge has the commit low
  EXPECT_EQ(x.output(0), tf::PortWords{7});
  x.trace_close();
  const std::vector<Dump> expect{
      {10000, false, false, 5, 0}, {10500, true, false, 5, 0},   // latency edge 1
      {11000, false, false, 5, 0}, {11500, true, false, 5, 5},   // latency edge 2: the output
      {12000, false, true, 5, 5},  {12500, true, true, 5, 5},    // the committing edge
      {13000, false, false, 0, 5},                               // idle inputs
      {20000, false, false, 7, 5}, {20500, true, false, 7, 5},   // the stages still hold 5
      {21000, false, false, 7, 5}, {21500, true, false, 7, 7},
      {22000, false, false, 7, 7}, {22500, true, false, 7, 7},   // closing edge, commit low
      {23000, false, false, 0, 7}};
  EXPECT_EQ(dumps, expect);
  // Before each change the transactor says the values so far hold until the change's time
  // (a waveform window starting between two dumps gets the values holding there).
  for (std::size_t k = 1; k < dumps.size(); ++k) {
    Dump held = dumps[k - 1];
    held.ps = dumps[k].ps;
    EXPECT_NE(std::find(advances.begin(), advances.end(), held), advances.end()) << "no advance before " << dumps[k];
  }
}

}  // namespace
