// Cycle steppers around the hw/ cores for the shared RTL test vectors: each
// takes one cycle's "in" object of a vector file and returns its "out" object,
// with the same per-cycle protocol the RTL twin follows (outputs from the state
// before the clock edge, then the edge commits). Used by the vector generator
// (gen_vectors.cpp) to write the expected outputs and by
// tests/test_rtl_vectors.cpp to check the hw core and the RTL against them.
// The JSON layout of every block is documented in testbench/vectors/README.md.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/allocator.h"
#include "hw/arbiter.h"
#include "hw/credit.h"
#include "hw/egress_scheduler.h"
#include "hw/packet_fifo.h"

namespace fabricsim::vectors {

using nlohmann::json;

/// One block's hw core driven one clock cycle at a time.
class RefModel {
 public:
  virtual ~RefModel() = default;
  /// Applies one cycle: returns the outputs seen before the clock edge, then commits the edge.
  virtual json step(const json& in) = 0;
};

/// rr_arbiter: hw::RoundRobinArbiter. in {"req": [requesters], "update": bool};
/// out {"grant": index or -1, "pointer": highest-priority requester this cycle}.
class RrArbiterRef final : public RefModel {
 public:
  explicit RrArbiterRef(const json& params) : arb_(params.at("requesters").get<int>()) {}
  json step(const json& in) override {
    arb_.clear();
    for (int r : in.at("req")) arb_.add_request(hw::ArbiterRequest{r, 0, 0});
    const int grant = arb_.arbitrate();
    json out{{"grant", grant}, {"pointer", arb_.pointer()}};
    if (in.at("update").get<bool>()) arb_.update_state(grant);
    return out;
  }

 private:
  hw::RoundRobinArbiter arb_;
};

/// islip_allocator: hw "islip" allocator. in {"req": [[outputs of input 0], ...], "update": bool};
/// out {"grant": [output matched to input i, or -1]}.
class IslipRef final : public RefModel {
 public:
  explicit IslipRef(const json& params)
      : inputs_(params.at("inputs").get<int>()),
        alloc_(hw::make_allocator("islip", hw::AllocatorParams{inputs_, params.at("outputs").get<int>(),
                                                               params.at("iterations").get<int>(), 1})) {}
  json step(const json& in) override {
    alloc_->clear();
    const json& req = in.at("req");
    for (int i = 0; i < static_cast<int>(req.size()); ++i)
      for (int o : req[i]) alloc_->add_request(hw::AllocRequest{i, o, 0, 0});
    std::vector<int> grant(inputs_, -1);
    for (const auto& g : alloc_->arbitrate()) grant[g.input] = g.output;
    if (in.at("update").get<bool>()) alloc_->update_state();
    return json{{"grant", grant}};
  }

 private:
  int inputs_;
  std::unique_ptr<hw::SwitchAllocator> alloc_;
};

/// credit_manager: one hw::CreditCounter per VL. in {"head_bytes": [per VL], "consume": {"vl",
/// "bytes"} (optional), "restore": {"vl", "blocks"} (optional)}; out {"can_send": [per VL],
/// "available": [per VL, before this cycle's events], "underflow": bool, "overflow": bool}.
/// Consume is applied before restore; a refused one (the core throws) raises its flag.
class CreditManagerRef final : public RefModel {
 public:
  explicit CreditManagerRef(const json& params) {
    const auto block = params.at("block_bytes").get<std::uint32_t>();
    for (const auto& cap : params.at("capacity_blocks")) vl_.emplace_back(block, cap.get<std::uint64_t>());
  }
  json step(const json& in) override {
    json out;
    const json& heads = in.at("head_bytes");
    for (std::size_t v = 0; v < vl_.size(); ++v) {
      out["can_send"].push_back(vl_[v].can_send(heads.at(v).get<std::uint64_t>()));
      out["available"].push_back(vl_[v].available());
    }
    out["underflow"] = false;
    out["overflow"] = false;
    if (in.contains("consume")) {
      try {
        vl_.at(in["consume"].at("vl").get<std::size_t>()).consume(in["consume"].at("bytes").get<std::uint64_t>());
      } catch (const std::logic_error&) {
        out["underflow"] = true;
      }
    }
    if (in.contains("restore")) {
      try {
        vl_.at(in["restore"].at("vl").get<std::size_t>()).restore(in["restore"].at("blocks").get<std::uint64_t>());
      } catch (const std::logic_error&) {
        out["overflow"] = true;
      }
    }
    return out;
  }

 private:
  std::vector<hw::CreditCounter> vl_;
};

/// Parses the "high"/"low" table of a vl_arbiter vector file: [[vl, weight], ...].
inline std::vector<hw::VlArbEntry> vl_table(const json& t) {
  std::vector<hw::VlArbEntry> entries;
  for (const auto& e : t) entries.push_back(hw::VlArbEntry{e.at(0).get<int>(), e.at(1).get<int>()});
  return entries;
}

/// vl_arbiter: hw::make_ib_vl_arbiter. params {"vls", "high": [[vl, weight]...], "low": [...],
/// "high_limit"}; in {"head_bytes": [per VL, 0 = nothing eligible], "update": bool};
/// out {"vl": selected VL or -1}. The update commits the selected VL's head packet.
class VlArbiterRef final : public RefModel {
 public:
  explicit VlArbiterRef(const json& params) {
    hw::IbVlArbParams p;
    p.vls = params.at("vls").get<int>();
    p.high = vl_table(params.at("high"));
    p.low = vl_table(params.at("low"));
    p.high_limit = params.at("high_limit").get<int>();
    arb_ = hw::make_ib_vl_arbiter(p);
  }
  json step(const json& in) override {
    const auto heads = in.at("head_bytes").get<std::vector<std::uint32_t>>();
    const int vl = arb_->select(heads);
    if (in.at("update").get<bool>() && vl != hw::kNoClass) arb_->update_state(vl, heads[vl]);
    return json{{"vl", vl}};
  }

 private:
  std::unique_ptr<hw::EgressScheduler> arb_;
};

/// packet_fifo: hw::PacketFifo. in {"saf": bool, "wr": {"data", "last"} (optional),
/// "rd_ready": bool}; out {"wr_ready", "rd_valid", "rd_data" and "rd_last" (only when
/// rd_valid), "words", "packets"}.
class PacketFifoRef final : public RefModel {
 public:
  explicit PacketFifoRef(const json& params)
      : fifo_(hw::PacketFifoParams{params.at("depth_words").get<std::size_t>(), hw::FifoMode::kCutThrough}) {}
  json step(const json& in) override {
    fifo_.set_mode(in.at("saf").get<bool>() ? hw::FifoMode::kStoreAndForward : hw::FifoMode::kCutThrough);
    const bool wr_ready = fifo_.can_push();
    const bool rd_valid = fifo_.can_pop();
    json out{{"wr_ready", wr_ready}, {"rd_valid", rd_valid}};
    if (rd_valid) {
      out["rd_data"] = fifo_.front().data;
      out["rd_last"] = fifo_.front().last;
    }
    out["words"] = fifo_.words();
    out["packets"] = fifo_.packets();
    if (rd_valid && in.at("rd_ready").get<bool>()) fifo_.pop();
    if (wr_ready && in.contains("wr"))
      fifo_.push(hw::FifoWord{in["wr"].at("data").get<std::uint64_t>(), in["wr"].at("last").get<bool>()});
    return out;
  }

 private:
  hw::PacketFifo fifo_;
};

/// The stepper for a vector file's "block" with its "params"; throws for an unknown block.
inline std::unique_ptr<RefModel> make_ref_model(const std::string& block, const json& params) {
  if (block == "rr_arbiter") return std::make_unique<RrArbiterRef>(params);
  if (block == "islip_allocator") return std::make_unique<IslipRef>(params);
  if (block == "credit_manager") return std::make_unique<CreditManagerRef>(params);
  if (block == "vl_arbiter") return std::make_unique<VlArbiterRef>(params);
  if (block == "packet_fifo") return std::make_unique<PacketFifoRef>(params);
  throw std::invalid_argument("unknown vector block '" + block +
                              "'; valid: rr_arbiter, islip_allocator, credit_manager, vl_arbiter, packet_fifo");
}

}  // namespace fabricsim::vectors
