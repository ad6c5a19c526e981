#include "tlm/dma_engine.h"

#include <algorithm>

#include "tlm/link.h"
#include "tlm/sim_time.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

DmaEngine::DmaEngine(const hw::PcieParams& params)
    : timing_(params),
      host_write_latency_(to_sc(timing_.write_latency(hw::MemoryTarget::host))),
      gpu_write_latency_(to_sc(timing_.write_latency(hw::MemoryTarget::gpu))),
      recent_writes_(0, wire(0)),
      host_read_latency_(to_sc(timing_.read_latency(hw::MemoryTarget::host))),
      gpu_read_latency_(to_sc(timing_.read_latency(hw::MemoryTarget::gpu))),
      request_wire_s_(wire(0).seconds),
      recent_reads_(params.max_read_request, wire(params.max_read_request)),
      posted_{sc_core::SC_ZERO_TIME, std::vector<sc_time>(static_cast<std::size_t>(params.read_tags)), 0} {}

sc_time DmaEngine::doorbell(const sc_time& now) {
  // An MMIO write of a few bytes: its wire time is negligible next to DMA
  // completions, and it must not queue behind completions reserved for later.
  down_busy_s_ += timing_.transfer(8, timing_.params().max_payload).in_seconds();
  return now + to_sc(timing_.params().doorbell_latency);
}

sc_time DmaEngine::read(const sc_time& now, std::uint64_t bytes, std::uint64_t chunk, hw::MemoryTarget target,
                        sc_time* ready) {
  return read_on(posted_, now, bytes, chunk, target, ready);
}

sc_time DmaEngine::reread(const sc_time& now, std::uint64_t bytes, hw::MemoryTarget target, std::uint64_t chunk,
                          sc_time* ready) {
  // The posted path holds the payload reads each QP has issued ahead of its transmission
  // (up to its read-ahead); a NIC's DMA scheduler sends a retransmission's read requests
  // first. So the re-read waits for earlier re-reads only, and the posted reads reserved
  // later queue behind its completions (their wire time added where the posted path is
  // busy beyond them).
  if (resends_.tags.empty()) resends_.tags.assign(posted_.tags.size(), sc_core::SC_ZERO_TIME);
  sc_time wire_total;
  const sc_time done = read_on(resends_, now, bytes, chunk, target, ready, &wire_total);
  posted_.down_free = std::max(posted_.down_free + wire_total, done);
  return done;
}

sc_time DmaEngine::read_on(ReadPath& path, const sc_time& now, std::uint64_t bytes, std::uint64_t chunk,
                           hw::MemoryTarget target, sc_time* ready, sc_time* wire_total) {
  std::vector<sc_time>& tags = path.tags;
  const std::uint64_t mrrs = timing_.params().max_read_request;
  const sc_time latency = read_latency(target);
  const auto compute = [this](std::uint64_t b) { return wire(b); };
  // Max-read-request pieces, the last one shorter (a read of no bytes: one empty request).
  const std::uint64_t pieces = bytes == 0 ? 1 : (bytes + mrrs - 1) / mrrs;
  const std::uint64_t last_bytes = bytes - (pieces - 1) * mrrs;
  // Pieces of a whole MRRS, and the last one (both stay in recent_reads_).
  const Wire full = recent_reads_.get(mrrs, compute);
  const Wire last = last_bytes == mrrs ? full : recent_reads_.get(last_bytes, compute);
  const std::size_t n_tags = tags.size();
  if (wire_total) *wire_total = from_ticks(full.time.value() * (pieces - 1) + last.time.value());
  // ready[c]: when chunk c's last byte is in, i.e. its last piece's completions.
  const std::size_t chunks = ready && chunk ? (bytes + chunk - 1) / chunk : 0;
  std::size_t next_chunk = 0;
  auto piece_of = [&](std::size_t c) { return (std::min((c + 1) * chunk, bytes) - 1) / mrrs; };
  std::uint64_t next_chunk_piece = chunks ? piece_of(0) : pieces;
  // The timelines in locals for the loop (a tag may not alias them).
  sc_time down_free = path.down_free;
  double up_busy = up_busy_s_, down_busy = down_busy_s_;
  std::size_t next_tag = path.next_tag;
  // The tags pieces 1 .. min(pieces, tags) - 1 wait for were freed before this read, in
  // order: the last of them frees last.
  const sc_time& latest_old_tag = tags[(next_tag + std::min<std::uint64_t>(pieces, n_tags) - 1) % n_tags];
  // Each request waits for a free tag (the oldest: tags come back in the order taken);
  // request TLPs are tiny: they count as upstream busy time but do not queue behind (or
  // reserve ahead of) posted writes, whose timeline runs separately. Its completions
  // (MPS-sized TLPs) queue on the downstream wire after the memory latency:
  //   down_free = max(max(now, tag) + latency, down_free) + wire.
  // Once every request still to go is issued before the wire frees, the downstream wire
  // alone sets the pace, down_free += wire, and no tag needs reading (`wire_bound`).
  bool wire_bound = false;
  for (std::uint64_t k = 0; k < pieces; ++k) {
    const Wire& w = k + 1 < pieces ? full : last;
    sc_time& tag = tags[next_tag];
    next_tag = next_tag + 1 == n_tags ? 0 : next_tag + 1;
    if (wire_bound) down_free += w.time;
    else down_free = std::max(std::max(now, tag) + latency, down_free) + w.time;
    tag = down_free;  // this tag is free again once the piece's completions are in
    up_busy += request_wire_s_;
    down_busy += w.seconds;
    for (; next_chunk_piece == k; next_chunk_piece = ++next_chunk < chunks ? piece_of(next_chunk) : pieces)
      ready[next_chunk] = down_free;
    // After the first piece: each later request is issued by the time the wire frees when
    // the latest tag freed before this read is a latency before the first piece's end
    // (now is: that piece went out after it; the wire's time only grows), and, with more
    // pieces than tags, a tag this read frees comes back a latency before the wire does:
    // it is taken again tags - 1 whole pieces later.
    if (k == 0)
      wire_bound = (pieces < 2 || n_tags < 2 || latest_old_tag + latency <= down_free) &&
                   (pieces <= n_tags || latency.value() <= (n_tags - 1) * full.time.value());
  }
  path.down_free = down_free;
  up_busy_s_ = up_busy;
  down_busy_s_ = down_busy;
  path.next_tag = next_tag;
  return down_free;
}

DmaEngine::Wire DmaEngine::wire(std::uint64_t bytes) const {
  const sc_time t = to_sc(timing_.transfer(bytes, timing_.params().max_payload));
  return {t, t.to_seconds()};
}

sc_time DmaEngine::write(const sc_time& now, std::uint64_t bytes, hw::MemoryTarget target) {
  const sc_time start = std::max(now, up_free_);
  const Wire& w = recent_writes_.get(bytes, [this](std::uint64_t b) { return wire(b); });
  up_free_ = start + w.time;
  up_busy_s_ += w.seconds;
  return start + w.time + write_latency(target);
}

}  // namespace fabricsim::tlm_fabric
