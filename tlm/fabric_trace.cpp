// The fabric trace: recording per lane, written as the time passes into the Chrome JSON
// trace and the VCD (fabric_trace.h).
#include "tlm/fabric_trace.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "tlm/sim_time.h"
#include "tlm/wake_queue.h"

namespace fabricsim::tlm_fabric {

namespace {

constexpr std::uint32_t kLastOnTrack = std::numeric_limits<std::uint32_t>::max();
constexpr const char* kPerfettoFile = "trace.perfetto.json";
constexpr const char* kVcdFile = "fabric.vcd";

bool glob(const std::string& pattern, std::string_view name) {
  return fnmatch(pattern.c_str(), std::string(name).c_str(), 0) == 0;
}

/// `ps` as microseconds with six decimals: exact to the picosecond.
void append_us(std::string& out, std::uint64_t ps) {
  char text[32];
  std::snprintf(text, sizeof text, "%llu.%06llu", static_cast<unsigned long long>(ps / 1000000),
                static_cast<unsigned long long>(ps % 1000000));
  out += text;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

/// The time an event is written in order of: a counter's change, a slice's end (a
/// collective step's post or landing: its own time until they make a slice).
std::uint64_t order_ps(const FabricTrace::Event& e) {
  using Kind = FabricTrace::Kind;
  return e.kind == Kind::switch_hop || e.kind == Kind::link_hop || e.kind == Kind::delivered || e.kind == Kind::step
             ? e.value
             : e.ts;
}

const char* op_name(std::uint8_t op) {
  static constexpr const char* kOps[] = {"raw", "write", "send", "read_request", "read_response", "ack", "nak", "cnp"};
  return op < 8 ? kOps[op] : "?";
}

}  // namespace

bool TraceOptions::wants(std::string_view hierarchy, std::string_view parent) const {
  if (scopes.empty()) return true;
  for (const auto& s : scopes)
    if (glob(s, hierarchy) || (!parent.empty() && glob(s, parent))) return true;
  return false;
}

/// A switch port or a NIC: its names and its counters' state.
struct FabricTrace::Track {
  std::string name;    // hierarchy name (fabric.sw0.port3, fabric.ep0)
  std::string device;  // the process it belongs to in the Chrome trace
  std::string label;   // its rows' prefix there
  bool on = true;      // in scope
  // The first time a packet the endpoint and flow filters keep crossed it (the hop's end) [ps].
  std::uint64_t crossed_at = std::numeric_limits<std::uint64_t>::max();
  bool occupancy = false, credits = false, pause = false;  // the counters it has
  int vls = 0;
  // Per signal (kIngress, kEgress, kCredits + VL, kPause + VL): the value at the window's
  // start (the first value plus the changes before it), the last PAUSE value recorded.
  std::vector<std::uint64_t> start, last;
  // PAUSE per VL: on, and until when.
  std::vector<char> paused;
  std::vector<std::uint64_t> pause_until;

  std::size_t index(Signal s, int vl) const {
    switch (s) {
      case kIngress: return 0;
      case kEgress: return 1;
      case kCredits: return 2 + static_cast<std::size_t>(vl);
      case kPause: return 2 + static_cast<std::size_t>(vls + vl);
    }
    return 0;
  }
};

struct alignas(64) FabricTrace::Lane {
  std::vector<Event> events;
  std::uint32_t seq = 0;
};

FabricTrace::FabricTrace(TraceOptions options, int lanes) : options_(std::move(options)) {
  for (int k = 0; k < std::max(lanes, 1); ++k) lanes_.push_back(std::make_unique<Lane>());
  for (int e : options_.endpoints) {
    if (e >= static_cast<int>(endpoint_wanted_.size())) endpoint_wanted_.resize(static_cast<std::size_t>(e) + 1, 0);
    endpoint_wanted_[static_cast<std::size_t>(e)] = 1;
  }
  for (const auto& [s, d] : options_.flows)
    flows_.push_back(static_cast<std::uint64_t>(static_cast<std::uint32_t>(s)) << 32 | static_cast<std::uint32_t>(d));
  std::sort(flows_.begin(), flows_.end());
  ps_per_tick_ = sc_core::sc_get_time_resolution().to_seconds() * 1e12;
}

FabricTrace::~FabricTrace() = default;

namespace {
FabricTrace::Track make_track(std::string name, std::string device, std::string label, int vls) {
  FabricTrace::Track t;
  t.name = std::move(name);
  t.device = std::move(device);
  t.label = std::move(label);
  t.vls = vls;
  const std::size_t signals = 2 + 2 * static_cast<std::size_t>(vls);
  t.start.assign(signals, 0);
  t.last.assign(signals, 0);
  t.paused.assign(static_cast<std::size_t>(vls), 0);
  t.pause_until.assign(static_cast<std::size_t>(vls), 0);
  return t;
}
}  // namespace

int FabricTrace::add_port(const std::string& device, const std::string& port_name, int vls) {
  Track t = make_track(port_name, device, port_name.substr(device.size() + 1), vls);
  t.on = options_.wants(port_name, device);
  t.occupancy = true;
  tracks_.push_back(std::move(t));
  return static_cast<int>(tracks_.size()) - 1;
}

int FabricTrace::add_nic(const std::string& name, int endpoint, int vls) {
  Track t = make_track(name, name, "nic", vls);
  t.on = options_.wants(name, "") &&
         (endpoint_wanted_.empty() ||
          (endpoint < static_cast<int>(endpoint_wanted_.size()) && endpoint_wanted_[static_cast<std::size_t>(endpoint)]));
  tracks_.push_back(std::move(t));
  return static_cast<int>(tracks_.size()) - 1;
}

int FabricTrace::add_endpoint_steps(int endpoint) {
  Track t = make_track("collective.ep" + std::to_string(endpoint), "collective", "ep" + std::to_string(endpoint), 0);
  t.on = endpoint_wanted_.empty() ||
         (endpoint < static_cast<int>(endpoint_wanted_.size()) && endpoint_wanted_[static_cast<std::size_t>(endpoint)]);
  tracks_.push_back(std::move(t));
  return static_cast<int>(tracks_.size()) - 1;
}

void FabricTrace::step_posted(int track, std::uint64_t wr, const Step& step, const sc_core::sc_time& at) {
  if (!tracks_[static_cast<std::size_t>(track)].on) return;
  Event e{};
  e.ts = to_ps(at);
  e.value = step.bytes;
  e.packet = wr;
  e.track = track;
  e.src = step.src_rank;
  e.dst = step.dst_rank;
  e.payload = static_cast<std::uint32_t>(step.transfer);
  e.kind = Kind::step_posted;
  add(e);
}

void FabricTrace::step_landed(std::uint64_t wr, const sc_core::sc_time& at) {
  Event e{};
  e.ts = to_ps(at);
  e.packet = wr;
  e.kind = Kind::step_landed;
  add(e);
}

bool FabricTrace::on(int track) const { return tracks_[static_cast<std::size_t>(track)].on; }

std::vector<std::string> FabricTrace::unmatched_scopes() const {
  std::vector<std::string> out;
  for (const auto& s : options_.scopes) {
    TraceOptions one;
    one.scopes = {s};
    // A switch port's track matches by its name or its switch's, a NIC's by its name.
    const bool hit = std::any_of(tracks_.begin(), tracks_.end(), [&](const Track& t) {
      return t.device != "collective" && one.wants(t.name, t.occupancy ? t.device : std::string_view());
    });
    if (!hit) out.push_back(s);
  }
  return out;
}

std::vector<std::string> FabricTrace::scope_examples() const {
  std::vector<std::string> out;
  const auto port = std::find_if(tracks_.begin(), tracks_.end(), [](const Track& t) { return t.occupancy; });
  if (port != tracks_.end()) {
    out.push_back(port->device);
    out.push_back(port->name);
  }
  const auto nic = std::find_if(tracks_.begin(), tracks_.end(), [](const Track& t) { return t.label == "nic"; });
  if (nic != tracks_.end()) out.push_back(nic->name);
  return out;
}

bool FabricTrace::kept_packets() const {
  if (endpoint_wanted_.empty() && flows_.empty()) return true;
  return std::any_of(tracks_.begin(), tracks_.end(), [](const Track& t) {
    return t.crossed_at != std::numeric_limits<std::uint64_t>::max();
  });
}

void FabricTrace::initial_credits(int track, int vl, std::uint64_t blocks) {
  Track& t = tracks_[static_cast<std::size_t>(track)];
  t.credits = true;
  const std::size_t i = t.index(kCredits, vl);
  t.start[i] = blocks;
}

void FabricTrace::add(Event e) {
  Lane& lane = *lanes_[static_cast<std::size_t>(detail::lane)];
  e.seq = lane.seq++;
  lane.events.push_back(e);
  // In step with the kernel every lane has run every pass before now; the block recording
  // records the rest of its change at or after this event (a switch admits in edge order).
  if (lane.events.size() >= kKeep && out_ && !WakeQueue::instance().in_window())
    flush(std::min(to_ps(sim_now()), order_ps(e)), false);
}

void FabricTrace::cross(int track, std::uint64_t ps) {
  Track& t = tracks_[static_cast<std::size_t>(track)];
  t.crossed_at = std::min(t.crossed_at, ps);
}

void FabricTrace::lags(std::function<sc_core::sc_time()> earliest) { lagging_.push_back(std::move(earliest)); }

void FabricTrace::pfc(int track) { tracks_[static_cast<std::size_t>(track)].pause = true; }

void FabricTrace::counter_ps(int track, Signal s, int vl, std::uint64_t ps, std::int64_t delta) {
  Track& t = tracks_[static_cast<std::size_t>(track)];
  if (!t.on) return;
  const std::size_t i = t.index(s, vl);
  if (s == kPause) {
    if (t.last[i] == static_cast<std::uint64_t>(delta)) return;  // emit on change only
    t.last[i] = static_cast<std::uint64_t>(delta);
  } else if (delta == 0) {
    return;
  }
  if (ps < options_.from_ps) {  // what holds at the window's start
    if (s == kPause) t.start[i] = static_cast<std::uint64_t>(delta);
    else t.start[i] += static_cast<std::uint64_t>(delta);
    return;
  }
  if (ps > options_.to_ps) return;
  Event e{};
  e.ts = ps;
  e.value = static_cast<std::uint64_t>(delta);
  e.track = track;
  e.kind = Kind::counter;
  e.signal = s;
  e.vl = static_cast<std::uint8_t>(vl);
  add(e);
}

void FabricTrace::pause(int track, int vl, const sc_core::sc_time& from, const sc_core::sc_time& until) {
  Track& t = tracks_[static_cast<std::size_t>(track)];
  if (!t.on) return;
  const auto v = static_cast<std::size_t>(vl);
  // The running window ran out before this one: PAUSE ended at its end.
  if (t.paused[v] && t.pause_until[v] <= to_ps(from)) counter_ps(track, kPause, vl, t.pause_until[v], 0);
  t.paused[v] = until > from;
  t.pause_until[v] = to_ps(until);
  counter(track, kPause, vl, from, t.paused[v] ? 1 : 0);
}

bool FabricTrace::wants_packet(const Packet& p) const {
  if (!endpoint_wanted_.empty()) {
    auto wanted = [this](int e) {
      return e >= 0 && e < static_cast<int>(endpoint_wanted_.size()) && endpoint_wanted_[static_cast<std::size_t>(e)];
    };
    if (!wanted(p.src) && !wanted(p.dst)) return false;
  }
  if (!flows_.empty()) {
    const std::uint64_t key =
        static_cast<std::uint64_t>(static_cast<std::uint32_t>(p.src)) << 32 | static_cast<std::uint32_t>(p.dst);
    if (!std::binary_search(flows_.begin(), flows_.end(), key)) return false;
  }
  return true;
}

namespace {
FabricTrace::Event slice(FabricTrace::Kind kind, int track, const Packet& p, std::uint64_t start, std::uint64_t end) {
  FabricTrace::Event e{};
  e.ts = start;
  e.value = end;
  e.packet = p.id;
  e.track = track;
  e.src = p.src;
  e.dst = p.dst;
  e.payload = p.payload_bytes;
  e.kind = kind;
  e.vl = p.vl;
  e.op = static_cast<std::uint8_t>(p.op);
  return e;
}
}  // namespace

void FabricTrace::switch_hop(int in, int track, const Packet& p, const sc_core::sc_time& header_in,
                             const sc_core::sc_time& first_bit_out) {
  if (!tracks_[static_cast<std::size_t>(track)].on || !wants_packet(p)) return;
  const auto start = to_ps(header_in);
  const auto end = to_ps(first_bit_out);
  cross(in, end);
  cross(track, end);
  if (end < options_.from_ps || start > options_.to_ps) return;
  add(slice(Kind::switch_hop, track, p, start, end));
}

void FabricTrace::link_hop(int track, const Packet& p, const sc_core::sc_time& first_bit_out,
                           const sc_core::sc_time& tail_in) {
  if (!tracks_[static_cast<std::size_t>(track)].on || !wants_packet(p)) return;
  const auto start = to_ps(first_bit_out);
  const auto end = to_ps(tail_in);
  cross(track, end);
  if (end < options_.from_ps || start > options_.to_ps) return;
  add(slice(Kind::link_hop, track, p, start, end));
}

void FabricTrace::delivered(int track, const Packet& p, const sc_core::sc_time& at) {
  if (!tracks_[static_cast<std::size_t>(track)].on || !wants_packet(p)) return;
  const auto end = to_ps(at);
  cross(track, end);
  // The last hop's receiver: from the header in (its ready time on this link) to the tail in.
  const auto start = std::min(end, to_ps(p.header_at));
  if (end < options_.from_ps || end > options_.to_ps) return;  // counted where it is delivered
  add(slice(Kind::delivered, track, p, start, end));
}

std::vector<std::string> FabricTrace::file_names(const TraceOptions& options) {
  std::vector<std::string> names;
  if (options.perfetto) names.emplace_back(kPerfettoFile);
  if (options.vcd) names.emplace_back(kVcdFile);
  return names;
}

namespace {

/// A file written up to a size limit.
class LimitedFile {
 public:
  LimitedFile(std::string path, std::uint64_t max_bytes)
      : path_(std::move(path)), out_(path_, std::ios::binary), max_(max_bytes) {
    if (!out_) throw std::runtime_error("cannot write trace file '" + path_ + "'");
  }
  /// Writes `text` unless it would pass the limit (the bytes written so far and `text`);
  /// false once the limit is reached.
  bool put(const std::string& text) {
    if (full_ || (max_ > 0 && written_ + text.size() + reserve_ > max_)) {
      full_ = true;
      return false;
    }
    force(text);
    return true;
  }
  /// Writes `text` whatever the limit (the file's closing part).
  void force(const std::string& text) {
    out_.write(text.data(), static_cast<std::streamsize>(text.size()));
    written_ += text.size();
  }
  void reserve(std::uint64_t bytes) { reserve_ = bytes; }
  bool full() const { return full_; }
  void close() {
    out_.close();
    if (!out_) throw std::runtime_error("cannot write trace file '" + path_ + "'");
  }

 private:
  std::string path_;
  std::ofstream out_;
  std::uint64_t max_, written_ = 0, reserve_ = 0;
  bool full_ = false;
};

/// Rows of non-overlapping slices: the first row free at a slice's start.
struct Rows {
  std::vector<std::uint64_t> ends;
  std::vector<int> tids;
  int take(std::uint64_t start, std::uint64_t end, int& next_tid, std::vector<std::string>& names,
           const std::string& label) {
    std::size_t r = 0;
    while (r < ends.size() && ends[r] > start) ++r;
    if (r == ends.size()) {
      ends.push_back(0);
      tids.push_back(next_tid++);
      names.push_back(label + (r ? " #" + std::to_string(r) : std::string()));
    }
    ends[r] = end;
    return tids[r];
  }
};

std::string vcd_id(std::size_t n) {
  std::string id;
  do {
    id += static_cast<char>('!' + n % 94);
    n /= 94;
  } while (n > 0);
  return id;
}

std::string binary(std::uint64_t v) {
  if (v == 0) return "b0";
  std::string bits;
  for (int b = 63 - __builtin_clzll(v); b >= 0; --b) bits += (v >> b & 1) ? '1' : '0';
  return "b" + bits;
}

std::vector<std::string> split(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', begin)) {
    parts.push_back(name.substr(begin, dot - begin));
    begin = dot + 1;
  }
  parts.push_back(name.substr(begin));
  return parts;
}

std::string counter_text(const FabricTrace::Track& t, int pid, std::uint8_t signal, int vl, std::uint64_t ts,
                         std::uint64_t value) {
  std::string s = "{\"ph\":\"C\",\"pid\":" + std::to_string(pid) + ",\"ts\":";
  append_us(s, ts);
  s += ",\"name\":";
  std::string name = t.label;
  switch (signal) {
    case FabricTrace::kIngress: name += " ingress"; break;
    case FabricTrace::kEgress: name += " egress"; break;
    case FabricTrace::kCredits: name += " credits vl" + std::to_string(vl); break;
    default: name += " pause vl" + std::to_string(vl); break;
  }
  append_json_string(s, name);
  s += ",\"args\":{\"";
  s += signal == FabricTrace::kCredits ? "blocks" : signal == FabricTrace::kPause ? "paused" : "bytes";
  s += "\":" + std::to_string(value) + "}},\n";
  return s;
}

/// The counters of `t` in the Chrome trace's order: per VL credits and PAUSE, then occupancy.
template <class F>
void for_each_counter(const FabricTrace::Track& t, F&& f) {
  for (int vl = 0; vl < t.vls; ++vl) {
    if (t.credits) f(FabricTrace::kCredits, vl);
    if (t.pause) f(FabricTrace::kPause, vl);
  }
  if (t.occupancy) {
    f(FabricTrace::kIngress, 0);
    f(FabricTrace::kEgress, 0);
  }
}

}  // namespace

/// The files being written and what writing them needs across flushes.
struct FabricTrace::Output {
  std::unique_ptr<LimitedFile> perfetto, vcd;
  TraceFileRecord perfetto_rec{"perfetto", kPerfettoFile, 0, false}, vcd_rec{"vcd", kVcdFile, 0, false};
  bool started = false;             // the values at the window's start are written
  std::uint64_t flushed = 0;        // every event before it is written [ps]
  std::uint64_t end_ps = 0;         // the run's end (finish)
  std::vector<Event> pending;       // recorded, not yet written
  std::map<std::uint64_t, Event> posted;          // collective steps posted, not landed (by wr)
  std::map<std::uint64_t, std::uint64_t> landed;  // landings whose post is not in yet
  std::vector<std::vector<std::uint64_t>> value;  // per track and signal: its value so far
  std::vector<char> shown;          // per track: its counters are written (with packet filters: crossed)
  // The Chrome JSON trace: processes, and slices on rows per (track, kind).
  std::vector<int> pid;
  std::map<std::pair<int, int>, Rows> rows;
  std::vector<std::string> row_names;
  std::vector<int> row_pid;
  int next_tid = 1;
  // The VCD: identifiers per track and signal, the time step being filled.
  std::vector<std::vector<std::string>> ids;
  std::uint64_t at = 0, step_events = 0;
  std::string step;

  void put_json(const std::string& text) {
    if (perfetto->put(text)) ++perfetto_rec.events;
  }
  /// A value change at `ts`: a time step goes out whole once the next one begins.
  void put_vcd(std::uint64_t ts, const std::string& line) {
    if (ts != at) {
      if (!step.empty() && vcd->put(step)) vcd_rec.events += step_events;
      step = "#" + std::to_string(ts) + "\n";
      step_events = 0;
      at = ts;
    }
    step += line;
    ++step_events;
  }
};

namespace {
std::string vcd_value(std::uint8_t signal, std::uint64_t v, const std::string& id) {
  return (signal == FabricTrace::kPause ? std::to_string(v) : binary(v) + " ") + id + "\n";
}
}  // namespace

void FabricTrace::open(const std::string& dir) {
  namespace fs = std::filesystem;
  out_ = std::make_unique<Output>();
  Output& o = *out_;
  o.value.resize(tracks_.size());
  o.shown.assign(tracks_.size(), 0);
  if (options_.perfetto) {
    o.perfetto = std::make_unique<LimitedFile>((fs::path(dir) / kPerfettoFile).string(), options_.max_bytes);
    std::string head = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    // Processes: a switch or a NIC; numbered in the order of their tracks.
    std::map<std::string, int> pid_of;
    std::set<int> named;
    o.pid.assign(tracks_.size(), 0);
    for (std::size_t k = 0; k < tracks_.size(); ++k) {
      const auto it = pid_of.try_emplace(tracks_[k].device, static_cast<int>(pid_of.size()) + 1).first;
      o.pid[k] = it->second;
      if (!tracks_[k].on || !named.insert(it->second).second) continue;
      head += "{\"ph\":\"M\",\"pid\":" + std::to_string(it->second) + ",\"name\":\"process_name\",\"args\":{\"name\":";
      append_json_string(head, tracks_[k].device);
      head += "}},\n";
    }
    o.perfetto->force(head);
    o.perfetto->reserve(64 * 1024);  // the rows' names after the events
  }
  if (options_.vcd) o.vcd = std::make_unique<LimitedFile>((fs::path(dir) / kVcdFile).string(), options_.max_bytes);
}

void FabricTrace::start() {
  Output& o = *out_;
  o.started = true;
  const std::uint64_t window_start = options_.from_ps;
  const bool filtering = !endpoint_wanted_.empty() || !flows_.empty();
  // The counters written: in scope, and with packet filters, from the first time one of
  // their packets crossed.
  for (std::size_t k = 0; k < tracks_.size(); ++k) {
    const Track& t = tracks_[k];
    o.value[k] = t.start;
    o.shown[k] = t.on && (!filtering || t.crossed_at <= window_start);
  }
  if (o.perfetto) {
    for (std::size_t k = 0; k < tracks_.size(); ++k) {
      if (!o.shown[k]) continue;
      const Track& t = tracks_[k];
      for_each_counter(t, [&](Signal s, int vl) {
        o.put_json(counter_text(t, o.pid[k], s, vl, window_start, t.start[t.index(s, vl)]));
      });
    }
  }
  if (o.vcd) {
    // Signals: per track in scope, its counters, with an identifier each; unknown (x)
    // until a kept packet crosses it.
    std::string text = "$version fabricsim $end\n$timescale 1ps $end\n";
    std::vector<std::string> open;
    std::size_t next_id = 0;
    std::string values;
    o.ids.resize(tracks_.size());
    for (std::size_t k = 0; k < tracks_.size(); ++k) {
      const Track& t = tracks_[k];
      if (!t.on || !(t.occupancy || t.credits || t.pause)) continue;
      const std::vector<std::string> path_parts = split(t.name);
      std::size_t common = 0;
      while (common < open.size() && common < path_parts.size() && open[common] == path_parts[common]) ++common;
      while (open.size() > common) {
        text += "$upscope $end\n";
        open.pop_back();
      }
      for (std::size_t d = common; d < path_parts.size(); ++d) {
        text += "$scope module " + path_parts[d] + " $end\n";
        open.push_back(path_parts[d]);
      }
      o.ids[k].assign(t.start.size(), std::string());
      auto var = [&](Signal s, int vl, const std::string& name) {
        const std::size_t i = t.index(s, vl);
        const int width = s == kPause ? 1 : 64;
        o.ids[k][i] = vcd_id(next_id++);
        text += "$var wire " + std::to_string(width) + " " + o.ids[k][i] + " " + name + " $end\n";
        if (o.shown[k]) values += vcd_value(s, t.start[i], o.ids[k][i]);
        else values += (width == 1 ? "x" : "bx ") + o.ids[k][i] + "\n";
      };
      if (t.occupancy) {
        var(kIngress, 0, "ingress_bytes");
        var(kEgress, 0, "egress_bytes");
      }
      for (int vl = 0; vl < t.vls; ++vl) {
        if (t.credits) var(kCredits, vl, "credits_vl" + std::to_string(vl));
        if (t.pause) var(kPause, vl, "pause_vl" + std::to_string(vl));
      }
    }
    while (!open.empty()) {
      text += "$upscope $end\n";
      open.pop_back();
    }
    text += "$enddefinitions $end\n#" + std::to_string(window_start) + "\n$dumpvars\n" + values + "$end\n";
    o.vcd->force(text);
    o.at = window_start;
  }
}

void FabricTrace::window_ended() {
  std::size_t held = 0;
  for (const auto& lane : lanes_) held += lane->events.size();
  // The lanes have run every pass before the window's end.
  if (held >= kKeep) flush(to_ps(WakeQueue::instance().window_end()), false);
}

void FabricTrace::flush(std::uint64_t horizon, bool last) {
  Output& o = *out_;
  std::uint64_t held = o.pending.size() + o.posted.size() + o.landed.size();
  for (const auto& lane : lanes_) held += lane->events.size();
  held_high_water_ = std::max(held_high_water_, held);
  const auto late = [&o](std::uint64_t ps) {
    if (ps < o.flushed)
      throw std::logic_error("fabric trace: an event at " + std::to_string(ps) + " ps recorded after those before " +
                             std::to_string(o.flushed) + " ps were written");
  };
  for (auto& lane : lanes_) {
    for (const Event& e : lane->events) {
      if (e.kind == Kind::step_posted) {
        o.posted.emplace(e.packet, e);
      } else if (e.kind == Kind::step_landed) {
        o.landed.emplace(e.packet, e.ts);
      } else {
        late(order_ps(e));
        o.pending.push_back(e);
      }
    }
    lane->events.clear();
  }
  // Collective steps: a transfer's post and landing (in two lanes) make one slice on its
  // source's track, in the order of its work-request id; not landed by the end: to the end.
  const auto step = [&](Event e, std::uint64_t landed_at) {
    late(landed_at);
    e.kind = Kind::step;
    e.seq = static_cast<std::uint32_t>(e.packet);
    e.packet = e.payload;  // the transfer's index
    e.payload = static_cast<std::uint32_t>(std::min<std::uint64_t>(e.value, std::numeric_limits<std::uint32_t>::max()));
    e.value = landed_at;
    if (landed_at >= options_.from_ps && e.ts <= options_.to_ps) o.pending.push_back(e);  // else outside the window
  };
  for (auto it = o.landed.begin(); it != o.landed.end();) {
    const auto post = o.posted.find(it->first);
    if (post == o.posted.end()) {
      ++it;
      continue;
    }
    step(post->second, it->second);
    o.posted.erase(post);
    it = o.landed.erase(it);
  }
  if (last) {
    for (const auto& [wr, e] : o.posted) step(e, o.end_ps);
    o.posted.clear();
    o.landed.clear();
  }
  // The horizon: no block records before it from now on. A lagging block's earliest
  // record, a PAUSE window's end (recorded when the next frame comes, or at the end).
  std::uint64_t h = last ? std::numeric_limits<std::uint64_t>::max() : horizon;
  if (!last) {
    for (const auto& earliest : lagging_) {
      const sc_core::sc_time t = earliest();
      if (t != sc_core::sc_max_time()) h = std::min(h, to_ps(t));
    }
    for (const Track& t : tracks_)
      for (std::size_t v = 0; t.on && t.pause && v < t.paused.size(); ++v)
        if (t.paused[v]) h = std::min(h, t.pause_until[v]);
  }
  if (!o.started) {
    if (h <= options_.from_ps) return;  // the values at the window's start are not all in
    start();
  }
  if (h <= o.flushed) return;
  // With packet filters: the tracks crossed before the horizon show their counters from then on.
  if (!endpoint_wanted_.empty() || !flows_.empty()) {
    for (std::size_t k = 0; k < tracks_.size(); ++k) {
      const Track& t = tracks_[k];
      if (o.shown[k] || !t.on || t.crossed_at >= h || t.crossed_at > options_.to_ps) continue;
      o.shown[k] = 1;
      Event e{};
      e.ts = t.crossed_at;
      e.track = static_cast<std::int32_t>(k);
      e.kind = Kind::crossed;
      o.pending.push_back(e);
    }
  }
  const auto due = std::partition(o.pending.begin(), o.pending.end(), [h](const Event& e) { return order_ps(e) < h; });
  // A track's events come from one lane, each kind of event (a counter's increases, its
  // decreases, a kind of slice) from one block in its order: the same order with any
  // lanes. At one instant a counter's increases come first, as the switch admits before
  // it sends, so its maximum is the buffer's high-water mark.
  const auto key = [](const Event& e) {
    const bool decrease = e.kind == Kind::counter && e.signal != kPause && static_cast<std::int64_t>(e.value) < 0;
    return std::make_tuple(order_ps(e), e.track, e.kind != Kind::crossed, e.kind, e.signal, e.vl, decrease, e.seq);
  };
  std::sort(o.pending.begin(), due, [&key](const Event& a, const Event& b) { return key(a) < key(b); });
  write_events(o.pending.begin(), due);
  o.pending.erase(o.pending.begin(), due);
  o.flushed = h;
}

void FabricTrace::write_events(std::vector<Event>::iterator begin, std::vector<Event>::iterator end) {
  Output& o = *out_;
  const bool filtering = !endpoint_wanted_.empty() || !flows_.empty();
  for (auto it = begin; it != end; ++it) {
    const Event& e = *it;
    const auto k = static_cast<std::size_t>(e.track);
    const Track& t = tracks_[k];
    if (e.kind == Kind::crossed) {  // the values holding when the first kept packet crossed
      for_each_counter(t, [&](Signal s, int vl) {
        const std::size_t i = t.index(s, vl);
        if (o.perfetto) o.put_json(counter_text(t, o.pid[k], s, vl, e.ts, o.value[k][i]));
        if (o.vcd) o.put_vcd(e.ts, vcd_value(s, o.value[k][i], o.ids[k][i]));
      });
      continue;
    }
    if (e.kind == Kind::counter) {
      const std::size_t i = t.index(static_cast<Signal>(e.signal), e.vl);
      std::uint64_t& v = o.value[k][i];
      v = e.signal == kPause ? e.value : v + e.value;
      if (filtering && e.ts < t.crossed_at) continue;  // before a kept packet crossed it
      if (o.perfetto) o.put_json(counter_text(t, o.pid[k], e.signal, e.vl, e.ts, v));
      if (o.vcd && !o.ids[k].empty()) o.put_vcd(e.ts, vcd_value(e.signal, v, o.ids[k][i]));
      continue;
    }
    if (!o.perfetto) continue;
    // Slices on rows per (track, kind): overlapping packets take rows of their own.
    static constexpr const char* kRowName[] = {"", "queue", "wire", "rx", "steps"};
    static constexpr const char* kCategory[] = {"", "switch", "link", "delivered", "collective"};
    const auto kind = static_cast<int>(e.kind);
    const int before = o.next_tid;
    const int tid = o.rows[{e.track, kind}].take(e.ts, e.value, o.next_tid, o.row_names, t.label + " " + kRowName[kind]);
    if (o.next_tid != before) o.row_pid.push_back(o.pid[k]);
    std::string s = "{\"ph\":\"X\",\"pid\":" + std::to_string(o.pid[k]) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
    append_us(s, e.ts);
    s += ",\"dur\":";
    append_us(s, e.value - e.ts);
    s += ",\"cat\":\"";
    s += kCategory[kind];
    if (e.kind == Kind::step) {
      s += "\",\"name\":\"step " + std::to_string(e.packet) + " rank " + std::to_string(e.src) + "->" +
           std::to_string(e.dst) + "\",\"args\":{\"transfer\":" + std::to_string(e.packet) +
           ",\"src_rank\":" + std::to_string(e.src) + ",\"dst_rank\":" + std::to_string(e.dst) +
           ",\"bytes\":" + std::to_string(e.payload) + "}},\n";
    } else {
      s += "\",\"name\":\"" + std::string(op_name(e.op)) + " " + std::to_string(e.src) + "->" +
           std::to_string(e.dst) + "\",\"args\":{\"packet\":" + std::to_string(e.packet) +
           ",\"src\":" + std::to_string(e.src) + ",\"dst\":" + std::to_string(e.dst) +
           ",\"payload_bytes\":" + std::to_string(e.payload) + ",\"vl\":" + std::to_string(e.vl) + "}},\n";
    }
    o.put_json(s);
  }
}

std::vector<TraceFileRecord> FabricTrace::finish(const sc_core::sc_time& end) {
  const auto end_ps = to_ps(end);
  // PAUSE windows that ran out before the end without a frame after them.
  for (std::size_t k = 0; k < tracks_.size(); ++k) {
    Track& t = tracks_[k];
    for (int vl = 0; vl < t.vls; ++vl) {
      const auto v = static_cast<std::size_t>(vl);
      if (!t.on || !t.paused[v] || t.pause_until[v] > end_ps) continue;
      t.paused[v] = 0;
      const std::size_t i = t.index(kPause, vl);
      t.last[i] = 0;
      if (t.pause_until[v] < options_.from_ps) {
        t.start[i] = 0;
      } else if (t.pause_until[v] <= options_.to_ps) {
        Event e{};
        e.ts = t.pause_until[v];
        e.track = static_cast<std::int32_t>(k);
        e.kind = Kind::counter;
        e.signal = kPause;
        e.vl = static_cast<std::uint8_t>(vl);
        e.seq = kLastOnTrack;
        lanes_[0]->events.push_back(e);
      }
    }
  }
  Output& o = *out_;
  o.end_ps = end_ps;
  flush(0, true);
  std::vector<TraceFileRecord> records;
  if (o.perfetto) {
    o.perfetto_rec.limit_reached = o.perfetto->full();
    std::string tail;
    for (std::size_t r = 0; r < o.row_names.size(); ++r) {
      tail += "{\"ph\":\"M\",\"pid\":" + std::to_string(o.row_pid[r]) + ",\"tid\":" + std::to_string(r + 1) +
              ",\"name\":\"thread_name\",\"args\":{\"name\":";
      append_json_string(tail, o.row_names[r]);
      tail += "}},\n";
    }
    // The last element closes the list without a trailing comma.
    tail += "{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"fabricsim\"}}\n]}\n";
    o.perfetto->force(tail);
    o.perfetto->close();
    records.push_back(o.perfetto_rec);
  }
  if (o.vcd) {
    if (!o.vcd->full() && !o.step.empty() && o.vcd->put(o.step)) o.vcd_rec.events += o.step_events;
    o.vcd_rec.limit_reached = o.vcd->full();
    o.vcd->close();
    records.push_back(o.vcd_rec);
  }
  return records;
}

}  // namespace fabricsim::tlm_fabric
