#include "hw/egress_scheduler.h"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <string>

namespace fabricsim::hw {

namespace {

// IBTA vol.1 §7.6.9 / §14.2.5.9 (VLArbitrationTable, PortInfo.VLHighLimit) limits.
constexpr int kMaxDataVls = 15;
constexpr std::size_t kMaxTableEntries = 64;
constexpr int kMaxVlWeight = 255;
constexpr int kUnlimitedHighLimit = 255;
constexpr std::int64_t kWeightUnitBytes = 64;          // weights and the high limit count 64-B units
constexpr std::int64_t kHighLimitUnitBlocks = 4096 / kWeightUnitBytes;  // one high_limit unit

// 802.1Q supports up to 8 traffic classes per port.
constexpr int kMaxTrafficClasses = 8;
constexpr int kMaxDwrrWeight = 127;

std::int64_t blocks_of(std::uint32_t bytes) {
  return (static_cast<std::int64_t>(bytes) + kWeightUnitBytes - 1) / kWeightUnitBytes;
}

void check_heads(const std::vector<std::uint32_t>& head_bytes, int classes, const char* who) {
  if (static_cast<int>(head_bytes.size()) != classes)
    throw std::invalid_argument(std::string(who) + ": head_bytes has " +
                                std::to_string(head_bytes.size()) + " entries, expected " +
                                std::to_string(classes));
}

void check_commit(bool valid, int selected, int c, std::uint32_t bytes, const char* who) {
  if (bytes == 0) throw std::invalid_argument(std::string(who) + ": a packet has at least 1 byte");
  if (!valid || c != selected)
    throw std::logic_error(std::string(who) + ": update_state(" + std::to_string(c) +
                           ") does not commit the last select() (" +
                           (valid ? std::to_string(selected) : std::string("none")) + ")");
}

void check_table(const std::vector<VlArbEntry>& table, const char* name, int vls) {
  if (table.size() > kMaxTableEntries)
    throw std::invalid_argument(std::string("IbVlArbParams.") + name + " has " +
                                std::to_string(table.size()) + " entries, at most 64");
  for (std::size_t i = 0; i < table.size(); ++i) {
    const std::string field = std::string("IbVlArbParams.") + name + "[" + std::to_string(i) + "]";
    if (table[i].vl < 0 || table[i].vl >= vls)
      throw std::invalid_argument(field + ".vl = " + std::to_string(table[i].vl) +
                                  " outside 0..vls-1 (vls = " + std::to_string(vls) + ")");
    if (table[i].weight < 0 || table[i].weight > kMaxVlWeight)
      throw std::invalid_argument(field + ".weight = " + std::to_string(table[i].weight) +
                                  " outside 0..255 (units of 64 bytes, 0 = unused)");
  }
}

bool has_live_entry(const std::vector<VlArbEntry>& table) {
  return std::any_of(table.begin(), table.end(), [](const VlArbEntry& e) { return e.weight > 0; });
}

// ---------------------------------------------------------------------------------------------
// IB VL arbiter (IBTA vol.1 §7.6.9).
class IbVlArbiter final : public EgressScheduler {
 public:
  explicit IbVlArbiter(const IbVlArbParams& p) : vls_(p.vls), high_limit_(p.high_limit) {
    p.validate();
    high_.entries = p.high;
    low_.entries = p.low;
    for (Table* t : {&high_, &low_})
      t->remaining = t->entries.empty() ? 0 : t->entries.front().weight;
  }

  int select(const std::vector<std::uint32_t>& head_bytes) const override {
    check_heads(head_bytes, vls_, "IB VL arbiter");
    const int h = scan(high_, head_bytes);
    const int l = scan(low_, head_bytes);
    last_ = Decision{};
    if (h < 0 && l < 0) return kNoClass;
    // High-priority limit: once more than high_limit x 4 KiB went out while low waited, one
    // low-priority packet is owed (IBTA: "the last packet may overrun the limit").
    const bool low_owed = l >= 0 && high_limit_ != kUnlimitedHighLimit &&
                          high_blocks_ > high_limit_ * kHighLimitUnitBlocks;
    if (h >= 0 && !low_owed)
      last_ = Decision{true, high_.entries[h].vl, true, h, l >= 0};
    else
      last_ = Decision{true, low_.entries[l].vl, false, l, true};
    return last_.vl;
  }

  void update_state(int c, std::uint32_t bytes) override {
    check_commit(last_.valid, last_.vl, c, bytes, "IB VL arbiter");
    const std::int64_t blocks = blocks_of(bytes);
    Table& t = last_.high ? high_ : low_;
    // Moving to a later entry forfeits what was left of the current one and loads a full weight.
    if (last_.entry != t.idx) {
      t.idx = last_.entry;
      t.remaining = t.entries[t.idx].weight;
    }
    t.remaining -= blocks;  // a packet may overdraw the entry
    if (t.remaining <= 0) {
      t.idx = t.idx + 1 == static_cast<int>(t.entries.size()) ? 0 : t.idx + 1;
      t.remaining = t.entries[t.idx].weight;
    }
    // Only high-priority traffic sent while low had something ready counts against the limit;
    // any low-priority packet (or an idle low table) clears it.
    if (last_.high && last_.low_ready)
      high_blocks_ = std::min(high_blocks_ + blocks, kHighBlocksMax);
    else
      high_blocks_ = 0;
    last_ = Decision{};
  }

  int classes() const override { return vls_; }

  /// Entry index and weight left per table, and the high-limit count: the RTL twin's
  /// dbg_{high,low}_{idx,left}_o and dbg_high_blocks_o.
  void debug_state(std::vector<StateVector>& out) const override {
    out.resize(5);
    auto put = [&out](std::size_t k, const char* name, int bits, std::int64_t v) {
      out[k].name = name;
      out[k].bits = bits;
      out[k].values.assign(1, static_cast<std::uint64_t>(v));
    };
    put(0, "high_entry", 8, high_.idx);
    put(1, "high_left", 8, high_.remaining);
    put(2, "low_entry", 8, low_.idx);
    put(3, "low_left", 8, low_.remaining);
    put(4, "high_blocks", 16, high_blocks_);
  }

 private:
  // The high-limit count saturates (a 16-bit register in hardware): the largest finite
  // limit, 254 x 64 blocks, is far below, so no decision depends on the cap.
  static constexpr std::int64_t kHighBlocksMax = 65535;

  struct Table {
    std::vector<VlArbEntry> entries;
    int idx = 0;                 // entry being served
    std::int64_t remaining = 0;  // its remaining weight, 64-B units
  };
  struct Decision {
    bool valid = false;
    int vl = kNoClass;
    bool high = false;       // chosen from the high-priority table
    int entry = 0;           // table entry that sends
    bool low_ready = false;  // low table had an eligible entry when decided
  };

  // First entry, from the current one on, with weight left and a VL that has a packet ready.
  static int scan(const Table& t, const std::vector<std::uint32_t>& head_bytes) {
    const int n = static_cast<int>(t.entries.size());
    for (int k = 0, i = t.idx; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
      const std::int64_t budget = k == 0 ? t.remaining : t.entries[i].weight;
      if (budget > 0 && head_bytes[t.entries[i].vl] > 0) return i;
    }
    return -1;
  }

  int vls_;
  std::int64_t high_limit_;
  Table high_;
  Table low_;
  std::int64_t high_blocks_ = 0;  // high-priority 64-B blocks sent while low was ready
  mutable Decision last_;
};

// ---------------------------------------------------------------------------------------------
// Strict priority + DWRR (IEEE 802.1Q §8.6.8; Shreedhar & Varghese 1995).
class TcScheduler final : public EgressScheduler {
 public:
  explicit TcScheduler(const TcSchedulerParams& p) : n_(p.classes) {
    p.validate();
    strict_ = p.strict.empty() ? std::vector<bool>(n_, false) : p.strict;
    quantum_.resize(n_);
    for (int c = 0; c < n_; ++c)
      quantum_[c] = static_cast<std::uint64_t>(p.weights.empty() ? 1 : p.weights[c]) * p.quantum_bytes;
  }

  int select(const std::vector<std::uint32_t>& head_bytes) const override {
    check_heads(head_bytes, n_, "traffic-class scheduler");
    last_ = Decision{};
    for (int c = n_ - 1; c >= 0; --c)
      if (strict_[c] && head_bytes[c] > 0) return decide(c, true, state_);

    bool any = false;
    for (int c = 0; c < n_; ++c) any = any || (!strict_[c] && head_bytes[c] > 0);
    if (!any) return kNoClass;

    Dwrr s = state_;
    // Finish the visit in progress: keep sending while the deficit covers the head packet.
    if (s.in_visit) {
      const int i = s.ptr;
      if (head_bytes[i] > 0 && head_bytes[i] <= s.deficit[i]) return decide(i, false, s);
      if (head_bytes[i] == 0) s.deficit[i] = 0;  // queue emptied: no banking (S&V)
      s.ptr = (i + 1) % n_;
      s.in_visit = false;
    }
    for (;;) {
      // One round: every backlogged class gets its quantum once, in index order.
      for (int step = 0; step < n_; ++step) {
        const int i = s.ptr;
        if (!strict_[i]) {
          if (head_bytes[i] == 0) {
            s.deficit[i] = 0;
          } else {
            s.deficit[i] += quantum_[i];
            if (head_bytes[i] <= s.deficit[i]) {
              s.in_visit = true;
              return decide(i, false, s);
            }
          }
        }
        s.ptr = (i + 1) % n_;
      }
      // Nobody could send (head packets larger than the quanta): skip the rounds in which every
      // backlogged class would only accumulate, so the cost does not grow with packet/quantum.
      std::uint64_t skip = std::numeric_limits<std::uint64_t>::max();
      for (int c = 0; c < n_; ++c) {
        if (strict_[c] || head_bytes[c] == 0) continue;
        const std::uint64_t need = head_bytes[c] - s.deficit[c];  // > 0 after a failed round
        skip = std::min(skip, (need + quantum_[c] - 1) / quantum_[c] - 1);
      }
      for (int c = 0; c < n_; ++c)
        if (!strict_[c] && head_bytes[c] > 0) s.deficit[c] += skip * quantum_[c];
    }
  }

  void update_state(int c, std::uint32_t bytes) override {
    check_commit(last_.valid, last_.cls, c, bytes, "traffic-class scheduler");
    if (!last_.strict) {
      state_ = last_.after;
      state_.deficit[c] -= std::min<std::uint64_t>(bytes, state_.deficit[c]);
    }
    last_ = Decision{};
  }

  int classes() const override { return n_; }

 private:
  struct Dwrr {
    int ptr = 0;            // class being visited
    bool in_visit = false;  // ptr already received its quantum in this visit
    std::array<std::uint64_t, kMaxTrafficClasses> deficit{};
  };
  struct Decision {
    bool valid = false;
    int cls = kNoClass;
    bool strict = false;
    Dwrr after;  // DWRR state once the chosen packet starts (before charging it)
  };

  int decide(int c, bool strict, const Dwrr& after) const {
    last_ = Decision{true, c, strict, after};
    return c;
  }

  int n_;
  std::vector<bool> strict_;
  std::vector<std::uint64_t> quantum_;  // bytes per round
  Dwrr state_;
  mutable Decision last_;
};

}  // namespace

void IbVlArbParams::validate() const {
  if (vls < 1 || vls > kMaxDataVls)
    throw std::invalid_argument("IbVlArbParams.vls = " + std::to_string(vls) +
                                " outside 1..15 (data VLs; VL15 is management)");
  check_table(high, "high", vls);
  check_table(low, "low", vls);
  if (high_limit < 0 || high_limit > kUnlimitedHighLimit)
    throw std::invalid_argument("IbVlArbParams.high_limit = " + std::to_string(high_limit) +
                                " outside 0..255 (4 KiB units, 255 = unlimited)");
  if (!has_live_entry(high) && !has_live_entry(low))
    throw std::invalid_argument(
        "IbVlArbParams.high/low: no entry with weight > 0, no VL could ever be served");
}

std::unique_ptr<EgressScheduler> make_ib_vl_arbiter(const IbVlArbParams& p) {
  return std::make_unique<IbVlArbiter>(p);
}

void TcSchedulerParams::validate() const {
  if (classes < 1 || classes > kMaxTrafficClasses)
    throw std::invalid_argument("TcSchedulerParams.classes = " + std::to_string(classes) +
                                " outside 1..8");
  if (!strict.empty() && static_cast<int>(strict.size()) != classes)
    throw std::invalid_argument("TcSchedulerParams.strict has " + std::to_string(strict.size()) +
                                " entries, expected 0 or classes = " + std::to_string(classes));
  if (!weights.empty() && static_cast<int>(weights.size()) != classes)
    throw std::invalid_argument("TcSchedulerParams.weights has " + std::to_string(weights.size()) +
                                " entries, expected 0 or classes = " + std::to_string(classes));
  for (std::size_t c = 0; c < weights.size(); ++c)
    if (weights[c] < 1 || weights[c] > kMaxDwrrWeight)
      throw std::invalid_argument("TcSchedulerParams.weights[" + std::to_string(c) +
                                  "] = " + std::to_string(weights[c]) + " outside 1..127");
  if (quantum_bytes == 0)
    throw std::invalid_argument("TcSchedulerParams.quantum_bytes must be positive");
}

std::unique_ptr<EgressScheduler> make_tc_scheduler(const TcSchedulerParams& p) {
  return std::make_unique<TcScheduler>(p);
}

}  // namespace fabricsim::hw
