// The timing wheel (tlm/timing_wheel.h).
#include "tlm/timing_wheel.h"

#include <algorithm>
#include <utility>

namespace fabricsim::tlm_fabric {

TimingWheel::TimingWheel(unsigned slot_shift)
    : wheel_(kSlots, kNone), occupied_(kSlots / 64, 0), slot_shift_(slot_shift) {}

void TimingWheel::fit(std::size_t ids) {
  if (ids > entries_.size()) entries_.resize(ids);
  marks_.resize((entries_.size() + 63) / 64, 0);
}

void TimingWheel::schedule(std::uint32_t id, std::uint64_t at) {
  Entry& e = entries_[id];
  e.at = at;
  const std::uint64_t s = slot_of(at);
  if (s < base_ + kSlots) {
    std::uint32_t& head = slot(s);
    e.where = Where::wheel;
    e.link = head;
    head = id;
    occupied_word(s) |= slot_bit(s);
    return;
  }
  e.where = Where::overflow;
  overflow_.push_back({at, id, true});
  sift_up(overflow_.size() - 1);
}

void TimingWheel::cancel(std::uint32_t id) {
  const Entry& e = entries_[id];
  if (e.where == Where::wheel) unlink(id);
  else if (e.where == Where::overflow) erase_overflow(e.link);
}

void TimingWheel::detach(std::uint32_t id) {
  Entry& e = entries_[id];
  if (e.where == Where::wheel) {
    unlink(id);
    detached_.push_back({e.at, id, false});
  } else if (e.where == Where::overflow) {
    overflow_[e.link].pending = false;
    e.where = Where::none;
  }
}

void TimingWheel::unlink(std::uint32_t id) {
  Entry& e = entries_[id];
  const std::uint64_t s = slot_of(e.at);
  std::uint32_t* link = &slot(s);
  while (*link != id) link = &entries_[*link].link;
  *link = e.link;
  e.where = Where::none;
  if (slot(s) == kNone) mark_empty(s);
}

void TimingWheel::advance(std::uint64_t to_slot) {
  if (to_slot <= base_) return;
  base_ = to_slot;
  while (!overflow_.empty() && slot_of(overflow_.front().at) < base_ + kSlots) {
    const Due e = overflow_.front();
    erase_overflow(0);
    if (e.pending) schedule(e.id, e.at);
    else detached_.push_back(e);
  }
}

bool TimingWheel::earliest(std::uint64_t& at) const {
  bool have = !overflow_.empty();
  if (have) at = overflow_.front().at;
  for (const Due& e : detached_)
    if (!have || e.at < at) {
      at = e.at;
      have = true;
    }
  // The first occupied slot from the base on (cyclically), and the earliest entry in it.
  const std::size_t words = kSlots / 64, first = static_cast<std::size_t>(base_ & (kSlots - 1));
  for (std::size_t k = 0; k <= words; ++k) {
    const std::size_t w = (first / 64 + k) % words;
    std::uint64_t bits = occupied_[w];
    if (k == 0) bits &= ~std::uint64_t{0} << (first & 63);  // from the base on (k == words: the rest of that word)
    if (!bits) continue;
    for (std::uint32_t c = wheel_[w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))]; c != kNone;
         c = entries_[c].link)
      if (!have || entries_[c].at < at) {
        at = entries_[c].at;
        have = true;
      }
    break;
  }
  return have;
}

void TimingWheel::take_due(std::uint64_t at, std::vector<int>& out) {
  const std::uint64_t s = slot_of(at);
  advance(s);
  due_.clear();
  if (!detached_.empty()) {
    std::size_t kept = 0;
    for (const Due& e : detached_) {
      if (e.at <= at) due_.push_back(e);
      else detached_[kept++] = e;
    }
    detached_.resize(kept);
  }
  for (std::uint32_t* link = &slot(s); *link != kNone;) {
    Entry& e = entries_[*link];
    if (e.at <= at) {
      due_.push_back({e.at, *link, true});
      e.where = Where::none;
      *link = e.link;
    } else {
      link = &e.link;
    }
  }
  if (slot(s) == kNone) mark_empty(s);
  if (due_.size() == 1) out.push_back(static_cast<int>(due_[0].id));  // one id: nothing to order
  else if (!due_.empty()) order_due(out);
}

void TimingWheel::order_due(std::vector<int>& out) {
  // Entries due together are nearly always for one instant, one per id: a bitmap over
  // the ids orders them in one pass. Where it would be long for the few due, sort.
  bool by_bitmap = due_.size() >= 8 && marks_.size() <= 8 * due_.size();
  for (std::size_t i = 1; by_bitmap && i < due_.size(); ++i) by_bitmap = due_[i].at == due_[0].at;
  if (by_bitmap) {
    const std::size_t first = out.size();
    for (const Due& d : due_) {
      std::uint64_t& word = marks_[d.id / 64];
      const std::uint64_t bit = std::uint64_t{1} << (d.id & 63);
      by_bitmap = by_bitmap && !(word & bit);  // an id twice (a detached entry and its new one): sort instead
      word |= bit;
    }
    for (std::size_t w = 0; w < marks_.size(); ++w) {
      for (std::uint64_t bits = marks_[w]; bits; bits &= bits - 1)
        if (by_bitmap) out.push_back(static_cast<int>(w * 64) + __builtin_ctzll(bits));
      marks_[w] = 0;
    }
    if (by_bitmap) return;
    out.resize(first);
  }
  // Mostly one or two entries: an insertion sort, where std::sort's set-up costs more.
  if (due_.size() <= 16) {
    for (std::size_t i = 1; i < due_.size(); ++i)
      for (std::size_t j = i; j > 0 && due_[j - 1] > due_[j]; --j) std::swap(due_[j - 1], due_[j]);
  } else {
    std::sort(due_.begin(), due_.end(), [](const Due& a, const Due& b) { return b > a; });
  }
  for (const Due& d : due_) out.push_back(static_cast<int>(d.id));
}

// The overflow heap is 4-ary: half the levels of a binary one, and a node's four
// children share a cache line or two.
void TimingWheel::place(std::size_t i, const Due& e) {
  overflow_[i] = e;
  if (e.pending) entries_[e.id].link = static_cast<std::uint32_t>(i);
}

void TimingWheel::sift_up(std::size_t i) {
  const Due e = overflow_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!(overflow_[parent] > e)) break;
    place(i, overflow_[parent]);
    i = parent;
  }
  place(i, e);
}

void TimingWheel::sift_down(std::size_t i) {
  const Due e = overflow_[i];
  const std::size_t n = overflow_.size();
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t least = first;
    for (std::size_t c = first + 1; c < first + 4 && c < n; ++c)
      if (overflow_[least] > overflow_[c]) least = c;
    if (!(e > overflow_[least])) break;
    place(i, overflow_[least]);
    i = least;
  }
  place(i, e);
}

void TimingWheel::erase_overflow(std::size_t i) {
  if (overflow_[i].pending) entries_[overflow_[i].id].where = Where::none;
  const Due last = overflow_.back();
  overflow_.pop_back();
  if (i == overflow_.size()) return;
  place(i, last);
  if (i > 0 && overflow_[(i - 1) / 4] > last) sift_up(i);
  else sift_down(i);
}

}  // namespace fabricsim::tlm_fabric
