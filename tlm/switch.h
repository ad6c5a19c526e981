// First switch ASIC model: N ports, one input FIFO per port (head-of-line
// blocking is real), a fixed ingress-to-allocator pipeline in core-clock
// cycles, one arbiter per output (round-robin by default), cut-through with
// store-and-forward fallback, and credit-based link flow control per port.
//
// CODE FLOW
//   in[i] END_TAIL  -> InputPort queue; HOL ready = edge(header|tail) + pipeline
//   edge wake       -> apply returned credits; per free output: collect ready
//                      HOL requests with credits -> arbiter -> grant
//   grant           -> egress start = max(now, egress free, ingress tail - egress
//                      serialization) -> out[o] BEGIN_HEADER; credit return on
//                      in[i] when the tail has left the buffer
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "hw/arbiter.h"
#include "hw/units.h"
#include "sim/stats.h"
#include "tlm/clock.h"
#include "tlm/fabric_protocol.h"
#include "tlm/fabric_socket.h"
#include "tlm/tx_port.h"

namespace fabricsim::tlm_fabric {

/// When a switch may start forwarding a packet.
enum class ForwardingMode {
  cut_through,        ///< once the header is parsed (falls back to SAF timing when egress is busy)
  store_and_forward,  ///< once the whole frame is received and checked
};

/// Parameters of a switch. Every field has a default and a unit.
struct SwitchParams {
  int ports = 4;                                            ///< radix, 2..256
  hw::Frequency core_clock = hw::Frequency::ghz(1.5);       ///< core clock [Hz]
  int pipeline_cycles = 200;                                ///< header ready -> allocator, in core cycles (parse, lookup, admission)
  ForwardingMode forwarding = ForwardingMode::cut_through;  ///< forwarding mode
  hw::Size input_buffer = hw::Size::kib(256);               ///< buffer per input port [B]
  std::uint32_t credit_block_bytes = 64;                    ///< credit granularity [B] (IB: 64)
  hw::Time credit_return_latency = hw::Time::ns(10);        ///< buffer freed -> credit packet leaves [s]
  std::string arbiter = "round_robin";                      ///< output arbitration policy (hw::arbiter_names())

  /// Throws std::invalid_argument naming the field when out of range.
  void validate() const;
};

std::string_view to_string(ForwardingMode m);

class Switch : public sc_core::sc_module {
 public:
  using InSocket = FabricTargetSocket<Switch>;
  using OutSocket = FabricInitiatorSocket<Switch>;

  sc_core::sc_vector<InSocket> in;    ///< ingress from links, one per port
  sc_core::sc_vector<OutSocket> out;  ///< egress to links, one per port

  SC_HAS_PROCESS(Switch);
  Switch(sc_core::sc_module_name name, const SwitchParams& params, stats::Registry& stats);

  /// Forwarding table: packets for endpoint `dst` leave on `port`.
  void set_route(int dst, int port);
  /// Binds output `port` to its link and the downstream receive buffer it fills.
  void attach_egress(int port, const hw::PhyTiming* link, std::uint64_t downstream_buffer_bytes);
  /// Tells input `port` the timing of its incoming link (for credit sizing).
  void attach_ingress(int port, const hw::PhyTiming* link);

  const SwitchParams& params() const { return params_; }
  /// Packets held in input buffers now.
  std::uint64_t packets_buffered() const;
  /// Packets forwarded so far.
  std::uint64_t packets_forwarded() const;

 private:
  struct Entry {
    Packet* packet;
    sc_core::sc_time header_at;
    sc_core::sc_time tail_at;
    sc_core::sc_time ready;  // edge at which the allocator may consider it
    int out_port;
  };
  struct InputPort {
    std::deque<Entry> queue;
    std::uint64_t buffered_bytes = 0;
    sc_core::sc_time busy_until;  // read port free again
    const hw::PhyTiming* link = nullptr;
    stats::Counter* max_occupancy = nullptr;  // high-water mark [B]
    std::uint64_t high_water = 0;
  };
  struct OutputPort {
    TxPort tx;
    std::unique_ptr<hw::Arbiter> arbiter;
    stats::Counter* packets = nullptr;
    stats::Counter* bytes = nullptr;
    stats::Counter* conflicts = nullptr;
  };

  tlm::tlm_sync_enum ingress(int port, Packet& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum egress_bw(int port, Packet& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void on_edge();
  void grant(int in_port, int out_port, const sc_core::sc_time& now);
  void schedule_next(const sc_core::sc_time& now);
  void wake_at(const sc_core::sc_time& t);

  SwitchParams params_;
  ClockDomain clock_;
  sc_core::sc_time pipeline_;
  std::vector<int> routes_;
  std::vector<InputPort> inputs_;
  std::vector<OutputPort> outputs_;
  sc_core::sc_event wake_;
  stats::Counter& activations_;
  stats::Counter& forwarded_;
};

}  // namespace fabricsim::tlm_fabric
