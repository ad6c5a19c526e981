#include "tlm/distributed.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>

#if FABRICSIM_MPI
#include <mpi.h>
#endif

namespace fabricsim::tlm_fabric::distributed {
namespace {

/// The processes a launcher started, as its environment says.
struct Launch {
  int size = 1;            // 0: a process manager started this one but does not say how many
  bool by_launcher = false;  // a process manager (PMI, PMIx) is there to join
};

/// `name` as a positive number, or 0 when unset or not one.
long positive_env(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  return *end == '\0' && n > 0 && n <= INT_MAX ? n : 0;
}

/// Open MPI's mpirun (and PRRTE) set OMPI_COMM_WORLD_SIZE; MPICH's mpiexec and
/// `srun --mpi=pmi2` PMI_RANK and PMI_SIZE; `srun --mpi=pmix` PMIX_RANK beside Slurm's
/// task count. Slurm without a PMI plugin, a batch script and a plain shell have no
/// process manager: the process runs alone.
Launch launch_from_environment() {
  if (const long n = positive_env("OMPI_COMM_WORLD_SIZE")) return {static_cast<int>(n), true};
  const bool pmi = std::getenv("PMIX_RANK") != nullptr || std::getenv("PMI_RANK") != nullptr;
  if (!pmi) return {};
  if (const long n = positive_env("PMI_SIZE")) return {static_cast<int>(n), true};
  if (std::getenv("SLURM_STEP_ID") != nullptr) {
    if (const long n = positive_env("SLURM_STEP_NUM_TASKS")) return {static_cast<int>(n), true};
    if (const long n = positive_env("SLURM_NTASKS")) return {static_cast<int>(n), true};
  }
  return {0, true};
}

struct World {
  bool started = false;
  bool mpi = false;  // MPI initialised: the collectives go through it
  int size = 1, rank = 0;
};
World world;

void check_root(int root) {
  if (root < 0 || root >= world.size)
    throw std::invalid_argument("distributed: root " + std::to_string(root) + " is not a process (0 to " +
                                std::to_string(world.size - 1) + ")");
}

#if FABRICSIM_MPI

/// MPI's largest message piece and count: its counts and displacements are int.
constexpr std::uint64_t kMaxCount = INT_MAX;
/// Broadcasts and gathers move larger buffers in pieces of this many bytes.
constexpr std::uint64_t kPiece = std::uint64_t{1} << 30;
constexpr int kGatherTag = 1;

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  throw std::runtime_error(std::string(call) + " failed: " +
                           (length > 0 ? std::string(text, static_cast<std::size_t>(length))
                                       : "error " + std::to_string(rc)));
}

void finalize_at_exit() {
  int finalized = 1;
  if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) MPI_Finalize();
}

void start_mpi(int& argc, char**& argv) {
  int provided = MPI_THREAD_SINGLE;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  world.mpi = true;
  std::atexit(finalize_at_exit);
  // Errors come back as codes (check() turns them into exceptions) instead of aborting.
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  if (provided < MPI_THREAD_FUNNELED)
    throw std::runtime_error("MPI_Init_thread: the MPI library gives no MPI_THREAD_FUNNELED support");
  check(MPI_Comm_size(MPI_COMM_WORLD, &world.size), "MPI_Comm_size");
  check(MPI_Comm_rank(MPI_COMM_WORLD, &world.rank), "MPI_Comm_rank");
}

void send_in_pieces(const unsigned char* data, std::uint64_t n, int to) {
  for (std::uint64_t at = 0; at < n; at += kPiece)
    check(MPI_Send(data + at, static_cast<int>(std::min(kPiece, n - at)), MPI_UNSIGNED_CHAR, to, kGatherTag,
                   MPI_COMM_WORLD),
          "MPI_Send");
}

void receive_in_pieces(unsigned char* data, std::uint64_t n, int from) {
  for (std::uint64_t at = 0; at < n; at += kPiece)
    check(MPI_Recv(data + at, static_cast<int>(std::min(kPiece, n - at)), MPI_UNSIGNED_CHAR, from, kGatherTag,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Recv");
}

/// `value` reduced by `op` over the processes, in every process.
template <class T>
T all_reduce(T value, MPI_Datatype type, MPI_Op op) {
  if (world.mpi) check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, type, op, MPI_COMM_WORLD), "MPI_Allreduce");
  return value;
}

int checked_count(std::size_t n, const char* what) {
  if (n > kMaxCount)
    throw std::runtime_error(std::string(what) + ": " + std::to_string(n) + " elements, more than MPI's int count");
  return static_cast<int>(n);
}

/// `values` reduced element-wise by `op` over the processes, in place, in every process.
void all_reduce(std::vector<std::uint64_t>& values, MPI_Op op, const char* what) {
  if (world.mpi && !values.empty())
    check(MPI_Allreduce(MPI_IN_PLACE, values.data(), checked_count(values.size(), what), MPI_UINT64_T, op,
                        MPI_COMM_WORLD),
          "MPI_Allreduce");
}

#endif  // FABRICSIM_MPI

}  // namespace

void start(int& argc, char**& argv) {
  if (world.started) return;
  world.started = true;
  const Launch launch = launch_from_environment();
  if (!launch.by_launcher || launch.size == 1) return;
#if FABRICSIM_MPI
  start_mpi(argc, argv);
#else
  (void)argc;
  (void)argv;
  if (launch.size > 1)
    throw std::runtime_error("fabricsim is built without MPI (FABRICSIM_MPI=OFF): it cannot run as one of " +
                             std::to_string(launch.size) + " processes");
#endif
}

int size() { return world.size; }
int rank() { return world.rank; }
bool active() { return world.size > 1; }

std::uint64_t min_over_processes(std::uint64_t value) {
#if FABRICSIM_MPI
  value = all_reduce(value, MPI_UINT64_T, MPI_MIN);
#endif
  return value;
}

int min_over_processes(int value) {
#if FABRICSIM_MPI
  value = all_reduce(value, MPI_INT, MPI_MIN);
#endif
  return value;
}

std::uint64_t sum_over_processes(std::uint64_t value) {
#if FABRICSIM_MPI
  value = all_reduce(value, MPI_UINT64_T, MPI_SUM);
#endif
  return value;
}

void sum_over_processes(std::vector<std::uint64_t>& values) {
#if FABRICSIM_MPI
  all_reduce(values, MPI_SUM, "sum_over_processes");
#else
  (void)values;
#endif
}

void min_over_processes(std::vector<std::uint64_t>& values) {
#if FABRICSIM_MPI
  all_reduce(values, MPI_MIN, "min_over_processes");
#else
  (void)values;
#endif
}

void sum_over_processes(std::vector<double>& values) {
#if FABRICSIM_MPI
  // Every process's vector, then the same additions in rank order in every process: an
  // MPI reduction may add in an order of its own, and floating-point addition is not associative.
  if (!world.mpi || values.empty()) return;
  const std::size_t n = values.size(), processes = static_cast<std::size_t>(world.size);
  const int count = checked_count(n, "sum_over_processes");
  checked_count(n * processes, "sum_over_processes");
  std::vector<double> all(n * processes);
  check(MPI_Allgather(values.data(), count, MPI_DOUBLE, all.data(), count, MPI_DOUBLE, MPI_COMM_WORLD),
        "MPI_Allgather");
  for (std::size_t i = 0; i < n; ++i) {
    double sum = all[i];
    for (std::size_t r = 1; r < processes; ++r) sum += all[r * n + i];
    values[i] = sum;
  }
#else
  (void)values;
#endif
}

std::vector<std::vector<unsigned char>> exchange(const std::vector<std::vector<unsigned char>>& to_each) {
  std::vector<std::uint64_t> none;
  return exchange(to_each, none);
}

std::vector<std::vector<unsigned char>> exchange(const std::vector<std::vector<unsigned char>>& to_each,
                                                 std::vector<std::uint64_t>& least) {
  if (to_each.size() != static_cast<std::size_t>(world.size))
    throw std::invalid_argument("distributed::exchange: " + std::to_string(to_each.size()) + " buffers for " +
                                std::to_string(world.size) + " processes");
#if FABRICSIM_MPI
  if (!world.mpi) return to_each;
  const std::size_t processes = to_each.size();
  // To each process: what it gets from this one, all this one sends, and `least`. The
  // second tells every process the same total of the exchange, so all of them know
  // alike whether a process can have gone past MPI's int counts, or sends nothing.
  std::uint64_t sent = 0;
  for (const auto& b : to_each) sent += b.size();
  const std::size_t per = 2 + least.size();
  std::vector<std::uint64_t> counts_out(per * processes), counts_in(per * processes);
  for (std::size_t r = 0; r < processes; ++r) {
    counts_out[per * r] = to_each[r].size();
    counts_out[per * r + 1] = sent;
    std::copy(least.begin(), least.end(), counts_out.begin() + static_cast<std::ptrdiff_t>(per * r + 2));
  }
  const int count = checked_count(per, "exchange");
  check(MPI_Alltoall(counts_out.data(), count, MPI_UINT64_T, counts_in.data(), count, MPI_UINT64_T, MPI_COMM_WORLD),
        "MPI_Alltoall");
  std::uint64_t received = 0, exchanged = 0;
  for (std::size_t r = 0; r < processes; ++r) {
    received += counts_in[per * r];
    exchanged += counts_in[per * r + 1];
    for (std::size_t i = 0; i < least.size(); ++i) least[i] = std::min(least[i], counts_in[per * r + 2 + i]);
  }
  if (exchanged == 0) return std::vector<std::vector<unsigned char>>(processes);
  if (exchanged > kMaxCount &&
      min_over_processes(static_cast<int>(sent <= kMaxCount && received <= kMaxCount)) == 0)
    throw std::runtime_error("distributed::exchange: " + std::to_string(exchanged) +
                             " bytes in one exchange, more than 2 GiB sent or received by one process "
                             "(MPI_Alltoallv's int counts); this process sends " + std::to_string(sent) +
                             " and receives " + std::to_string(received));

  std::vector<int> send_counts(processes), send_at(processes), receive_counts(processes), receive_at(processes);
  std::vector<unsigned char> out(sent), in(received);
  int at = 0;
  for (std::size_t r = 0; r < processes; ++r) {
    send_counts[r] = static_cast<int>(to_each[r].size());
    send_at[r] = at;
    std::copy(to_each[r].begin(), to_each[r].end(), out.begin() + at);
    at += send_counts[r];
  }
  at = 0;
  for (std::size_t r = 0; r < processes; ++r) {
    receive_counts[r] = static_cast<int>(counts_in[per * r]);
    receive_at[r] = at;
    at += receive_counts[r];
  }
  check(MPI_Alltoallv(out.data(), send_counts.data(), send_at.data(), MPI_UNSIGNED_CHAR, in.data(),
                      receive_counts.data(), receive_at.data(), MPI_UNSIGNED_CHAR, MPI_COMM_WORLD),
        "MPI_Alltoallv");
  std::vector<std::vector<unsigned char>> from_each(processes);
  for (std::size_t r = 0; r < processes; ++r)
    from_each[r].assign(in.begin() + receive_at[r], in.begin() + receive_at[r] + receive_counts[r]);
  return from_each;
#else
  (void)least;
  return to_each;
#endif
}

std::optional<std::string> failure_over_processes(const std::exception_ptr& local) {
  const int failing = min_over_processes(local ? rank() : size());
  if (failing == size()) return std::nullopt;
  return failure_of(failing, local);
}

std::string failure_of(int failing, const std::exception_ptr& local) {
  std::string what;
  if (failing == rank()) try {
      std::rethrow_exception(local);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "an unknown exception";
    }
  const std::vector<unsigned char> message = broadcast(std::vector<unsigned char>(what.begin(), what.end()), failing);
  return std::string(message.begin(), message.end());
}

std::vector<unsigned char> broadcast(std::vector<unsigned char> bytes, int root) {
  check_root(root);
#if FABRICSIM_MPI
  if (!world.mpi) return bytes;
  std::uint64_t n = bytes.size();
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
  bytes.resize(n);
  for (std::uint64_t at = 0; at < n; at += kPiece)
    check(MPI_Bcast(bytes.data() + at, static_cast<int>(std::min(kPiece, n - at)), MPI_UNSIGNED_CHAR, root,
                    MPI_COMM_WORLD),
          "MPI_Bcast");
#endif
  return bytes;
}

std::vector<std::vector<unsigned char>> gather(const std::vector<unsigned char>& bytes, int root) {
  check_root(root);
#if FABRICSIM_MPI
  if (world.mpi) {
    // Sizes first, then each buffer by itself, in pieces: any size, no int displacement.
    std::uint64_t n = bytes.size();
    std::vector<std::uint64_t> counts(world.rank == root ? static_cast<std::size_t>(world.size) : 0);
    check(MPI_Gather(&n, 1, MPI_UINT64_T, counts.data(), 1, MPI_UINT64_T, root, MPI_COMM_WORLD), "MPI_Gather");
    if (world.rank != root) {
      send_in_pieces(bytes.data(), n, root);
      return {};
    }
    std::vector<std::vector<unsigned char>> from_each(counts.size());
    for (int r = 0; r < world.size; ++r) {
      auto& b = from_each[static_cast<std::size_t>(r)];
      if (r == root) {
        b = bytes;
        continue;
      }
      b.resize(counts[static_cast<std::size_t>(r)]);
      receive_in_pieces(b.data(), b.size(), r);
    }
    return from_each;
  }
#endif
  return {bytes};
}

void abort(int code) {
#if FABRICSIM_MPI
  int finalized = 1;
  if (world.mpi && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

}  // namespace fabricsim::tlm_fabric::distributed
