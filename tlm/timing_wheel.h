// A timing wheel of wake-ups: ids due at integer times (ticks), taken in (time, id)
// order. No SystemC: the wake queue keeps one per lane, in kernel time units.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fabricsim::tlm_fabric {

/// Pending entries within kSlots slots of the wheel's base sit in the wheel, each slot a
/// list of the ids due in it; later ones wait in an overflow heap and move into the wheel
/// as its base comes near. An id has at most one pending entry; `detach` turns it into
/// an entry of its own so the id can be scheduled again (docs/architecture.md,
/// "Scheduling").
class TimingWheel {
 public:
  static constexpr std::size_t kSlots = 4096;  // a power of two
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  /// A slot spans 2^slot_shift ticks.
  explicit TimingWheel(unsigned slot_shift);
  /// Ids 0 .. ids - 1 may be scheduled.
  void fit(std::size_t ids);
  bool pending(std::uint32_t id) const { return entries_[id].where != Where::none; }
  /// The time of id's pending entry.
  std::uint64_t when(std::uint32_t id) const { return entries_[id].at; }
  /// id (not pending) due at `at`, no earlier than the last time taken.
  void schedule(std::uint32_t id, std::uint64_t at);
  /// id's pending entry, if any, is gone.
  void cancel(std::uint32_t id);
  /// id's pending entry stays due, no longer id's pending one: id may be scheduled again.
  void detach(std::uint32_t id);
  /// The earliest time of any entry, if any.
  bool earliest(std::uint64_t& at) const;
  /// Appends to `out` the ids of the entries due at or before `at`, in (time, id) order,
  /// and takes them out. No entry may be due in a slot before `at`'s (take the earliest).
  void take_due(std::uint64_t at, std::vector<int>& out);
  std::uint64_t slot_of(std::uint64_t t) const { return t >> slot_shift_; }

 private:
  enum class Where : std::uint8_t { none, wheel, overflow };
  struct Entry {
    std::uint64_t at = 0;
    std::uint32_t link = kNone;  // wheel: the next id in its slot; overflow: its index in overflow_
    Where where = Where::none;
  };
  struct Due {
    std::uint64_t at;
    std::uint32_t id;
    bool pending;  // id's pending entry, not a detached one
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : id > o.id; }
  };
  std::uint32_t& slot(std::uint64_t s) { return wheel_[s & (kSlots - 1)]; }
  std::uint64_t& occupied_word(std::uint64_t s) { return occupied_[(s & (kSlots - 1)) / 64]; }
  static std::uint64_t slot_bit(std::uint64_t s) { return std::uint64_t{1} << (s & 63); }
  void mark_empty(std::uint64_t s) { occupied_word(s) &= ~slot_bit(s); }
  void unlink(std::uint32_t id);        // out of its wheel slot
  void advance(std::uint64_t to_slot);  // the base to `to_slot`, overflow entries in reach into the wheel
  void order_due(std::vector<int>& out);
  // overflow_: a 4-ary min-heap on (at, id); a pending entry's position is its Entry::link.
  void place(std::size_t i, const Due& e);
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  void erase_overflow(std::size_t i);

  std::vector<Entry> entries_;          // per id
  std::vector<std::uint32_t> wheel_;    // per slot: the first id of its list
  std::vector<std::uint64_t> occupied_; // a bit per non-empty slot
  std::vector<Due> detached_;           // detached entries of wheel slots
  std::vector<Due> overflow_;
  std::uint64_t base_ = 0;              // slot number of the wheel's first slot
  unsigned slot_shift_;
  std::vector<Due> due_;                // scratch of take_due
  std::vector<std::uint64_t> marks_;    // scratch of order_due: a bit per id, clear between calls
};

}  // namespace fabricsim::tlm_fabric
