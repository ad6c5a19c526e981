// Switch: the input FIFO cores (buffer organisation input_fifo), one hw::PacketFifo per
// input and VL in buffer cells, or its RTL twin (switch.input_fifo_impl). Admission asks
// the FIFOs for room; a packet's head word is written at its admission (cut-through may
// read it from there), the rest with its last word once its tail is in; a grant checks
// the FIFO shows the packet at its head, readable; the release pops the packet once its
// tail has left the buffer.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "tlm/sim_time.h"
#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

std::uint64_t Switch::input_fifo_depth(const SwitchParams& p, bool credit_links) {
  // Each VL may fill the input's buffer; admission bounds their sum.
  const std::uint64_t cells = p.input_buffer.in_bytes() / p.cell_bytes;
  // Credits admit up to the input buffer in credit blocks, each frame in whole cells: a
  // frame of b blocks takes at most b x ceil(block / cell) cells.
  const std::uint64_t block = p.credit_block_bytes, cell = p.cell_bytes;
  const std::uint64_t words =
      credit_links ? std::max<std::uint64_t>(cells, p.input_buffer.in_bytes() / block * ((block + cell - 1) / cell)) : cells;
  return std::clamp<std::uint64_t>(words, 2, hw::kMaxFifoDepthWords);
}

void Switch::make_input_fifos() {
  input_fifo_cells_ = params_.input_buffer.in_bytes() / params_.cell_bytes;
  input_fifo_bytes_ = input_fifo_cells_ * params_.cell_bytes;
  // Each input's cores read as its forwarding mode does: store-and-forward only where
  // every packet waits for its tail.
  input_fifos_.clear();
  input_fifos_.reserve(static_cast<std::size_t>(params_.ports) * params_.vls);
  const std::uint64_t depth = input_fifo_depth(params_, false);
  for (int port = 0; port < params_.ports; ++port) {
    const bool saf = params_.forwarding_of(port) == ForwardingMode::store_and_forward;
    const hw::PacketFifoParams p{depth, saf ? hw::FifoMode::kStoreAndForward : hw::FifoMode::kCutThrough};
    for (int vl = 0; vl < params_.vls; ++vl) input_fifos_.emplace_back(p);
  }
}

void Switch::size_input_fifos_for_credits(int port) {
  const hw::PacketFifoParams p{input_fifo_depth(params_, true), input_fifo(port, 0).core.mode()};
  for (int vl = 0; vl < params_.vls; ++vl) input_fifo(port, vl) = sw::InputFifo(p);
}

std::string Switch::input_fifo_hierarchy(int in_port, int vl) const {
  return std::string(name()) + ".port" + std::to_string(in_port) + ".vl" + std::to_string(vl) + ".input_fifo";
}

void Switch::make_input_fifo_blocks() {
  if (input_fifos_.empty() || params_.input_fifo_impl == AllocatorImpl::tlm) return;
  for (int p = 0; p < params_.ports; ++p)
    for (int vl = 0; vl < params_.vls; ++vl) {
      sw::InputFifo& f = input_fifo(p, vl);
      f.block = make_packet_fifo({input_fifo_hierarchy(p, vl), params_.input_fifo_impl, params_.input_fifo_rtl_variant,
                                  f.core.depth(), f.core.mode(), params_.core_clock, params_.waveform});
    }
}

void Switch::input_fifo_fault(int in_port, int vl, const sc_time& at, sw::FifoFault fault, std::uint64_t a,
                              std::uint64_t b) const {
  const auto n = [](std::uint64_t v) { return std::to_string(v); };
  const sw::InputFifo& f = input_fifo(in_port, vl);
  const std::string held = " (" + n(f.words()) + " words, " + n(f.packets()) + " packets held)";
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
  for (int vl = 0; vl < params_.vls; ++vl, ++f) held += f->words() + f->tail_words;
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
  if (!f.can_push(f.tail_words + head)) input_fifo_fault(e.in, e.vl, at, sw::FifoFault::overflow, id, words);
  if (f.tail_words > 0) f.push_words(f.tail_words, f.tail_id, true, f.tail_at);
  f.push_words(head, id, head == words, at);
  f.tail_words = words - head;
  f.tail_id = id;
  f.tail_at = e.tail_at;
}

void Switch::input_fifo_write_tail(sw::InputFifo& f, int in_port, int vl) {
  if (!f.can_push(f.tail_words))
    input_fifo_fault(in_port, vl, f.tail_at, sw::FifoFault::overflow, f.tail_id, f.tail_words);
  f.push_words(f.tail_words, f.tail_id, true, f.tail_at);
  f.tail_words = 0;
}

void Switch::input_fifo_check_head(sw::InputFifo& f, std::uint64_t id, int in_port, int vl, const sc_time& at) {
  input_fifo_sync(f, in_port, vl, at);
  if (!f.can_pop()) input_fifo_fault(in_port, vl, at, sw::FifoFault::unreadable, id, 0);
  const std::uint64_t head = f.front().data;
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
  if (f.packets() == 0) input_fifo_fault(r.in, r.queue_vl, r.at, sw::FifoFault::tail_missing, 0, 0);
  const std::size_t words = f.pop_packet(r.at);
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
