// Lossless and lossy buffer accounting for Ethernet ports: PFC ingress
// thresholds (IEEE 802.1Qbb), the headroom they need, shared-buffer admission
// with dynamic thresholds, and the RED/ECN marking curve. Decisions and byte
// counts only; the TLM switch sends the PAUSE frames and owns the timing.
#pragma once

#include <cstdint>

namespace fabricsim::hw {

/// PFC (IEEE 802.1Qbb) ingress thresholds for one port and priority. No useful defaults exist
/// (they depend on rate, cable and buffer); the zero defaults fail validate() on purpose.
struct PfcThresholds {
  std::uint64_t xoff_bytes = 0;      ///< send PAUSE when occupancy rises to/above this
  std::uint64_t xon_bytes = 0;       ///< send resume when occupancy falls to/below this (xon < xoff)
  std::uint64_t headroom_bytes = 0;  ///< space above xoff absorbing in-flight data; beyond xoff+headroom packets are dropped
  /// Throws std::invalid_argument naming the offending field.
  void validate() const;
};

/// What the port must send to its link partner after an accounting step.
enum class PfcAction { none, send_pause, send_resume };

/// PFC ingress accounting for one port and priority: occupancy, pause state, drops beyond headroom.
class PfcIngress {
 public:
  /// Validates `t`.
  explicit PfcIngress(const PfcThresholds& t);
  /// A packet of `bytes` arrives: returns false if it does not fit (occupancy + bytes > xoff + headroom) — the caller
  /// drops and counts it; otherwise accounts it and sets `action` (send_pause when crossing xoff while not paused).
  bool admit(std::uint64_t bytes, PfcAction& action);
  /// A packet leaves the buffer: returns send_resume when falling to/below xon while paused.
  /// Throws std::logic_error when more bytes leave than are held.
  PfcAction release(std::uint64_t bytes);
  /// True between a send_pause and the following send_resume.
  bool pausing() const { return pausing_; }
  /// Bytes held for this port and priority.
  std::uint64_t occupancy() const { return occupancy_; }
  /// Bytes above xoff now (headroom in use).
  std::uint64_t headroom_used() const;
  /// The thresholds in force.
  const PfcThresholds& thresholds() const { return t_; }

 private:
  PfcThresholds t_;
  std::uint64_t occupancy_ = 0;
  bool pausing_ = false;
};

/// Pause time carried by a PFC frame (IEEE 802.1Qbb / 802.3 Annex 31B): quanta of 512 bit times
/// at the port's bit rate. Throws std::invalid_argument unless bits_per_second > 0.
double pause_quanta_seconds(std::uint16_t quanta, double bits_per_second);

/// Headroom a port needs (IEEE 802.1Qbb; NVIDIA mlxsw driver wiki, Quality of Service): bytes in flight during the pause reaction:
/// 2 x cable propagation x rate + 2 x MTU frame + response (PHY/reaction) delay x rate; returns bytes (rounded up).
/// Cell-granular buffers need more (mlxsw scales the delay part by up to 2 x cell/(cell+1)).
std::uint64_t pfc_headroom_bytes(double bits_per_second, double cable_delay_s,
                                 std::uint64_t mtu_frame_bytes, double response_delay_s);

/// Shared-buffer admission with dynamic thresholds (Choudhury & Hahne, IEEE/ACM ToN 1998, as in Broadcom-style MMUs):
/// a queue may grow while its length < alpha x (free shared buffer).
class SharedBuffer {
 public:
  /// total_bytes: shared pool size.
  explicit SharedBuffer(std::uint64_t total_bytes);
  /// Pure decision: true when a queue now holding `queue_bytes` may take a packet of
  /// `packet_bytes` (queue_bytes < alpha x free and the packet fits in the free space).
  /// Throws std::invalid_argument unless alpha > 0.
  bool admit(std::uint64_t queue_bytes, std::uint64_t packet_bytes, double alpha) const;
  /// Takes `bytes` from the pool; throws std::logic_error past the total.
  void allocate(std::uint64_t bytes);
  /// Returns `bytes` to the pool; throws std::logic_error when more than used.
  void free(std::uint64_t bytes);
  /// Bytes in use.
  std::uint64_t used() const { return used_; }
  /// Pool size.
  std::uint64_t total() const { return total_; }
  /// Bytes not in use.
  std::uint64_t free_bytes() const { return total_ - used_; }

 private:
  std::uint64_t total_;
  std::uint64_t used_ = 0;
};

/// RED-style marking/dropping curve on queue depth (Floyd & Jacobson 1993; ECN per RFC 3168; DCQCN uses Kmin/Kmax/Pmax):
/// probability 0 below kmin, rising linearly to pmax at kmax, 1 above kmax.
struct RedCurve {
  std::uint64_t kmin_bytes = 0;  ///< below this depth nothing is marked
  std::uint64_t kmax_bytes = 0;  ///< at this depth the probability is pmax; above it, 1
  double pmax = 0;               ///< probability at kmax, 0..1
  /// kmin <= kmax, 0 <= pmax <= 1; throws std::invalid_argument naming the field.
  void validate() const;
  /// Marking/drop probability at `queue_bytes` of depth.
  double probability(std::uint64_t queue_bytes) const;
  /// Decision for a uniform draw u in [0,1): true when u < probability.
  bool decide(std::uint64_t queue_bytes, double u) const { return u < probability(queue_bytes); }
};

}  // namespace fabricsim::hw
