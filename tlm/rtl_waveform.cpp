// Window, size limit and VCD conversion of a block's waveform; see rtl_waveform.h.
#include "tlm/rtl_waveform.h"

#include <gtkwave/fstapi.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <unistd.h>

namespace fabricsim::tlm_fabric {

namespace {

// FST writes its value changes in compressed blocks, so its size on disk only grows when a
// block is flushed. The size limit flushes about every kBlocksPerLimit-th of the limit.
constexpr std::uint64_t kBlocksPerLimit = 32;
constexpr std::uint64_t kMinDumpsPerBlock = 16, kMaxDumpsPerBlock = std::uint64_t{1} << 20;

std::uint64_t size_on_disk(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::uint64_t>(size);
}

/// Keeps at most `limit` bytes of a VCD and remembers where the last time step (a line
/// `#<time>`) starting within the limit begins, so the file can be cut there: a VCD cut at
/// a time line ends with its last complete time step.
struct VcdCutter {
  std::FILE* file = nullptr;
  std::uint64_t limit = 0, written = 0, cut = 0;
  bool over = false;
  char prev = '\n';

  bool take(const char* buf, std::size_t n) {
    if (over) return true;
    for (std::size_t i = 0; i < n; ++i) {
      if (buf[i] == '#' && prev == '\n' && written + i <= limit) cut = written + i;
      prev = buf[i];
    }
    std::size_t keep = n;
    if (written + n > limit) {
      keep = static_cast<std::size_t>(limit - written);
      over = true;
    }
    written += keep;
    return std::fwrite(buf, 1, keep, file) == keep;
  }
};

}  // namespace

void Waveform::open_file(const std::string& stem) {
  path_ = stem + std::string(options_.extension());
  fst_path_ = options_.format == WaveformFormat::vcd ? stem + ".fst" : path_;
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  fst_.open(fst_path_.c_str());
  if (!fst_.isOpen()) throw std::runtime_error("cannot write waveform '" + fst_path_ + "'");
}

void Waveform::advance(std::uint64_t ps) {
  if (!is_open() || stopped_) return;
  // Nothing recorded yet and time passes `from`: the current values are those at `from`.
  if (!recorded_ && ps > options_.from_ps && options_.from_ps <= options_.to_ps) record(options_.from_ps);
  if (ps > options_.to_ps && !stopped_) {
    // The values hold up to `to`: a time point there ends the file at the window's end.
    if (recorded_ && last_ps_ < options_.to_ps) record(options_.to_ps);
    stopped_ = true;
  }
}

void Waveform::dump(std::uint64_t ps) {
  if (!is_open() || stopped_ || ps < options_.from_ps) return;
  if (ps > options_.to_ps) {
    stopped_ = true;
    return;
  }
  record(ps);
}

void Waveform::record(std::uint64_t ps) {
  if (recorded_ && ps <= last_ps_) return;  // FST time only moves forward
  fst_.dump(ps);  // the first dump writes every signal, later ones the changes
  recorded_ = true;
  last_ps_ = ps;
  if (options_.max_bytes != 0) check_size();
}

void Waveform::check_size() {
  if (flush_pending_) {
    // The block requested at the last flush went to disk at this dump's time change.
    flush_pending_ = false;
    const std::uint64_t size = size_on_disk(fst_path_);
    const std::uint64_t block = size > flushed_bytes_ ? size - flushed_bytes_ : 0;
    flushed_bytes_ = size;
    if (size + block > options_.max_bytes) {  // another block like this one would pass the limit
      stop_at_limit(last_ps_);
      return;
    }
    if (block > 0)
      flush_every_ = std::clamp(flush_every_ * (options_.max_bytes / kBlocksPerLimit) / block, kMinDumpsPerBlock,
                                kMaxDumpsPerBlock);
  }
  if (++since_flush_ >= flush_every_) {
    since_flush_ = 0;
    fst_.flush();
    flush_pending_ = true;
  }
}

void Waveform::stop_at_limit(std::uint64_t ps) {
  stopped_ = true;
  if (limit_reached_) return;
  limit_reached_ = true;
  std::cerr << "fabricsim: warning: waveform " << path_ << " reached its size limit of " << options_.max_bytes
            << " bytes at t = " << ps << " ps; the rest of the run is not recorded\n";
}

Waveform::~Waveform() {
  try {
    close();
  } catch (const std::exception& e) {
    std::cerr << "fabricsim: warning: " << e.what() << "\n";
  }
}

void Waveform::close() {
  if (!is_open()) return;
  fst_.close();
  if (options_.format == WaveformFormat::vcd) convert_to_vcd();
}

// The conversion of GTKWave's fst2vcd: the header and $var lines from the hierarchy, then
// every block's value changes.
void Waveform::convert_to_vcd() {
  void* reader = fstReaderOpen(fst_path_.c_str());
  if (!reader) throw std::runtime_error("cannot read waveform '" + fst_path_ + "' to convert it to VCD");
  std::FILE* file = std::fopen(path_.c_str(), "w");
  if (!file) {
    fstReaderClose(reader);
    throw std::runtime_error("cannot write waveform '" + path_ + "'");
  }
  // The reader writes the value changes straight to the FILE's descriptor: with a limit,
  // that is a pipe whose other end a thread drains through the cutter.
  VcdCutter cutter{file, options_.max_bytes};
  std::FILE* out = options_.max_bytes == 0 ? file : nullptr;
  std::thread drain;
  bool drained_ok = true;
  if (options_.max_bytes != 0) {
    int fds[2];
    const bool piped = pipe(fds) == 0;
    if (piped) out = fdopen(fds[1], "w");
    if (!out) {
      if (piped) {
        ::close(fds[0]);
        ::close(fds[1]);
      }
      fstReaderClose(reader);
      std::fclose(file);
      throw std::runtime_error("cannot convert waveform '" + fst_path_ + "' to VCD: no pipe");
    }
    drain = std::thread([&cutter, &drained_ok, in = fds[0]] {
      char buf[1 << 16];
      for (ssize_t n; (n = read(in, buf, sizeof buf)) > 0;)
        drained_ok = cutter.take(buf, static_cast<std::size_t>(n)) && drained_ok;
      ::close(in);
    });
  }
  const bool hier_ok = fstReaderProcessHier(reader, out) != 0;
  if (hier_ok) {
    fstReaderSetFacProcessMaskAll(reader);
    fstReaderIterBlocks(reader, nullptr, nullptr, out);
  }
  fstReaderClose(reader);
  if (out != file) {
    std::fclose(out);  // end of the pipe: the thread drains the rest and stops
    drain.join();
  }
  const bool write_ok = std::fclose(file) == 0 && drained_ok;
  if (!hier_ok || !write_ok) throw std::runtime_error("cannot convert waveform '" + fst_path_ + "' to '" + path_ + "'");
  if (cutter.over) {
    std::filesystem::resize_file(path_, cutter.cut);
    if (!limit_reached_) stop_at_limit(last_ps_);
  }
  std::error_code ec;
  std::filesystem::remove(fst_path_, ec);
}

}  // namespace fabricsim::tlm_fabric
