// Egress transmission selection: which virtual lane (InfiniBand) or traffic
// class (Ethernet) an output port serves next. The TLM egress unit reports, at
// each packet boundary, the head-packet size of every class that may send
// (non-empty and not blocked by credits or PFC), asks select(), sends the head of
// the chosen class and commits it with update_state(). Time stays in the wrapper.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hw/arbiter.h"  // StateVector

namespace fabricsim::hw {

/// Result of EgressScheduler::select() when no class has anything eligible.
inline constexpr int kNoClass = -1;

/// Chooses the class an egress port serves next (IB VL arbiter, 802.1Q transmission selection).
class EgressScheduler {
 public:
  virtual ~EgressScheduler() = default;
  /// head_bytes[c] = size in bytes of the packet at the head of class c, 0 when class c has nothing
  /// eligible (empty, or blocked by flow control). Returns the class to send, or kNoClass (-1) if
  /// none. Pure: the answer depends only on committed state and head_bytes, and repeated calls
  /// give the same answer. (It remembers the decision, with the eligibility it was made on, for
  /// update_state(); that makes select() const but not thread-safe.)
  virtual int select(const std::vector<std::uint32_t>& head_bytes) const = 0;
  /// Commits that class c sent a packet of `bytes` (advances weights/deficits/pointers). c must be
  /// the answer of the most recent select() (std::logic_error otherwise): like the hardware, the
  /// commit uses the eligibility vector the decision was made on.
  virtual void update_state(int c, std::uint32_t bytes) = 0;
  /// Number of classes (VLs or traffic classes) head_bytes must cover.
  virtual int classes() const = 0;
  /// The committed state as named vectors (nothing by default): what lockstep compares
  /// with an RTL twin's debug ports after every committing edge.
  virtual void debug_state(std::vector<StateVector>& out) const { out.clear(); }
};

/// One VL arbitration table entry (IBTA vol.1 §7.6.9): serve `vl` for up to `weight` x 64 bytes.
struct VlArbEntry {
  int vl = 0;      ///< data VL, 0..vls-1
  int weight = 1;  ///< in units of 64 bytes, 1..255; 0 = entry unused
};

/// IB VL arbitration (IBTA vol.1 §7.6.9): a high- and a low-priority table of (vl, weight)
/// entries, weight in units of 64 bytes (1..255; 0 = entry unused); high_limit = how many
/// bytes, in units of 4096 B, of high-priority packets may be sent while a low-priority
/// packet is ready before one low-priority packet must go (255 = unlimited, 0 = one packet).
/// VL15 (subnet management) bypasses this arbiter and is not modelled here.
struct IbVlArbParams {
  int vls = 1;                   ///< data VLs, 1..15
  std::vector<VlArbEntry> high;  ///< high-priority table (up to 64 entries)
  std::vector<VlArbEntry> low;   ///< low-priority table (up to 64 entries)
  int high_limit = 255;          ///< in 4 KiB units, 0..255; 255 = unlimited
  /// Throws std::invalid_argument naming the offending field.
  void validate() const;
};

/// Builds the IB VL arbiter (validates `p`). Table entries are served in order; an entry sends
/// while its remaining weight > 0 (a packet may overdraw it); entries whose VL has nothing ready
/// are skipped and forfeit that turn.
std::unique_ptr<EgressScheduler> make_ib_vl_arbiter(const IbVlArbParams& p);

/// Ethernet transmission selection (IEEE 802.1Q §8.6.8): classes marked strict are served
/// first (higher class index = higher priority, as in 802.1Q), the rest by deficit weighted
/// round robin (Shreedhar & Varghese, SIGCOMM 1995) with quantum = weight * quantum_bytes.
struct TcSchedulerParams {
  int classes = 8;                     ///< traffic classes, 1..8
  std::vector<bool> strict;            ///< per class; empty = none strict
  std::vector<int> weights;            ///< per class DWRR weight 1..127; empty = all 1
  std::uint32_t quantum_bytes = 1500;  ///< bytes per weight unit per round, > 0
  /// Throws std::invalid_argument naming the offending field.
  void validate() const;
};

/// Builds the strict-priority + DWRR scheduler (validates `p`). DWRR visits classes in index
/// order; a class that has nothing eligible when visited loses its deficit (S&V: DC = 0 when
/// the queue empties), so idle time is never banked.
std::unique_ptr<EgressScheduler> make_tc_scheduler(const TcSchedulerParams& p);

}  // namespace fabricsim::hw
