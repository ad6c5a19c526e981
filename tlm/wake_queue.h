// Wake-ups of the fabric's blocks (switches, NICs, traffic sources, the occupancy
// sampler) without a kernel event per block. A block runs in exactly the delta cycle a
// method process on its own sc_event would; blocks due in one delta cycle run in the
// order their WakeEvents were made. Blocks read time with sim_now(), wake through a
// WakeEvent and stop with stop_simulation() (docs/architecture.md, "Scheduling").
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <vector>

#include <systemc>

#include "hw/param_spec.h"
#include "tlm/sim_time.h"
#include "tlm/timing_wheel.h"

namespace fabricsim::tlm_fabric {

/// An sc_event notified for the earliest time asked for, calling `notify` only where
/// the kernel would act (an event keeps only its earliest notification; a pending delta
/// notification wins over any timed one): a replaced timed notification would
/// otherwise stay in the kernel's queue until its time.
class EarliestNotify {
 public:
  sc_core::sc_event& event() { return event_; }
  /// Notify for `t` (the next delta cycle if `t` is now or has passed).
  void notify_at(const sc_core::sc_time& t);

 private:
  enum class Pending { none, delta, timed };
  sc_core::sc_event event_;
  Pending pending_ = Pending::none;
  sc_core::sc_time at_;      // timed: when
  std::uint64_t delta_ = 0;  // delta: the delta cycle it was made in
};

/// sc_start(duration), with the wake queue running ahead of the kernel where nothing
/// else is pending (above). A plain sc_start() keeps the queue in step with the kernel.
void simulate_for(const sc_core::sc_time& duration);
/// sc_stop() for blocks and testbenches. Asked in a pass ahead of the kernel, the kernel
/// first moves to the queue's time, so the run ends where the model stopped.
void stop_simulation();
/// The delta cycle as the blocks see it: sc_delta_count() plus the passes the queue ran
/// ahead of the kernel (each would have been a delta cycle of the kernel's); after the
/// run, how many there were.
std::uint64_t delta_count();

class WakeEvent;

/// How block wake-ups run (`simulation.engine`). `wheel`: in the queue's own process,
/// ahead of the kernel where nothing else is pending, in lanes. `kernel`: each WakeEvent
/// is an sc_event with a method process of its own, notified by the queue in the delta
/// cycle and order the wheel would run it; in step with the kernel, on one lane.
enum class Engine { wheel, kernel };
/// The configuration names of Engine (simulation.engine).
const hw::EnumNames<Engine>& engine_names();
std::string_view to_string(Engine e);

/// An exception a block threw in a pass of the queue, its message followed by the block's
/// hierarchy name and the model time it was evaluating ("In block: fabric.sw0 @ 527333
/// ps"). Thrown out of simulate_for, not through the kernel: the kernel would name the
/// queue's own process and its time, behind the model's where the queue ran ahead.
class BlockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The process-wide queue of block wake-ups, run by one method process. Lanes
/// (set_lanes): the blocks split into lanes, each with its own timing wheel, run ahead of
/// the kernel in parallel windows of the lookahead, calls between lanes deferred
/// (defer()) to the window's end; a block that reads every lane (add(...,
/// reads_every_lane)) runs alone between windows (docs/architecture.md, "Scheduling").
class WakeQueue {
 public:
  /// What a call between processes is sent as.
  using Bytes = std::vector<unsigned char>;
  /// The queue of this process (SystemC elaborates once per process).
  static WakeQueue& instance();
  /// Registers a block's wake-up in the lane blocks are being made in (building_lane); returns its handle.
  /// `reads_every_lane` (the occupancy sampler, a collective's end): with several lanes it runs between
  /// windows, alone, at its time: the lanes have run every pass before it, and none at it.
  /// `owner`: the block's module, named in a BlockError.
  int add(std::function<void()> on_wake, bool reads_every_lane = false, const sc_core::sc_object* owner = nullptr);
  /// Forgets block `client` (being destroyed): it is not called again.
  void remove(int client);
  /// Runs block `client` at `t`, by the rules above.
  void notify_at(int client, const sc_core::sc_time& t);
  /// The engine of the blocks made from now on (before any block is made; `kernel`: one lane).
  void set_engine(Engine engine);
  Engine engine() const { return engine_; }

  /// Splits the queue into `lanes` lanes (before any block is made), run in parallel
  /// windows of the lookahead (set_lookahead) where the queue runs ahead of the kernel.
  void set_lanes(int lanes);
  /// The lookahead of the lanes' windows (> 0 for more than one lane; ends the building of the blocks).
  void set_lookahead(const sc_core::sc_time& lookahead);
  int lanes() const { return static_cast<int>(lanes_.size()); }
  /// The lane the blocks made from now on wake in (0 .. lanes() - 1).
  void building_lane(int lane);
  /// Whether lanes run in parallel now (in a window): a call into another lane must be deferred.
  bool in_window() const { return in_window_; }
  /// In a window: `call`, into a block of lane `to_lane`, runs in that lane before its
  /// next window's passes, at time `made_at` (the calls from lane 0 first, each lane's in
  /// the order made). `acts_at`: the earliest time the call acts; before the window's end
  /// is an error (the lookahead was too long).
  /// `call`: a trivially copyable callable of up to 40 bytes (kept in place: no allocation).
  template <class Call>
  void defer(int to_lane, const sc_core::sc_time& made_at, const sc_core::sc_time& acts_at, const Call& call) {
    static_assert(std::is_trivially_copyable_v<Call> && sizeof(Call) <= sizeof(Deferred::call) &&
                      alignof(Call) <= alignof(std::uint64_t),
                  "a deferred call is a small trivially copyable callable");
    Deferred& d = deferred_slot(to_lane, made_at, acts_at);
    std::memcpy(d.call.data(), &call, sizeof(Call));
    d.run = [](const Deferred& x) { (*std::launder(reinterpret_cast<const Call*>(x.call.data())))(); };
  }
  /// A block that takes calls from lanes whose calls reach it as bytes (another process's,
  /// or any other lane's with serialise_between_lanes): `receive` makes the call from
  /// what the call's pack() wrote. Registered in the same order in every process (the
  /// handle names the block there).
  int add_receiver(std::function<void(const unsigned char* bytes)> receive);
  /// Skips `n` receiver handles, those of a block another process makes and this one
  /// does not (set_processes): every process numbers its receivers alike. A call to one
  /// is an error.
  void skip_receivers(int n);
  /// defer() for a call that may cross processes: `Call` also has `void pack(Bytes& out)
  /// const`, which writes what `receiver` needs to make it and lets go of what the call
  /// held (once the window has ended: the caller's lane is done with it).
  template <class Call>
  void defer(int to_lane, const sc_core::sc_time& made_at, const sc_core::sc_time& acts_at, int receiver,
             const Call& call) {
    defer(to_lane, made_at, acts_at, call);
    Deferred& d = last_deferred(to_lane);
    d.receiver = receiver;
    d.pack = [](const Deferred& x, Bytes& out) {
      std::launder(reinterpret_cast<const Call*>(x.call.data()))->pack(out);
    };
  }
  /// A call's pack() writes its fields with put(); its receiver reads them back in the
  /// same order with get(), which returns where the next one starts.
  template <class T>
  static void put(Bytes& out, const T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "a field of a call as bytes is trivially copyable");
    const auto* b = reinterpret_cast<const unsigned char*>(&v);
    out.insert(out.end(), b, b + sizeof v);
  }
  template <class T>
  static const unsigned char* get(const unsigned char* in, T& v) {
    std::memcpy(&v, in, sizeof v);
    return in + sizeof v;
  }
  /// Every call between lanes that can cross processes crosses as bytes, packed at the
  /// end of its window and made by its receiver, as between processes (tests of the
  /// packing in one process).
  static void serialise_between_lanes(bool on) { serialise_ = on; }
  /// One simulation over several processes (distributed::): each makes and runs only
  /// the blocks of its own lanes, `process_of_lane[k]` running lane k (after set_lanes,
  /// before any block is made). Calls into another process's lanes cross as
  /// bytes at each window's end (they must have a receiver); the processes agree on each
  /// window's start, on the queue's next wake-up and on a failure, so they step their
  /// kernels together. A block that reads every lane runs in every process at the same
  /// time, between windows: it reads the other processes' lanes through them itself.
  void set_processes(const std::vector<int>& process_of_lane);
  /// Whether this process runs lane `lane` (every lane in one process).
  bool owns(int lane) const { return own_[static_cast<std::size_t>(lane)] != 0; }
  /// The end of the last window: the lanes have run every pass before it.
  const sc_core::sc_time& window_end() const { return window_end_; }
  /// Runs after each window, on the queue's thread (results that merge the lanes' records).
  void at_window_end(std::function<void()> hook) { window_end_hooks_.push_back(std::move(hook)); }
  /// Windows run in parallel so far (simulator figures).
  std::uint64_t windows() const { return windows_; }

 private:
  friend class WakeEvent;
  friend void simulate_for(const sc_core::sc_time& duration);
  friend void stop_simulation();
  friend std::uint64_t delta_count();
  WakeQueue();
  static inline WakeQueue* made_ = nullptr;  // instance(), once made
  // A wheel slot is the widest power of two of kernel time units not above this (128 ps
  // at the default resolution: a slot mostly holds one instant).
  static constexpr double kMaxSlotWidthNs = 0.25;
  struct DeltaDue {
    std::uint64_t delta;  // the delta cycle it was asked in: runs in the next one
    int client;
  };
  struct alignas(64) Client {  // a cache line of its own: lanes write their clients in parallel
    std::function<void()> on_wake;
    std::uint64_t delta_asked = ~std::uint64_t{0};  // delta cycle of the last request for now
    int lane = 0;  // -1: reads every lane (every_lane_)
  };
  static_assert(sizeof(Client) == 64, "a client is one cache line");
  /// A new entry in this lane's outbox to `to_lane` (checks `acts_at` against the window's end).
  struct Deferred;
  Deferred& deferred_slot(int to_lane, const sc_core::sc_time& made_at, const sc_core::sc_time& acts_at);
  struct Deferred {
    sc_core::sc_time made_at;
    void (*run)(const Deferred&);                 // calls `call`
    void (*pack)(const Deferred&, Bytes&) = nullptr;  // a call that can cross processes: its bytes
    int receiver = -1;                                // add_receiver's handle, with `pack`
    alignas(std::uint64_t) std::array<unsigned char, 40> call;  // the callable, copied
  };
  Deferred& last_deferred(int to_lane) { return lanes_[detail::lane]->outbox[parity_][to_lane].back(); }
  /// Window end, serialise_: each packable call between lanes replaced by its bytes in
  /// received_[parity], made by its receiver.
  void pack_between_lanes(int parity);
  std::vector<std::function<void(const unsigned char*)>> receivers_;
  std::array<Bytes, 2> received_;  // per window parity: the bytes of the calls to make
  static inline bool serialise_ = false;
  /// Deferred call `d` made again from received_[parity] at `offset`, by `receiver`.
  static void make_from_bytes(Deferred& d, int receiver, int parity, std::size_t offset);
  // Several processes (set_own_lanes): the lanes this one runs, each lane's process.
  std::vector<char> own_;        // per lane: this process runs it
  std::vector<int> own_lanes_;   // their numbers, in order
  std::vector<int> process_of_;  // per lane; empty: one process
  bool distributed() const { return !process_of_.empty(); }
  /// Window end: the calls into other processes' lanes out, theirs into this one's in.
  /// With them the processes agree on a failure (`failed`: this one's; every process
  /// throws the lowest failing one's) and on the next window's start (`at`, `have`: this
  /// one's, then the earliest of all; returns whether any has one).
  bool exchange_between_processes(int parity, const std::exception_ptr& failed, sc_core::sc_time& at, bool have);
  /// The next pass of this process's lanes or the earliest act of a call they made in the
  /// last window (`parity_`); false if none. Forgets the calls of the window before.
  bool next_start(sc_core::sc_time& at);
  /// Every process throws the failure of process `failing` (this one's: `local`).
  [[noreturn]] static void throw_failure(int failing, const std::exception_ptr& local);
  /// The earliest of `at` (`have`) over the processes; false if no process has one.
  bool earliest_over_processes(sc_core::sc_time& at, bool have) const;
  // The requests of one lane's blocks: its timed requests in a wheel, its requests for now.
  class alignas(64) Lane {
   public:
    Lane(std::vector<Client>& clients, unsigned slot_shift) : wheel(slot_shift), clients_(clients) {}
    void fit(std::size_t clients) { wheel.fit(clients); }
    /// The lane's next pass: its time if requests for now wait, else its earliest timed request.
    bool next(sc_core::sc_time& at) const {
      if (!asked_now.empty()) {
        at = now;
        return true;
      }
      return earliest(at);
    }
    bool earliest(sc_core::sc_time& at) const {  // of the timed requests, if any
      std::uint64_t ticks;
      if (!wheel.earliest(ticks)) return false;
      at = from_ticks(ticks);
      return true;
    }
    /// The blocks due at `at` (timed, and asked for now before delta cycle `delta`) onto run_, in order.
    void collect(const sc_core::sc_time& at, std::uint64_t delta);
    void call_due();                                // runs what collect() found
    const std::vector<int>& due() const { return run_; }  // what collect() found
    TimingWheel wheel;                // the timed requests, by client handle
    std::vector<DeltaDue> asked_now;  // requests for the next delta cycle, in request order
    // In windows: the lane's time, the delta cycle of its pass and the passes run.
    sc_core::sc_time now;
    std::uint64_t pass_delta = 0;
    std::uint64_t passes = 0;
    // Calls to other lanes, per window parity and lane called, and the earliest time they act.
    std::array<std::vector<std::vector<Deferred>>, 2> outbox;
    std::array<sc_core::sc_time, 2> earliest_act;
    std::array<bool, 2> deferred{false, false};
    bool replaying = false;          // making the calls deferred to it
    sc_core::sc_time replay_now;     // the time of the call being made

   private:
    std::vector<Client>& clients_;
    std::vector<int> run_;            // scratch: blocks this pass runs, in order
  };
  void dispatch();
  void dispatch_passes();  // dispatch() but for a block's error
  /// Engine::kernel: block `client`'s method process.
  void run_in_kernel(int client);
  /// A block's BlockError: out of simulate_for once the kernel stops (through the kernel in a plain sc_start).
  void fail_run();
  Engine engine_ = Engine::wheel;
  std::vector<std::unique_ptr<sc_core::sc_event>> kernel_events_;  // Engine::kernel: one per client
  /// The lanes' rules for a request made while they run (windowing_): a clear error where one is broken.
  void check_lanes(const Client& c, const Lane& lane, const sc_core::sc_time& t) const;
  /// In a handler: the exception being handled, from block `client` at `at`, as a BlockError.
  [[noreturn]] void rethrow_from(int client, const sc_core::sc_time& at) const;
  std::vector<const sc_core::sc_object*> owners_;  // per client (add)
  std::exception_ptr failure_;  // a block's BlockError in simulate_for, thrown once the kernel stops
  void run_pass(const sc_core::sc_time& now, std::uint64_t delta);  // the blocks due now, lane by lane
  /// Parallel windows from the lanes' next requests up to `limit` (exclusive); the time of the last pass.
  sc_core::sc_time run_windows(const sc_core::sc_time& limit, sc_core::sc_time now);
  void run_lane(Lane& lane, const sc_core::sc_time& end);  // one lane's passes before `end`
  void replay_into(int lane, int parity);  // the calls deferred to `lane` in windows of `parity`
  // The earliest of the lanes' next passes (timed requests only; with every_lane_'s).
  bool next_request(sc_core::sc_time& at, bool timed_only = false, bool with_every_lane = true) const;
  static sc_core::sc_time kernel_next_activity();  // the time of the kernel's next activity
  void arm(const sc_core::sc_time& now);
  std::uint64_t delta() const;  // delta_count()
  std::uint64_t delta_for(const Lane& lane) const;
  std::vector<Client> clients_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::unique_ptr<Lane> every_lane_;  // with several lanes: the blocks that read every lane
  Lane& lane_of(const Client& c) { return c.lane < 0 ? *every_lane_ : *lanes_[c.lane]; }
  void run_every_lane(const sc_core::sc_time& at);  // between windows: its blocks due at `at`
  std::vector<Lane*> all_lanes();                   // lanes_ and every_lane_
  int building_lane_ = 0;
  sc_core::sc_time lookahead_;
  sc_core::sc_time now_;  // the queue's time while it runs ahead of the kernel on this thread (sim_now())
  unsigned slot_shift_ = 0;  // a wheel slot is 2^slot_shift_ kernel time units
  EarliestNotify wake_;
  bool dispatching_ = false;  // in a pass: arm() follows it
  std::uint64_t pass_delta_ = 0;  // the delta cycle of the pass running
  // Running ahead: only inside simulate_for, strictly before its end (the kernel leaves
  // processes due at the end of sc_start for the next one).
  sc_core::sc_time until_;
  std::uint64_t passes_ahead_ = 0;  // passes run ahead of the kernel so far (delta_count())
  bool stop_asked_ = false;         // stop_simulation() during a pass
  bool stop_on_wake_ = false;       // the kernel moves to the queue's time to stop there
  // Parallel windows.
  bool in_window_ = false;
  bool windowing_ = false;          // in run_windows: each lane numbers its own passes
  int parity_ = 0;                  // of the window running: the lanes defer into outbox[parity_]
  sc_core::sc_time replay_floor_;   // the end of the window the calls being replayed were made in
  std::uint64_t window_delta_ = 0;  // delta_count() when the windows started: lanes number their passes from it
  sc_core::sc_time window_end_;
  std::vector<std::function<void()>> window_end_hooks_;
  std::uint64_t windows_ = 0;
};

/// A block's wake-up: calls `on_wake` at the times notified, through the WakeQueue.
class WakeEvent {
 public:
  /// `reads_every_lane`: WakeQueue::add.
  explicit WakeEvent(std::function<void()> on_wake, bool reads_every_lane = false,
                     const sc_core::sc_object* owner = nullptr)
      : client_(WakeQueue::instance().add(std::move(on_wake), reads_every_lane, owner)) {}
  ~WakeEvent() { WakeQueue::instance().remove(client_); }
  WakeEvent(const WakeEvent&) = delete;
  WakeEvent& operator=(const WakeEvent&) = delete;
  /// Wake at `t` (the next delta cycle if `t` is now or has passed); an earlier pending wake stands.
  /// (The queue exists since this event was made: no function-local static's guard per call.)
  void notify_at(const sc_core::sc_time& t) { WakeQueue::made_->notify_at(client_, t); }

 private:
  int client_;
};

}  // namespace fabricsim::tlm_fabric
