#include "tlm/dma_engine.h"

#include <algorithm>

#include "tlm/link.h"

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
      tags_(static_cast<std::size_t>(params.read_tags), sc_core::SC_ZERO_TIME) {}

sc_time DmaEngine::doorbell(const sc_time& now) {
  // An MMIO write of a few bytes: its wire time is negligible next to DMA
  // completions, and it must not queue behind completions reserved for later.
  down_busy_s_ += timing_.transfer(8, timing_.params().max_payload).in_seconds();
  return now + to_sc(timing_.params().doorbell_latency);
}

sc_time DmaEngine::read(const sc_time& now, std::uint64_t bytes, std::uint64_t chunk, hw::MemoryTarget target,
                        std::vector<sc_time>* ready) {
  const std::uint64_t mrrs = timing_.params().max_read_request;
  const sc_time latency = read_latency(target);
  const std::size_t chunks = ready && chunk ? (bytes + chunk - 1) / chunk : 0;
  if (ready) ready->resize(chunks);
  // Pieces of a whole MRRS, and the last one (both stay in recent_reads_).
  const Wire full = recent_reads_.get(mrrs, [this](std::uint64_t b) { return wire(b); });
  // The timelines in locals for the loop (a tag may not alias them).
  sc_time down_free = down_free_;
  double up_busy = up_busy_s_, down_busy = down_busy_s_;
  std::size_t next_tag = next_tag_;
  std::size_t next_chunk = 0;     // the first chunk not yet complete
  std::uint64_t chunk_end = chunk;  // its end offset
  std::uint64_t offset = 0;
  // Each request waits for a free tag and the upstream wire; its completions
  // (MPS-sized TLPs) queue on the downstream wire after the memory latency.
  do {
    const std::uint64_t piece = std::min(mrrs, bytes - offset);
    const Wire& w = piece == mrrs ? full : recent_reads_.get(piece, [this](std::uint64_t b) { return wire(b); });
    sc_time& tag = tags_[next_tag];
    next_tag = next_tag + 1 == tags_.size() ? 0 : next_tag + 1;
    // Request TLPs are tiny: they count as upstream busy time but do not queue
    // behind (or reserve ahead of) posted writes, whose timeline runs separately.
    const sc_time issue = std::max(now, tag) + latency;
    up_busy += request_wire_s_;
    down_free = std::max(issue, down_free) + w.time;
    down_busy += w.seconds;
    tag = down_free;  // this tag is free again once the piece's completions are in
    offset += piece;
    for (; next_chunk < chunks && (chunk_end <= offset || offset == bytes); ++next_chunk, chunk_end += chunk)
      (*ready)[next_chunk] = down_free;
  } while (offset < bytes);
  down_free_ = down_free;
  up_busy_s_ = up_busy;
  down_busy_s_ = down_busy;
  next_tag_ = next_tag;
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
