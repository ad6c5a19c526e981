// Packet FIFO as a replaceable block: the Verilated twin of rtl/packet_fifo.sv (an
// hw::PacketFifo) driven through the pin-level transactor (rtl), or it and the hw core on
// the same words, compared every cycle (lockstep). The hw core itself (tlm) is the
// switch's own hw::PacketFifo, with no block at all: an input FIFO consults a block only
// when one is set (tlm/switch/input_fifo.h). docs/cosim.md ("Input FIFO") gives the pin
// mapping and the cycle alignment: a bulk write of n words is n write cycles, a packet
// read is read cycles until the word flagged last, the queries read the outputs between.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <systemc>

#include "hw/packet_fifo.h"
#include "hw/units.h"
#include "tlm/rtl_allocator.h"  // AllocatorImpl, RtlAllocatorProblem, RtlAllocatorMismatch
#include "tlm/rtl_model.h"
#include "tlm/waveform_options.h"

namespace fabricsim::tlm_fabric {

/// One packet FIFO, called as hw::PacketFifo with the time of each write and read.
class PacketFifoBlock {
 public:
  virtual ~PacketFifoBlock() = default;
  /// Room for `n` more words.
  virtual bool can_push(std::size_t n) const = 0;
  /// Writes `n` words carrying `data`, the final one flagged `last`, from `at` on (one per
  /// core-clock cycle). Throws std::logic_error, or RtlAllocatorMismatch when the block
  /// refuses a word, unless can_push(n).
  virtual void push_words(std::size_t n, std::uint64_t data, bool last, const sc_core::sc_time& at) = 0;
  /// The head word may leave under the FIFO's mode.
  virtual bool can_pop() const = 0;
  /// The head word; throws std::logic_error unless can_pop().
  virtual hw::FifoWord front() const = 0;
  /// Reads the head packet through its last word from `at` on; returns its words.
  virtual std::size_t pop_packet(const sc_core::sc_time& at) = 0;
  virtual std::size_t words() const = 0;    ///< words stored
  virtual std::size_t packets() const = 0;  ///< complete packets stored
  /// Closes the block's waveform (switch.rtl_trace), if it records one, and says what it
  /// wrote (results.json "simulator"."waveforms"); the run must be over.
  virtual std::optional<RtlWaveformRecord> finish_waveform() = 0;
  /// The RTL block's hierarchy and model names (switch.rtl_trace_scope).
  virtual RtlBlockName rtl_block() const = 0;
};

/// Checks that an RTL packet FIFO `variant` is built for `depth` words (0: not known yet,
/// skipped). The problem's key is switch.input_fifo_impl (no RTL twins in this build),
/// switch.input_fifo_rtl_variant or switch.input_buffer (the depth follows from it); the
/// message lists what this build has.
RtlAllocatorProblem check_rtl_packet_fifo(std::string_view variant, std::uint64_t depth);

/// Adds the packet FIFO models among `models` (test_only_rtl_models()) to this process's
/// table, marked test_only (add_rtl_models() calls it; for test code).
void add_rtl_packet_fifo_models(const std::vector<RtlModel>& models);

/// Everything needed to build one packet FIFO block.
struct PacketFifoSpec {
  std::string hierarchy;                               ///< e.g. fabric.sw0.port3.vl0.input_fifo (errors, waveform names)
  AllocatorImpl impl = AllocatorImpl::tlm;             ///< tlm: no block
  std::string rtl_variant = "packet_fifo";             ///< registered model (kind packet_fifo)
  std::size_t depth_words = 16;                        ///< capacity in words (a registered size)
  hw::FifoMode mode = hw::FifoMode::kCutThrough;       ///< saf_i, static
  hw::Frequency core_clock = hw::Frequency::ghz(1.5);  ///< one word per cycle; cycle numbering in errors
  WaveformOptions waveform;                            ///< waveform of the RTL model (wants() the hierarchy name); dir empty: none
};

/// The block for `spec`, or nullptr for tlm. Throws std::invalid_argument naming the
/// hierarchy when the model asked for is not built (listing the builds).
std::unique_ptr<PacketFifoBlock> make_packet_fifo(const PacketFifoSpec& spec);

}  // namespace fabricsim::tlm_fabric
