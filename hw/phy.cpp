#include "hw/phy.h"

#include <stdexcept>

namespace fabricsim::hw {

int bits_per_symbol(Modulation m) { return m == Modulation::pam4 ? 2 : 1; }

double encoding_expansion(Encoding e) {
  switch (e) {
    case Encoding::none: return 1.0;
    case Encoding::enc_8b10b: return 10.0 / 8.0;
    case Encoding::enc_64b66b: return 66.0 / 64.0;
    // 802.3 Cl. 119: 64b/66b blocks transcoded four at a time into 257 bits.
    case Encoding::enc_256b257b: return 257.0 / 256.0;
  }
  return 1.0;
}

const FecCode& fec_code(FecKind kind) {
  // 10-bit symbols. RS(272,257+1) carries ten 257-bit blocks plus one pad
  // symbol per codeword, so its rate matches RS(544,514) at half the codeword.
  static const FecCode none{FecKind::none, 0, 1.0, 0};
  static const FecCode kr4{FecKind::rs528_514, 5280, 528.0 / 514.0, 7};
  static const FecCode kp4{FecKind::rs544_514, 5440, 544.0 / 514.0, 15};
  static const FecCode ll{FecKind::rs272_257, 2720, 272.0 / 257.0, 7};
  switch (kind) {
    case FecKind::none: return none;
    case FecKind::rs528_514: return kr4;
    case FecKind::rs544_514: return kp4;
    case FecKind::rs272_257: return ll;
  }
  return none;
}

FramingOverhead framing_overhead(Framing f) {
  switch (f) {
    // IBTA vol.1 ch.5/7: LRH 8 + BTH 12 before the payload, ICRC 4 + VCRC 2 after.
    case Framing::infiniband: return {0, 8 + 12, 4 + 2, 0, 0};
    // RoCEv2 over Ethernet: preamble+SFD 8; MAC 14 + IPv4 20 + UDP 8 + BTH 12;
    // ICRC 4 + FCS 4; inter-frame gap 12; minimum frame 64.
    case Framing::roce_v2: return {8, 14 + 20 + 8 + 12, 4 + 4, 12, 64};
    // Plain Ethernet II frame: MAC header 14, FCS 4.
    case Framing::ethernet: return {8, 14, 4, 12, 64};
  }
  return {};
}

void PhyParams::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  const ParamBlock& spec = phy_params();
  spec["lanes"].check(lanes);
  if (lane_rate.bps() <= 0) fail("lane_rate must be positive");
  spec["fec_interleave"].check(fec_interleave);
  if (fec_decoder_latency.in_seconds() < 0) fail("fec_decoder_latency must not be negative");
  if (cable_length.in_metres() < 0) fail("cable_length must not be negative");
  if (propagation_per_metre.in_seconds() < 0) fail("propagation_per_metre must not be negative");
}

PhyTiming::PhyTiming(const PhyParams& params)
    : params_(params), framing_(framing_overhead(params.framing)) {
  params_.validate();
  data_rate_ = line_rate() / (encoding_expansion(params_.encoding) * fec_code(params_.fec).rate_expansion);
}

Bandwidth PhyTiming::line_rate() const { return params_.lane_rate * static_cast<double>(params_.lanes); }

double PhyTiming::lane_baud() const { return params_.lane_rate.bps() / bits_per_symbol(params_.modulation); }

Time PhyTiming::fec_accumulation() const {
  // Codewords are striped over all lanes, so the receiver holds the interleaved
  // group once it arrived at the aggregate line rate.
  const double bits = static_cast<double>(fec_code(params_.fec).codeword_bits) * params_.fec_interleave;
  return Time::seconds(bits / line_rate().bps());
}

Time PhyTiming::fec_latency() const {
  if (params_.fec == FecKind::none) return Time::seconds(0);
  return fec_accumulation() + params_.fec_decoder_latency;
}

Time PhyTiming::propagation() const {
  return params_.propagation_per_metre * params_.cable_length.in_metres();
}

std::uint64_t PhyTiming::frame_bytes(std::uint64_t payload) const {
  return hw::frame_bytes(std::uint64_t{framing_.header_bytes} + framing_.trailer_bytes, payload, framing_.min_frame_bytes);
}

std::uint64_t PhyTiming::wire_bytes(std::uint64_t payload) const {
  return framing_.preamble_bytes + frame_bytes(payload) + framing_.gap_bytes;
}

Time PhyTiming::serialization(std::uint64_t bytes) const {
  return Size::bytes(bytes) / data_rate_;
}

Time PhyTiming::header_delay(std::uint64_t /*payload*/) const {
  return serialization(framing_.preamble_bytes + framing_.header_bytes) + propagation() + fec_latency();
}

Time PhyTiming::tail_delay(std::uint64_t payload) const {
  return serialization(framing_.preamble_bytes + frame_bytes(payload)) + propagation() + fec_latency();
}

Time PhyTiming::occupancy(std::uint64_t payload) const { return serialization(wire_bytes(payload)); }

const EnumNames<Modulation>& modulation_names() {
  static const EnumNames<Modulation> names{{Modulation::nrz, "nrz"}, {Modulation::pam4, "pam4"}};
  return names;
}
const EnumNames<Encoding>& encoding_names() {
  static const EnumNames<Encoding> names{{Encoding::none, "none"},
                                         {Encoding::enc_8b10b, "8b/10b"},
                                         {Encoding::enc_64b66b, "64b/66b"},
                                         {Encoding::enc_256b257b, "256b/257b"}};
  return names;
}
const EnumNames<FecKind>& fec_names() {
  static const EnumNames<FecKind> names{{FecKind::none, "none"},
                                        {FecKind::rs528_514, "rs528_514"},
                                        {FecKind::rs544_514, "rs544_514"},
                                        {FecKind::rs272_257, "rs272_257"}};
  return names;
}
const EnumNames<Framing>& framing_names() {
  static const EnumNames<Framing> names{
      {Framing::infiniband, "infiniband"}, {Framing::roce_v2, "roce_v2"}, {Framing::ethernet, "ethernet"}};
  return names;
}

std::string_view to_string(Modulation m) { return name_of(modulation_names(), m); }
std::string_view to_string(Encoding e) { return name_of(encoding_names(), e); }
std::string_view to_string(FecKind f) { return name_of(fec_names(), f); }
std::string_view to_string(Framing f) { return name_of(framing_names(), f); }

const ParamBlock& phy_params() {
  static const ParamBlock block{
      "phy",
      "one link direction's PHY",
      {{"lanes", ParamType::integer, "", "8", "1", "16", {}, "", "SerDes lanes per port"},
       {"lane_rate", ParamType::bandwidth, "", "53.125Gb/s", "1Mb/s", "1Tb/s", {}, "",
        "signalling rate per lane, coding and FEC included"},
       {"modulation", ParamType::name, "", "pam4", "", "", names_of(modulation_names()), "",
        "sets the lane baud rate only; does not change timing"},
       {"encoding", ParamType::name, "", "256b/257b", "", "", names_of(encoding_names()), "", "line coding"},
       {"fec", ParamType::name, "", "rs544_514", "", "", names_of(fec_names()), "",
        "forward error correction: `rs528_514` (KR4), `rs544_514` (KP4), `rs272_257` (low latency)"},
       {"fec_interleave", ParamType::integer, "", "1", "1", "4", {}, "",
        "codewords interleaved; multiplies FEC accumulation time"},
       {"fec_decoder_latency", ParamType::time, "", "0ns", "0s", "10us", {}, "",
        "decoder pipeline after a codeword is accumulated"},
       {"cable_length", ParamType::length, "", "1m", "0m", "100km", {}, "", "cable length"},
       {"propagation_per_metre", ParamType::time, "", "5ns", "100ps", "100ns", {}, "", "signal delay per metre of cable"}}};
  return block;
}

}  // namespace fabricsim::hw
