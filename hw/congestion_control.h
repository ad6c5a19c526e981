// End-host congestion control, chosen by name: none, DCQCN (RoCE) and IB CC.
// Pure state machines driven by the transport with explicit times; timers are
// evaluated lazily at the next query, so an idle sender costs no events.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hw/param_spec.h"
#include "hw/units.h"

namespace fabricsim::hw {

enum class CcKind { none, dcqcn, ib_cc };
std::string_view to_string(CcKind k);
const std::vector<CcKind>& all_cc_kinds();
/// The configuration names of CcKind (nic.congestion_control.kind).
const EnumNames<CcKind>& cc_kind_names();

/// DCQCN (Zhu et al., SIGCOMM 2015). Defaults: the parameters released with the
/// paper's simulator; production values differ, every one is configurable.
struct DcqcnParams {
  double g = 1.0 / 256;                               ///< alpha gain
  Time alpha_timer = Time::us(55);                    ///< alpha decays each period without a CNP
  Time rate_timer = Time::us(60);                     ///< rate-increase timer period
  Size byte_counter = Size::bytes(300000);            ///< rate-increase byte counter
  int fast_recovery_steps = 5;                        ///< F: increase events in fast recovery
  Bandwidth additive_increase = Bandwidth::gbps(0.04);///< R_AI
  Bandwidth hyper_increase = Bandwidth::gbps(0.2);    ///< R_HAI
  Bandwidth min_rate = Bandwidth::gbps(0.1);          ///< floor of the current rate
  Time cnp_interval = Time::us(50);                   ///< receiver: at most one CNP per QP per interval
  void validate() const;
};

/// InfiniBand congestion control (IBTA vol.1 annex A10): BECN raises the CCT
/// index, a timer lowers it, the index selects an inter-packet delay.
struct IbCcParams {
  int ccti_increase = 1;               ///< index step per BECN
  int ccti_limit = 127;                ///< largest index
  Time ccti_timer = Time::us(10);      ///< index decreases by one per period
  Time ipd_unit = Time::ns(10);        ///< CCT[i] = i x ipd_unit of idle after each packet (linear table)
  void validate() const;
};

/// The keys of `nic.congestion_control.dcqcn:` and `nic.congestion_control.ib_cc:`.
const ParamBlock& dcqcn_params();
const ParamBlock& ib_cc_params();

class CongestionControl {
 public:
  virtual ~CongestionControl() = default;
  /// Sending rate now [b/s] (advances timers up to `now_s`).
  virtual double rate_bps(double now_s) = 0;
  /// Idle time the sender adds after each packet (IB CC inter-packet delay) [s].
  virtual double inter_packet_delay_s(double now_s) = 0;
  /// A CNP (DCQCN) or BECN (IB CC) arrived.
  virtual void on_notification(double now_s) = 0;
  /// The sender transmitted `bytes` (DCQCN byte counter).
  virtual void on_bytes_sent(std::uint64_t bytes, double now_s) = 0;
  virtual CcKind kind() const = 0;
  /// The rate the limiter applies now to back-to-back packets of `wire_bits` each [b/s]:
  /// each is sent at rate_bps and followed by the inter-packet delay, so IB CC's delay
  /// shows as a lower rate (IBTA vol. 1 annex A10 throttles by idle time between packets).
  double paced_rate_bps(double wire_bits, double now_s) {
    const double rate = rate_bps(now_s);
    return rate / (1 + inter_packet_delay_s(now_s) * rate / wire_bits);
  }
};

/// Builds the named scheme for a sender whose line rate is `line_rate_bps`.
std::unique_ptr<CongestionControl> make_congestion_control(CcKind kind, const DcqcnParams& dcqcn,
                                                           const IbCcParams& ib, double line_rate_bps);

}  // namespace fabricsim::hw
