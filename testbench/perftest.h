// perftest-like RDMA workloads between two endpoints (ib_write_lat, ib_write_bw,
// ib_read_lat, ib_read_bw, ib_send_lat, ib_send_bw conventions):
//   *_lat: one operation at a time; write/send latency is half the ping-pong
//          round trip (each side polls for the other's data), read latency the
//          whole READ; statistics over `iterations` per message size.
//   *_bw:  `tx_depth` operations outstanding; bandwidth = bytes / time from
//          the first post to the last completion.
// Sizes run one after the other in one simulation; the run stops when done.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "hw/param_spec.h"
#include "tlm/nic.h"
#include "tlm/wake_queue.h"

namespace fabricsim::testbench {

enum class PerftestKind { write_lat, write_bw, read_lat, read_bw, send_lat, send_bw };
/// The configuration names of PerftestKind (perftest.test), perftest's program names without `ib_`.
const hw::EnumNames<PerftestKind>& perftest_kind_names();
std::string_view to_string(PerftestKind k);

struct PerftestParams {
  PerftestKind kind = PerftestKind::write_lat;
  std::vector<std::uint64_t> sizes{2};   ///< message sizes [B]
  int iterations = 100;                  ///< operations per size
  int tx_depth = 32;                     ///< outstanding operations (bw tests)
  int client = 0;                        ///< endpoint running the test
  int server = 1;                        ///< its peer
  int sl = 0;                            ///< service level of both QPs
};

class Perftest : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Perftest);
  Perftest(sc_core::sc_module_name name, tlm_fabric::Nic& client, tlm_fabric::Nic& server, const PerftestParams& params);

  bool finished() const { return finished_; }
  /// One entry per size: latency statistics [us] or bandwidth [Gb/s] and message rate.
  nlohmann::json report() const;
  /// The report in perftest's console layout.
  std::string table() const;

 private:
  struct SizeResult {
    std::uint64_t bytes;
    std::vector<double> samples_us;  // latency tests
    double seconds = 0;              // bandwidth tests
    int completed = 0;
  };
  bool latency_test() const;
  tlm_fabric::RdmaOpcode opcode() const;
  void start_size();
  void at(const sc_core::sc_time& t, int action);
  void run_actions();
  void on_client(const tlm_fabric::Completion& c);
  void on_server(const tlm_fabric::Completion& c);
  void post_client();

  tlm_fabric::Nic& client_;
  tlm_fabric::Nic& server_;
  PerftestParams params_;
  int client_qp_ = 0, server_qp_ = 0;
  std::size_t size_index_ = 0;
  int posted_ = 0;
  sc_core::sc_time iteration_start_, size_start_;
  std::vector<SizeResult> results_;
  std::vector<std::pair<sc_core::sc_time, int>> pending_;  // (when, action)
  tlm_fabric::WakeEvent wake_{[this] { run_actions(); }};  // through the WakeQueue, like the blocks
  bool finished_ = false;
};

}  // namespace fabricsim::testbench
