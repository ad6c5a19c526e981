// Switch: the input FIFO cores (buffer organisation input_fifo), one hw::PacketFifo per
// input and VL in buffer cells. Admission asks the cores for room; a packet's head word
// is written at its admission (cut-through may read it from there), the rest with its
// last word once its tail is in; a grant checks the core shows the packet at its head,
// readable; the release pops the packet once its tail has left the buffer.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "tlm/sim_time.h"
#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

void Switch::make_input_fifos() {
  input_fifo_cells_ = params_.input_buffer.in_bytes() / params_.cell_bytes;
  input_fifo_bytes_ = input_fifo_cells_ * params_.cell_bytes;
  const hw::FifoMode mode = params_.forwarding == ForwardingMode::store_and_forward ? hw::FifoMode::kStoreAndForward
                                                                                    : hw::FifoMode::kCutThrough;
  // Each VL may fill the input's buffer; admission bounds their sum.
  const hw::PacketFifoParams p{std::max<std::size_t>(input_fifo_cells_, 2), mode};
  input_fifos_.assign(static_cast<std::size_t>(params_.ports) * params_.vls, sw::InputFifo(p));
}

void Switch::size_input_fifos_for_credits(int port) {
  // Credits admit up to the input buffer in credit blocks, each frame in whole cells: a
  // frame of b blocks takes at most b x ceil(block / cell) cells.
  const std::uint64_t block = params_.credit_block_bytes, cell = params_.cell_bytes;
  const std::uint64_t words = std::max<std::uint64_t>(input_fifo_cells_, params_.input_buffer.in_bytes() / block * ((block + cell - 1) / cell));
  const hw::PacketFifoParams p{std::clamp<std::size_t>(words, 2, hw::kMaxFifoDepthWords), input_fifo(port, 0).core.mode()};
  for (int vl = 0; vl < params_.vls; ++vl) input_fifo(port, vl) = sw::InputFifo(p);
}

void Switch::input_fifo_fault(int in_port, int vl, const sc_time& at, sw::FifoFault fault, std::uint64_t a,
                              std::uint64_t b) const {
  const auto n = [](std::uint64_t v) { return std::to_string(v); };
  const hw::PacketFifo& core = input_fifo(in_port, vl).core;
  const std::string held = " (" + n(core.words()) + " words, " + n(core.packets()) + " packets held)";
  std::string what;
  switch (fault) {
    case sw::FifoFault::count: what = "the cores hold " + n(a) + " cells, the input counts " + n(b) + " bytes"; break;
    case sw::FifoFault::overflow: what = "no room for " + n(b) + " words of packet " + n(a) + held; break;
    case sw::FifoFault::unreadable: what = "packet " + n(a) + " granted while the core cannot read it" + held; break;
    case sw::FifoFault::other_head: what = "packet " + n(a) + " granted, packet " + n(b) + " at the core's head"; break;
    case sw::FifoFault::nothing_read: what = "a release with no packet read"; break;
    case sw::FifoFault::tail_missing: what = "the packet read left before the core holds all of it" + held; break;
    case sw::FifoFault::words: what = "the packet read held " + n(a) + " words for " + n(b) + " bytes charged"; break;
  }
  throw std::logic_error(std::string(name()) + ": input FIFO of port " + n(in_port) + " VL " + n(vl) + " at " +
                         at.to_string() + ": " + what);
}

bool Switch::input_fifo_has_room(const Entry& e) const {
  // Admission reserves a packet's cells: the words held and those still arriving.
  std::uint64_t held = 0;
  const sw::InputFifo* f = &input_fifo(e.in, 0);
  for (int vl = 0; vl < params_.vls; ++vl, ++f) held += f->core.words() + f->tail_words;
  const std::uint64_t held_bytes = held * params_.cell_bytes;
  if (held_bytes != inputs_[e.in].bytes)
    input_fifo_fault(e.in, e.vl, sim_now(), sw::FifoFault::count, held, inputs_[e.in].bytes);
  return held_bytes + e.charged <= input_fifo_bytes_;
}

void Switch::input_fifo_admit(const Entry& e, const sc_time& at) {
  sw::InputFifo& f = input_fifo(e.in, e.vl);
  const auto words = static_cast<std::uint32_t>(e.charged / params_.cell_bytes);
  const std::uint64_t id = e.packet->id;
  // Store-and-forward needs only the last word; a one-word packet's head is its last.
  const std::uint32_t head = words > 1 || f.core.mode() == hw::FifoMode::kCutThrough ? 1 : 0;
  // The packet before it on this VL has its tail in: its header came after that tail.
  if (!f.core.can_push(f.tail_words + head)) input_fifo_fault(e.in, e.vl, at, sw::FifoFault::overflow, id, words);
  if (f.tail_words > 0) f.core.push_words(f.tail_words, f.tail_id, true);
  f.core.push_words(head, id, head == words);
  f.tail_words = words - head;
  f.tail_id = id;
  f.tail_at = e.tail_at;
}

void Switch::input_fifo_write_tail(sw::InputFifo& f, int in_port, int vl) {
  if (!f.core.can_push(f.tail_words))
    input_fifo_fault(in_port, vl, f.tail_at, sw::FifoFault::overflow, f.tail_id, f.tail_words);
  f.core.push_words(f.tail_words, f.tail_id, true);
  f.tail_words = 0;
}

void Switch::input_fifo_check_head(sw::InputFifo& f, std::uint64_t id, int in_port, int vl, const sc_time& at) {
  input_fifo_sync(f, in_port, vl, at);
  if (!f.core.can_pop()) input_fifo_fault(in_port, vl, at, sw::FifoFault::unreadable, id, 0);
  const std::uint64_t head = f.core.front().data;
  if (head != id) input_fifo_fault(in_port, vl, at, sw::FifoFault::other_head, id, head);
  f.reading = true;
}

void Switch::input_fifo_grant(const Entry& e, const sc_time& now) {
  sw::InputFifo& f = input_fifo(e.in, e.vl);
  if (!f.reading) {
    input_fifo_check_head(f, e.packet->id, e.in, e.vl, now);
    return;
  }
  // A packet ahead still leaves: the core shows this one once that one has left.
  if (f.first_waiting >= 16) {  // a FIFO that never drains: drop the ids checked
    f.waiting.erase(f.waiting.begin(), f.waiting.begin() + f.first_waiting);
    f.first_waiting = 0;
  }
  f.waiting.push_back(e.packet->id);
}

void Switch::input_fifo_release(const Release& r) {
  sw::InputFifo& f = input_fifo(r.in, r.queue_vl);
  input_fifo_sync(f, r.in, r.queue_vl, r.at);
  if (!f.reading) input_fifo_fault(r.in, r.queue_vl, r.at, sw::FifoFault::nothing_read, 0, 0);
  // The packet read is at the core's head (checked at its grant): its last word must be in.
  if (f.core.packets() == 0) input_fifo_fault(r.in, r.queue_vl, r.at, sw::FifoFault::tail_missing, 0, 0);
  const std::size_t words = f.core.pop_packet();
  if (words * params_.cell_bytes != r.charged)
    input_fifo_fault(r.in, r.queue_vl, r.at, sw::FifoFault::words, words, r.charged);
  f.reading = false;
  if (f.first_waiting == f.waiting.size()) return;
  const std::uint64_t next = f.waiting[f.first_waiting++];
  if (f.first_waiting == f.waiting.size()) {
    f.waiting.clear();
    f.first_waiting = 0;
  }
  input_fifo_check_head(f, next, r.in, r.queue_vl, r.at);
}

}  // namespace fabricsim::tlm_fabric
