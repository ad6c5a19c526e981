#include "hw/flow_control.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace fabricsim::hw {

namespace {

// IEEE 802.3 Annex 31B: one pause quantum is 512 bit times.
constexpr double kBitsPerQuantum = 512.0;

void require_finite_nonnegative(double v, const char* name) {
  if (!std::isfinite(v) || v < 0)
    throw std::invalid_argument(std::string(name) + " must be finite and >= 0, got " +
                                std::to_string(v));
}

void require_positive_rate(double bits_per_second) {
  if (!std::isfinite(bits_per_second) || bits_per_second <= 0)
    throw std::invalid_argument("bits_per_second must be finite and > 0, got " +
                                std::to_string(bits_per_second));
}

}  // namespace

// ---- PFC ----------------------------------------------------------------------------------------

void PfcThresholds::validate() const {
  if (xoff_bytes == 0) throw std::invalid_argument("PfcThresholds.xoff_bytes must be positive");
  if (xon_bytes >= xoff_bytes)
    throw std::invalid_argument("PfcThresholds.xon_bytes = " + std::to_string(xon_bytes) +
                                " must be below xoff_bytes = " + std::to_string(xoff_bytes));
  if (headroom_bytes > std::numeric_limits<std::uint64_t>::max() - xoff_bytes)
    throw std::invalid_argument("PfcThresholds.headroom_bytes: xoff + headroom overflows");
}

PfcIngress::PfcIngress(const PfcThresholds& t) : t_(t) { t_.validate(); }

bool PfcIngress::admit(std::uint64_t bytes, PfcAction& action) {
  action = PfcAction::none;
  const std::uint64_t limit = t_.xoff_bytes + t_.headroom_bytes;
  // Beyond xoff + headroom the lossless promise is already broken: drop, occupancy unchanged.
  if (bytes > limit || occupancy_ > limit - bytes) return false;
  occupancy_ += bytes;
  if (!pausing_ && occupancy_ >= t_.xoff_bytes) {
    pausing_ = true;
    action = PfcAction::send_pause;
  }
  return true;
}

PfcAction PfcIngress::release(std::uint64_t bytes) {
  if (bytes > occupancy_)
    throw std::logic_error("PFC accounting underflow: releasing " + std::to_string(bytes) +
                           " bytes, hold " + std::to_string(occupancy_));
  occupancy_ -= bytes;
  // Hysteresis: resume only once drained to xon, not on the first byte below xoff.
  if (pausing_ && occupancy_ <= t_.xon_bytes) {
    pausing_ = false;
    return PfcAction::send_resume;
  }
  return PfcAction::none;
}

std::uint64_t PfcIngress::headroom_used() const {
  return occupancy_ > t_.xoff_bytes ? occupancy_ - t_.xoff_bytes : 0;
}

double pause_quanta_seconds(std::uint16_t quanta, double bits_per_second) {
  require_positive_rate(bits_per_second);
  return quanta * kBitsPerQuantum / bits_per_second;
}

std::uint64_t pfc_headroom_bytes(double bits_per_second, double cable_delay_s,
                                 std::uint64_t mtu_frame_bytes, double response_delay_s) {
  require_positive_rate(bits_per_second);
  require_finite_nonnegative(cable_delay_s, "cable_delay_s");
  require_finite_nonnegative(response_delay_s, "response_delay_s");
  // Once xoff is crossed: the local MTU frame in progress delays the PAUSE, the PAUSE crosses
  // the cable, the peer reacts (response delay) and finishes its own MTU frame, and everything
  // the peer sent meanwhile is still on the cable on the way in (the 802.1Qbb delay budget as
  // used by mlxsw's headroom calculation, Debugging/hdroom_sz).
  const double delay_bits = (2.0 * cable_delay_s + response_delay_s) * bits_per_second;
  const double bytes = delay_bits / 8.0 + 2.0 * static_cast<double>(mtu_frame_bytes);
  // Round up, but do not let floating-point noise on an exact product add a byte.
  return static_cast<std::uint64_t>(std::ceil(bytes - 1e-9 * (bytes > 1.0 ? bytes : 1.0)));
}

// ---- Shared buffer ------------------------------------------------------------------------------

SharedBuffer::SharedBuffer(std::uint64_t total_bytes) : total_(total_bytes) {
  if (total_bytes == 0) throw std::invalid_argument("SharedBuffer total_bytes must be positive");
}

bool SharedBuffer::admit(std::uint64_t queue_bytes, std::uint64_t packet_bytes, double alpha) const {
  if (!std::isfinite(alpha) || alpha <= 0)
    throw std::invalid_argument("SharedBuffer alpha must be finite and > 0, got " +
                                std::to_string(alpha));
  const std::uint64_t free_now = free_bytes();
  if (packet_bytes > free_now) return false;
  // Dynamic threshold T = alpha x free: every queue's cap shrinks as the pool fills, leaving
  // a reserve of free space for queues that become active later (Choudhury & Hahne).
  return static_cast<double>(queue_bytes) < alpha * static_cast<double>(free_now);
}

void SharedBuffer::allocate(std::uint64_t bytes) {
  if (bytes > free_bytes())
    throw std::logic_error("shared buffer overflow: allocating " + std::to_string(bytes) +
                           " bytes with " + std::to_string(free_bytes()) + " free");
  used_ += bytes;
}

void SharedBuffer::free(std::uint64_t bytes) {
  if (bytes > used_)
    throw std::logic_error("shared buffer underflow: freeing " + std::to_string(bytes) +
                           " bytes with " + std::to_string(used_) + " used");
  used_ -= bytes;
}

// ---- RED / ECN curve ----------------------------------------------------------------------------

void RedCurve::validate() const {
  if (kmin_bytes > kmax_bytes)
    throw std::invalid_argument("RedCurve.kmin_bytes = " + std::to_string(kmin_bytes) +
                                " exceeds kmax_bytes = " + std::to_string(kmax_bytes));
  if (!(pmax >= 0.0 && pmax <= 1.0))
    throw std::invalid_argument("RedCurve.pmax = " + std::to_string(pmax) + " outside 0..1");
}

double RedCurve::probability(std::uint64_t queue_bytes) const {
  if (queue_bytes > kmax_bytes) return 1.0;
  if (queue_bytes < kmin_bytes) return 0.0;
  if (kmax_bytes == kmin_bytes) return pmax;  // step curve: queue == kmin == kmax
  return pmax * static_cast<double>(queue_bytes - kmin_bytes) /
         static_cast<double>(kmax_bytes - kmin_bytes);
}

}  // namespace fabricsim::hw
