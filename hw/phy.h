// PHY and link-layer timing arithmetic: lanes x lane rate, line coding, FEC,
// per-packet framing and propagation. Pure functions of PhyParams; the TLM
// link (tlm/link.h) turns these into event times.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hw/param_spec.h"
#include "hw/units.h"

namespace fabricsim::hw {

/// Symbol modulation on a SerDes lane.
enum class Modulation { nrz, pam4 };

/// Line coding applied to data before FEC (IEEE 802.3 Cl. 82 / Cl. 119).
enum class Encoding { none, enc_8b10b, enc_64b66b, enc_256b257b };

/// Forward error correction code on the link.
enum class FecKind { none, rs528_514, rs544_514, rs272_257 };

/// Per-packet framing: which headers and gaps each packet carries on the wire.
enum class Framing { infiniband, roce_v2, ethernet };

/// Bits carried per symbol (NRZ 1, PAM4 2).
int bits_per_symbol(Modulation m);
/// Coded bits per data bit of the line coding (64b/66b -> 66/64).
double encoding_expansion(Encoding e);

/// A Reed-Solomon code over 10-bit symbols as used by Ethernet and IB PHYs.
struct FecCode {
  FecKind kind = FecKind::none;
  std::uint32_t codeword_bits = 0;      ///< bits the receiver accumulates before decoding
  double rate_expansion = 1.0;          ///< line bits per bit entering the FEC
  std::uint32_t correctable_symbols = 0;///< t: symbol errors corrected per codeword
};
/// The code for a FEC kind: RS(528,514) "KR4", RS(544,514) "KP4", RS(272,257+1) low latency.
const FecCode& fec_code(FecKind kind);

/// Bytes each packet adds around its payload. Counted in link-layer order on
/// the wire: [preamble][header][payload][trailer][gap].
struct FramingOverhead {
  std::uint32_t preamble_bytes = 0;  ///< on the wire before the header (Ethernet preamble+SFD)
  std::uint32_t header_bytes = 0;    ///< headers that must be parsed before cut-through
  std::uint32_t trailer_bytes = 0;   ///< CRCs after the payload
  std::uint32_t gap_bytes = 0;       ///< idle after the packet (Ethernet IFG)
  std::uint32_t min_frame_bytes = 0; ///< header+payload+trailer is padded up to this
};
/// Framing for a kind: IB LRH+BTH / ICRC+VCRC; RoCEv2 Eth+IPv4+UDP+BTH / ICRC+FCS with
/// preamble and IFG; plain Ethernet MAC header / FCS.
FramingOverhead framing_overhead(Framing f);
/// A frame's bytes: header and trailer (`header_trailer`) around the payload, padded up
/// to the least frame (PhyTiming::frame_bytes; a transmit port keeps the two sizes).
inline std::uint64_t frame_bytes(std::uint64_t header_trailer, std::uint64_t payload, std::uint64_t min_frame) {
  const std::uint64_t frame = header_trailer + payload;
  return frame < min_frame ? min_frame : frame;
}

/// Parameters of one link direction. Every field has a default (400GbE, 8 x 53.125G PAM4);
/// ranges in phy_params().
struct PhyParams {
  int lanes = 8;                                        ///< SerDes lanes per port
  Bandwidth lane_rate = Bandwidth::gbps(53.125);        ///< signalling rate per lane incl. coding and FEC [b/s]
  Modulation modulation = Modulation::pam4;             ///< symbol modulation (sets baud = rate / bits per symbol)
  Encoding encoding = Encoding::enc_256b257b;           ///< line coding
  FecKind fec = FecKind::rs544_514;                     ///< forward error correction
  int fec_interleave = 1;                               ///< codewords interleaved symbol by symbol
  Time fec_decoder_latency = Time::ns(0);               ///< decoder pipeline after accumulation [s]
  Length cable_length = Length::metres(1);              ///< cable length [m]
  Time propagation_per_metre = Time::ns(5);             ///< signal delay per metre of cable [s/m]
  Framing framing = Framing::roce_v2;                   ///< packet framing overhead

  /// Throws std::invalid_argument naming the field when a value is out of range.
  void validate() const;
};

/// Derived timing of one link direction.
class PhyTiming {
 public:
  explicit PhyTiming(const PhyParams& params);

  const PhyParams& params() const { return params_; }
  /// Raw signalling rate over all lanes (lanes x lane rate).
  Bandwidth line_rate() const;
  /// Data rate left after line coding and FEC: what a MAC can fill.
  Bandwidth data_rate() const { return data_rate_; }
  /// Symbol rate of one lane [baud].
  double lane_baud() const;
  /// Time to accumulate the interleaved codewords before decoding can start.
  Time fec_accumulation() const;
  /// Accumulation plus decoder latency: what FEC adds to every packet.
  Time fec_latency() const;
  /// Propagation delay over the cable.
  Time propagation() const;
  /// Bytes buffered at the receiver for a payload (header + payload + trailer, padded).
  std::uint64_t frame_bytes(std::uint64_t payload) const;
  /// Bytes the packet occupies on the wire including preamble and gap.
  std::uint64_t wire_bytes(std::uint64_t payload) const;
  /// Serialization time of a byte count at the data rate.
  Time serialization(std::uint64_t bytes) const;
  /// First bit sent -> header parsed-ready at the receiver (preamble+header, propagation, FEC).
  Time header_delay(std::uint64_t payload) const;
  /// First bit sent -> last bit of the frame at the receiver.
  Time tail_delay(std::uint64_t payload) const;
  /// How long the transmitter is busy with the packet (wire bytes incl. gap).
  Time occupancy(std::uint64_t payload) const;

 private:
  PhyParams params_;
  FramingOverhead framing_;
  Bandwidth data_rate_;
};

/// The configuration names of each enum (parsing, to_string, error messages).
const EnumNames<Modulation>& modulation_names();
const EnumNames<Encoding>& encoding_names();
const EnumNames<FecKind>& fec_names();
const EnumNames<Framing>& framing_names();
std::string_view to_string(Modulation m);
std::string_view to_string(Encoding e);
std::string_view to_string(FecKind f);
std::string_view to_string(Framing f);

/// The PHY keys of `link:` (also of topology.host_link, fabric_link and links[i]); framing
/// is the link's (tlm/link.h).
const ParamBlock& phy_params();

}  // namespace fabricsim::hw
