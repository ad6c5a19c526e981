// PHY timing against hand-computed values (IEEE 802.3bs/ck, IBTA NDR); the data
// rates, serializations and FEC latencies are validation checks (tests/validation.h).
#include <gtest/gtest.h>

#include "hw/phy.h"
#include "tests/validation.h"

namespace {

using fabricsim::hw::Bandwidth;
using fabricsim::hw::Encoding;
using fabricsim::hw::FecKind;
using fabricsim::hw::Framing;
using fabricsim::hw::Length;
using fabricsim::hw::Modulation;
using fabricsim::hw::PhyParams;
using fabricsim::hw::PhyTiming;
using fabricsim::hw::Time;
using fabricsim::testing::expect_near;
using fabricsim::testing::expect_relative;

constexpr double kPs = 1e-12;

PhyParams port(int lanes, double lane_gbps, Encoding enc, FecKind fec, Framing framing) {
  PhyParams p;
  p.lanes = lanes;
  p.lane_rate = Bandwidth::gbps(lane_gbps);
  p.modulation = Modulation::pam4;
  p.encoding = enc;
  p.fec = fec;
  p.framing = framing;
  p.cable_length = Length::metres(0);
  return p;
}

TEST(PhyTiming, Ethernet400G8x53Lanes) {
  // 8 x 53.125 = 425 Gb/s on the wire; / (257/256 * 544/514) = 400 Gb/s of data.
  PhyTiming t(port(8, 53.125, Encoding::enc_256b257b, FecKind::rs544_514, Framing::roce_v2));
  EXPECT_NEAR(t.line_rate().bps(), 425e9, 1);
  expect_relative({"Phy", "400GbE data rate (8 x 53.125G PAM4, 256b/257b, RS(544,514))", "IEEE 802.3bs cl. 119"},
                  t.data_rate().in_gbps(), 400.0, 1e-12, "Gb/s");
  EXPECT_NEAR(t.lane_baud(), 26.5625e9, 1);
  // 5440-bit codeword over 425 Gb/s.
  EXPECT_NEAR(t.fec_accumulation().in_seconds(), 12.8e-9, 1e-3 * kPs);
}

TEST(PhyTiming, Ethernet400G4x106Lanes) {
  PhyTiming t(port(4, 106.25, Encoding::enc_256b257b, FecKind::rs544_514, Framing::roce_v2));
  EXPECT_NEAR(t.data_rate().bps(), 400e9, 1);
  EXPECT_NEAR(t.lane_baud(), 53.125e9, 1);
}

TEST(PhyTiming, Ethernet800G) {
  PhyTiming t(port(8, 106.25, Encoding::enc_256b257b, FecKind::rs544_514, Framing::roce_v2));
  EXPECT_NEAR(t.data_rate().bps(), 800e9, 1);
  EXPECT_NEAR(t.fec_accumulation().in_seconds(), 5440.0 / 850e9, 1e-3 * kPs);
}

TEST(PhyTiming, InfinibandNdr) {
  PhyTiming t(port(4, 106.25, Encoding::enc_256b257b, FecKind::rs544_514, Framing::infiniband));
  expect_relative({"Phy", "IB NDR data rate (4 x 106.25G PAM4)", "IBTA vol. 2 rel. 1.5 (NDR 4x = 400 Gb/s)"},
                  t.data_rate().in_gbps(), 400.0, 1e-12, "Gb/s");
  // IB packet: LRH 8 + BTH 12 + payload + ICRC 4 + VCRC 2, no preamble or gap.
  EXPECT_EQ(t.frame_bytes(4096), 4096u + 26u);
  EXPECT_EQ(t.wire_bytes(4096), 4096u + 26u);
}

TEST(PhyTiming, Ethernet100GKr4) {
  // 4 x 25.78125 = 103.125 Gb/s; RS(528,514) over 256b/257b gives 100 Gb/s.
  PhyTiming t(port(4, 25.78125, Encoding::enc_256b257b, FecKind::rs528_514, Framing::ethernet));
  expect_relative({"Phy", "100GBASE-KR4 data rate (4 x 25.78125G NRZ, RS(528,514))", "IEEE 802.3bj cl. 91"},
                  t.data_rate().in_gbps(), 100.0, 1e-12, "Gb/s");
}

TEST(PhyTiming, Ethernet100GNoFec64b66b) {
  PhyTiming t(port(4, 25.78125, Encoding::enc_64b66b, FecKind::none, Framing::ethernet));
  EXPECT_NEAR(t.data_rate().bps(), 100e9, 1);
  EXPECT_EQ(t.fec_latency().in_seconds(), 0.0);
}

TEST(PhyTiming, FecAccumulationIsOneCodewordAtTheLaneRate) {
  // A codeword is decoded once all of it is in: codeword bits / rate of the lanes it spans.
  PhyTiming kp4(port(1, 106.25, Encoding::enc_256b257b, FecKind::rs544_514, Framing::ethernet));
  expect_near({"Phy", "RS(544,514) codeword accumulation on one 106.25G lane (5440 b / 106.25 Gb/s)",
               "IEEE 802.3 cl. 91/119 codeword: 5440 b / 106.25 Gb/s = 51.2 ns"},
              kp4.fec_accumulation().in_ns(), 5440 / 106.25, 1e-6, "ns");
  PhyTiming kr4(port(4, 25.78125, Encoding::enc_256b257b, FecKind::rs528_514, Framing::ethernet));
  expect_near({"Phy", "RS(528,514) codeword accumulation on 4 x 25.78125G (5280 b / 103.125 Gb/s)",
               "IEEE 802.3bj cl. 91"},
              kr4.fec_accumulation().in_ns(), 5280 / 103.125, 1e-6, "ns");
  // RS(272,257+1) halves the codeword and so the accumulation, at the same data rate.
  PhyTiming ll(port(1, 106.25, Encoding::enc_256b257b, FecKind::rs272_257, Framing::ethernet));
  expect_near({"Phy", "RS(272,257+1) accumulation on one 106.25G lane (2720 b: half of RS(544,514))",
               "IEEE 802.3ck / 802.3df low-latency RS(272,257+1) codeword"},
              ll.fec_accumulation().in_ns(), 2720 / 106.25, 1e-6, "ns");
  EXPECT_NEAR(ll.data_rate().bps(), kp4.data_rate().bps(), 1);
}

TEST(PhyTiming, FecLatencyAddsDecoderAndInterleave) {
  auto p = port(4, 106.25, Encoding::enc_256b257b, FecKind::rs544_514, Framing::ethernet);
  p.fec_interleave = 2;
  p.fec_decoder_latency = Time::ns(20);
  PhyTiming t(p);
  expect_near({"Phy",
               "FEC latency, 400G over 4 x 106.25G, 2 codewords interleaved + 20 ns decoder "
               "(2 x 5440 b / 425 Gb/s + 20 ns)",
               "IEEE 802.3bs cl. 119 (2-way interleave); decoder latency is a parameter"},
              t.fec_latency().in_ns(), 2 * 5440 / 425.0 + 20, 1e-6, "ns");
}

TEST(PhyTiming, SerializationIsFrameBitsOverDataRate) {
  // L / B at the data rate: store-and-forward adds this per hop.
  PhyTiming t400(port(8, 53.125, Encoding::enc_256b257b, FecKind::rs544_514, Framing::ethernet));
  expect_near({"Phy", "serialization of 9216 B at 400 Gb/s (L/B)", "L/B: 9216 x 8 b / 400 Gb/s = 184.32 ns"},
              t400.serialization(9216).in_ns(), 9216 * 8 / 400.0, 1e-6, "ns");
  PhyTiming t100(port(4, 25.78125, Encoding::enc_256b257b, FecKind::rs528_514, Framing::ethernet));
  expect_near({"Phy", "serialization of 1500 B at 100 Gb/s (L/B)", "L/B: 1500 x 8 b / 100 Gb/s = 120 ns"},
              t100.serialization(1500).in_ns(), 120.0, 1e-6, "ns");
}

TEST(PhyTiming, RoceFramingAndMinimumFrame) {
  PhyTiming t(port(8, 53.125, Encoding::enc_256b257b, FecKind::rs544_514, Framing::roce_v2));
  // Eth 14 + IPv4 20 + UDP 8 + BTH 12 + payload + ICRC 4 + FCS 4; + preamble 8 + IFG 12.
  EXPECT_EQ(t.frame_bytes(4096), 4096u + 62u);
  EXPECT_EQ(t.wire_bytes(4096), 4096u + 82u);
  // A 1-byte payload is padded to the 64-byte minimum frame.
  EXPECT_EQ(t.frame_bytes(1), 64u);
  EXPECT_EQ(t.wire_bytes(1), 84u);
}

TEST(PhyTiming, OneWayLatencyHandComputed) {
  // 400GbE 8x53.125, 30 m cable, 20 ns decoder, RoCEv2 frame of 1000 B payload:
  //   header ready = (8 + 54) B * 8 / 400G + 30 * 5 ns + 12.8 ns + 20 ns = 1.24 + 182.8 ns
  //   tail         = (8 + 1062) B * 8 / 400G + 182.8 ns = 21.4 + 182.8 ns
  auto p = port(8, 53.125, Encoding::enc_256b257b, FecKind::rs544_514, Framing::roce_v2);
  p.cable_length = Length::metres(30);
  p.fec_decoder_latency = Time::ns(20);
  PhyTiming t(p);
  EXPECT_NEAR(t.propagation().in_ns(), 150.0, 1e-9);
  EXPECT_NEAR(t.header_delay(1000).in_ns(), 184.04, 1e-6);
  EXPECT_NEAR(t.tail_delay(1000).in_ns(), 204.2, 1e-6);
  EXPECT_NEAR(t.occupancy(1000).in_ns(), (1000 + 82) * 8 / 400.0, 1e-6);
}

TEST(PhyTiming, InfinibandNdrOneWayLatency) {
  // NDR, 2 m copper, no decoder latency, 4 KiB payload: (20 + 4096 + 6) B at 400G
  // plus 10 ns propagation plus 12.8 ns accumulation.
  auto p = port(4, 106.25, Encoding::enc_256b257b, FecKind::rs544_514, Framing::infiniband);
  p.cable_length = Length::metres(2);
  PhyTiming t(p);
  EXPECT_NEAR(t.tail_delay(4096).in_ns(), 4122 * 8 / 400.0 + 10 + 12.8, 1e-6);
  EXPECT_NEAR(t.header_delay(4096).in_ns(), 20 * 8 / 400.0 + 10 + 12.8, 1e-6);
}

TEST(PhyParams, RejectsOutOfRange) {
  PhyParams p;
  p.lanes = 0;
  EXPECT_THROW(PhyTiming{p}, std::invalid_argument);
  p = PhyParams{};
  p.fec_interleave = 9;
  EXPECT_THROW(PhyTiming{p}, std::invalid_argument);
}

}  // namespace
