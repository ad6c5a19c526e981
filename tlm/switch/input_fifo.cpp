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

void Switch::input_fifo_error(int in_port, int vl, const sc_time& at, const std::string& what) const {
  throw std::logic_error(std::string(name()) + ": input FIFO of port " + std::to_string(in_port) + " VL " + std::to_string(vl) +
                         " at " + at.to_string() + ": " + what);
}

bool Switch::input_fifo_has_room(const Entry& e) const {
  // Admission reserves a packet's cells: the words held and those still arriving.
  std::uint64_t held = 0;
  for (int vl = 0; vl < params_.vls; ++vl) {
    const sw::InputFifo& f = input_fifo(e.in, vl);
    held += f.core.words() + f.tail_words;
  }
  if (held * params_.cell_bytes != inputs_[e.in].bytes)
    input_fifo_error(e.in, e.vl, sim_now(), "the cores hold " + std::to_string(held) + " cells, the input counts " +
                                                std::to_string(inputs_[e.in].bytes) + " bytes");
  return held + e.charged / params_.cell_bytes <= input_fifo_cells_;
}

void Switch::input_fifo_write(sw::InputFifo& f, std::size_t words, std::uint64_t id, bool last, int in_port, int vl,
                              const sc_time& at) {
  if (!f.core.can_push(words))
    input_fifo_error(in_port, vl, at, "no room for " + std::to_string(words) + " words of packet " + std::to_string(id) +
                                     " (" + std::to_string(f.core.words()) + " of " + std::to_string(f.core.depth()) +
                                     " held)");
  f.core.push_words(words, id, last);
}

void Switch::input_fifo_sync(sw::InputFifo& f, int in_port, int vl, const sc_time& at) {
  if (f.tail_words == 0 || f.tail_at > at) return;
  input_fifo_write(f, f.tail_words, f.tail_id, true, in_port, vl, f.tail_at);
  f.tail_words = 0;
}

void Switch::input_fifo_admit(const Entry& e, const sc_time& at) {
  sw::InputFifo& f = input_fifo(e.in, e.vl);
  // The packet before it on this VL has its tail in: its header came after that tail.
  if (f.tail_words > 0) input_fifo_sync(f, e.in, e.vl, f.tail_at);
  const auto words = static_cast<std::uint32_t>(e.charged / params_.cell_bytes);
  const std::uint64_t id = e.packet->id;
  // Store-and-forward needs only the last word; a one-word packet's head is its last.
  const std::uint32_t head = words > 1 || f.core.mode() == hw::FifoMode::kCutThrough ? 1 : 0;
  if (head > 0) input_fifo_write(f, head, id, head == words, e.in, e.vl, at);
  f.tail_words = words - head;
  f.tail_id = id;
  f.tail_at = e.tail_at;
}

void Switch::input_fifo_check_head(sw::InputFifo& f, int in_port, int vl, const sc_time& at) {
  input_fifo_sync(f, in_port, vl, at);
  sw::InputFifo::Granted& g = f.granted.front();
  if (!f.core.can_pop())
    input_fifo_error(in_port, vl, at, "packet " + std::to_string(g.id) + " granted while the core cannot read it (" +
                                     std::to_string(f.core.words()) + " words, " + std::to_string(f.core.packets()) +
                                     " packets held)");
  if (f.core.front().data != g.id)
    input_fifo_error(in_port, vl, at, "packet " + std::to_string(g.id) + " granted, packet " +
                                     std::to_string(f.core.front().data) + " at the core's head");
  g.checked = true;
}

void Switch::input_fifo_grant(const Entry& e, const sc_time& now) {
  sw::InputFifo& f = input_fifo(e.in, e.vl);
  // With a packet ahead still leaving, the core shows this one once that one has left.
  const bool ahead = !f.granted.empty();
  f.granted.push_back({e.packet->id, false});
  if (!ahead) input_fifo_check_head(f, e.in, e.vl, now);
}

void Switch::input_fifo_release(const Release& r) {
  sw::InputFifo& f = input_fifo(r.in, r.queue_vl);
  input_fifo_sync(f, r.in, r.queue_vl, r.at);
  if (f.granted.empty() || !f.granted.front().checked)
    input_fifo_error(r.in, r.queue_vl, r.at, "a release with no packet read");
  const std::uint64_t id = f.granted.front().id;
  if (f.core.packets() == 0 || f.core.front().data != id)
    input_fifo_error(r.in, r.queue_vl, r.at, "packet " + std::to_string(id) + " left before the core holds all of it");
  const std::size_t words = f.core.pop_packet();
  if (words * params_.cell_bytes != r.charged)
    input_fifo_error(r.in, r.queue_vl, r.at, "packet " + std::to_string(id) + " held " + std::to_string(words) +
                                                 " words for " + std::to_string(r.charged) + " bytes charged");
  f.granted.erase(f.granted.begin());
  if (!f.granted.empty()) input_fifo_check_head(f, r.in, r.queue_vl, r.at);
}

}  // namespace fabricsim::tlm_fabric
