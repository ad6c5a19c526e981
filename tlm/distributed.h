// One simulation over several processes (`mpirun -np N fabricsim run`): the processes,
// their collective operations and the byte buffers they exchange. The only interface to
// MPI; no other file includes mpi.h. A build with FABRICSIM_MPI=0 has the same interface
// for one process.
//
// Every function is called from the main thread only (MPI is initialised with
// MPI_THREAD_FUNNELED), and the collective ones by every process, in the same order, with
// the same `root`; otherwise the processes wait for each other forever. A process that
// fails alone while the others may be in a collective stops them all with abort().
// An MPI error is a std::runtime_error naming the MPI call.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace fabricsim::tlm_fabric::distributed {

/// Joins the other processes when a launcher (mpirun, mpiexec, srun with PMI) started
/// this one as one of several: initialises MPI and finalises it once at exit, also when
/// main returns an error code. A process started alone (a plain run, `mpirun -np 1`, an
/// `srun` of one task) runs without MPI. Throws std::runtime_error when started as one of
/// several processes by a build without MPI. Call first in main, once.
void start(int& argc, char**& argv);

/// The number of processes of the simulation (1 when started alone).
int size();
/// This process's number, 0 to size() - 1.
int rank();
/// Whether the simulation runs over more than one process.
bool active();

/// The least / the sum of `value` over the processes, in every process.
std::uint64_t min_over_processes(std::uint64_t value);
int min_over_processes(int value);
std::uint64_t sum_over_processes(std::uint64_t value);
/// Element-wise sums over the processes, in place; the vectors have the same length in
/// every process. Doubles are added in rank order, ((v0 + v1) + v2) ..., so every process
/// holds the same bits, run after run.
void sum_over_processes(std::vector<std::uint64_t>& values);
void sum_over_processes(std::vector<double>& values);
/// Element-wise least over the processes, in place (same length in every process).
void min_over_processes(std::vector<std::uint64_t>& values);

/// All-to-all: `to_each[r]` goes to process r (to_each.size() == size()); returns what
/// came, `result[r]` from process r. Buffers may be empty and of any sizes, up to 2 GiB in
/// total sent or received by one process (more is a std::runtime_error in every process).
std::vector<std::vector<unsigned char>> exchange(const std::vector<std::vector<unsigned char>>& to_each);
/// exchange() that also leaves in `least` each element's least over the processes (same
/// length in every process): numbers the exchange carries in its own first step, without
/// an all-reduce of their own.
std::vector<std::vector<unsigned char>> exchange(const std::vector<std::vector<unsigned char>>& to_each,
                                                 std::vector<std::uint64_t>& least);
/// `root`'s `bytes`, in every process.
std::vector<unsigned char> broadcast(std::vector<unsigned char> bytes, int root);
/// At `root`, every process's `bytes`, result[r] from process r; empty elsewhere.
std::vector<std::vector<unsigned char>> gather(const std::vector<unsigned char>& bytes, int root);

/// Marks an error every process of the simulation meets alike (from its configuration,
/// or agreed over the processes): each ends with it, without abort(), and process 0 says it.
class Agreed {
 public:
  virtual ~Agreed() = default;
};
/// An Agreed error.
class AgreedError : public std::runtime_error, public Agreed {
 public:
  using std::runtime_error::runtime_error;
};

/// After a step every process takes between two collective operations, which can fail in
/// some processes only: in every process, the message of the lowest-numbered process
/// whose step failed (`local`: its failure, null where it did not), or none.
std::optional<std::string> failure_over_processes(const std::exception_ptr& local);
/// The message of process `failing`'s failure (`local` there), in every process: where the
/// processes already agree which one failed.
std::string failure_of(int failing, const std::exception_ptr& local);

/// Ends every process of the simulation with exit code `code` (MPI_Abort; std::exit
/// when the simulation runs in one process).
[[noreturn]] void abort(int code);

}  // namespace fabricsim::tlm_fabric::distributed
