#include "testbench/perftest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tlm/sim_time.h"

namespace fabricsim::testbench {

using sc_core::sc_time;
using tlm_fabric::Completion;
using tlm_fabric::RdmaOpcode;

namespace {
enum Action { kStartSize = 0, kClientPost = 1, kServerPost = 2 };
}

const hw::EnumNames<PerftestKind>& perftest_kind_names() {
  static const hw::EnumNames<PerftestKind> names{
      {PerftestKind::write_lat, "write_lat"}, {PerftestKind::write_bw, "write_bw"}, {PerftestKind::read_lat, "read_lat"},
      {PerftestKind::read_bw, "read_bw"},     {PerftestKind::send_lat, "send_lat"}, {PerftestKind::send_bw, "send_bw"}};
  return names;
}

std::string_view to_string(PerftestKind k) { return hw::name_of(perftest_kind_names(), k); }

Perftest::Perftest(sc_core::sc_module_name name, tlm_fabric::Nic& client, tlm_fabric::Nic& server,
                   const PerftestParams& params)
    : sc_module(name), client_(client), server_(server), params_(params) {
  client_qp_ = client_.rdma().create_qp(server_.id(), 0, params_.sl);
  server_qp_ = server_.rdma().create_qp(client_.id(), client_qp_, params_.sl);
  client_.rdma().connect(client_qp_, server_qp_);
  client_.rdma().set_completion_handler([this](const Completion& c) { on_client(c); });
  server_.rdma().set_completion_handler([this](const Completion& c) { on_server(c); });
  at(sc_core::SC_ZERO_TIME, kStartSize);
}

bool Perftest::latency_test() const {
  return params_.kind == PerftestKind::write_lat || params_.kind == PerftestKind::read_lat ||
         params_.kind == PerftestKind::send_lat;
}

RdmaOpcode Perftest::opcode() const {
  switch (params_.kind) {
    case PerftestKind::read_lat:
    case PerftestKind::read_bw: return RdmaOpcode::read;
    case PerftestKind::send_lat:
    case PerftestKind::send_bw: return RdmaOpcode::send;
    default: return RdmaOpcode::write;
  }
}

void Perftest::at(const sc_time& t, int action) {
  pending_.push_back({t, action});
  wake_.notify_at(t);
}

void Perftest::run_actions() {
  const sc_time now = tlm_fabric::sim_now();
  // Actions due now, in the order they were scheduled.
  std::vector<std::pair<sc_time, int>> due;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->first <= now) {
      due.push_back(*it);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [when, action] : due) {
    if (action == kStartSize) start_size();
    if (action == kClientPost) post_client();
    if (action == kServerPost) {
      server_.rdma().post(server_qp_, {opcode(), results_.back().bytes, 0}, now);
      server_.kick();
    }
  }
  if (!pending_.empty()) {
    sc_time next = pending_.front().first;
    for (const auto& p : pending_) next = std::min(next, p.first);
    wake_.notify_at(next);
  }
}

void Perftest::start_size() {
  if (size_index_ >= params_.sizes.size()) {
    finished_ = true;
    tlm_fabric::stop_simulation();
    return;
  }
  results_.push_back({params_.sizes[size_index_++], {}, 0, 0});
  posted_ = 0;
  size_start_ = tlm_fabric::sim_now();
  const int burst = latency_test() ? 1 : std::min(params_.tx_depth, params_.iterations);
  posted_ = burst;
  for (int i = 0; i < burst; ++i) post_client();
}

void Perftest::post_client() {
  // posted_ counts operations committed to, including those scheduled for later.
  const sc_time now = tlm_fabric::sim_now();
  iteration_start_ = now;
  client_.rdma().post(client_qp_, {opcode(), results_.back().bytes, 0}, now);
  client_.kick();
}

void Perftest::on_client(const Completion& c) {
  SizeResult& r = results_.back();
  if (latency_test()) {
    // write/send: the server's reply landed here; read: our READ completed.
    const bool reply = !c.requester && params_.kind != PerftestKind::read_lat;
    const bool read_done = c.requester && params_.kind == PerftestKind::read_lat;
    if (!reply && !read_done) return;
    const double rtt_us = (c.visible - iteration_start_).to_seconds() * 1e6;
    r.samples_us.push_back(read_done ? rtt_us : rtt_us / 2);
    ++r.completed;
    at(c.visible, r.completed < params_.iterations ? kClientPost : kStartSize);
    return;
  }
  if (!c.requester) return;
  ++r.completed;
  if (r.completed == params_.iterations) {
    r.seconds = (c.visible - size_start_).to_seconds();
    at(c.visible, kStartSize);
  } else if (posted_ < params_.iterations) {
    ++posted_;
    at(c.visible, kClientPost);
  }
}

void Perftest::on_server(const Completion& c) {
  // Ping-pong: the server answers once the client's data is visible to it.
  if (!latency_test() || c.requester || params_.kind == PerftestKind::read_lat) return;
  at(c.visible, kServerPost);
}

nlohmann::json Perftest::report() const {
  nlohmann::json out = nlohmann::json::array();
  for (const SizeResult& r : results_) {
    nlohmann::json j{{"bytes", r.bytes}, {"iterations", r.completed}};
    if (latency_test()) {
      std::vector<double> s = r.samples_us;
      std::sort(s.begin(), s.end());
      auto pct = [&](double q) {
        if (s.empty()) return 0.0;
        const std::size_t i = static_cast<std::size_t>(std::ceil(q / 100.0 * s.size()));
        return s[std::min(s.size() - 1, i == 0 ? 0 : i - 1)];
      };
      double sum = 0, sq = 0;
      for (double v : s) sum += v;
      const double mean = s.empty() ? 0 : sum / s.size();
      for (double v : s) sq += (v - mean) * (v - mean);
      j["t_min_us"] = s.empty() ? 0 : s.front();
      j["t_max_us"] = s.empty() ? 0 : s.back();
      j["t_typical_us"] = pct(50);
      j["t_avg_us"] = mean;
      j["t_stdev_us"] = s.size() > 1 ? std::sqrt(sq / (s.size() - 1)) : 0.0;
      j["p99_us"] = pct(99);
      j["p99_9_us"] = pct(99.9);
    } else {
      const double gbps = r.seconds > 0 ? r.bytes * 8.0 * r.completed / r.seconds / 1e9 : 0.0;
      j["bw_average_gbps"] = gbps;
      j["msg_rate_mpps"] = r.seconds > 0 ? r.completed / r.seconds / 1e6 : 0.0;
    }
    out.push_back(j);
  }
  return out;
}

std::string Perftest::table() const {
  std::ostringstream out;
  char line[256];
  const nlohmann::json rep = report();
  out << "---------------------------------------------------------------------------------------\n";
  out << "                    RDMA " << to_string(params_.kind) << " test (fabricsim model)\n";
  out << "---------------------------------------------------------------------------------------\n";
  if (latency_test()) {
    out << " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
           "   99% percentile[usec]   99.9% percentile[usec]\n";
    for (const auto& j : rep) {
      std::snprintf(line, sizeof line, " %-7llu %-10d %-14.2f %-14.2f %-16.2f %-14.2f %-15.2f %-22.2f %.2f\n",
                    j["bytes"].get<unsigned long long>(), j["iterations"].get<int>(), j["t_min_us"].get<double>(),
                    j["t_max_us"].get<double>(), j["t_typical_us"].get<double>(), j["t_avg_us"].get<double>(),
                    j["t_stdev_us"].get<double>(), j["p99_us"].get<double>(), j["p99_9_us"].get<double>());
      out << line;
    }
  } else {
    out << " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n";
    for (const auto& j : rep) {
      std::snprintf(line, sizeof line, " %-10llu %-14d %-18.2f %-20.2f %.6f\n", j["bytes"].get<unsigned long long>(),
                    j["iterations"].get<int>(), j["bw_average_gbps"].get<double>(), j["bw_average_gbps"].get<double>(),
                    j["msg_rate_mpps"].get<double>());
      out << line;
    }
  }
  out << "---------------------------------------------------------------------------------------\n";
  return out.str();
}

}  // namespace fabricsim::testbench
