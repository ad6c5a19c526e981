// A pool of forked child processes: each job runs in a fresh process (SystemC elaborates
// once per process), up to `parallel` at once. Used by `fabricsim compare` and the local
// executor of `fabricsim sweep`.
#pragma once

#include <cstddef>
#include <functional>

namespace fabricsim::sim {

/// Runs jobs 0..count-1. `child(i)` runs in the forked child and returns its exit code;
/// `done(i, status, wall_s)` runs in the parent as each child ends (waitpid status, wall
/// seconds since its fork), in completion order. Throws when fork or waitpid fails.
void run_process_pool(std::size_t count, int parallel, const std::function<int(std::size_t)>& child,
                      const std::function<void(std::size_t, int, double)>& done);

/// True when a waitpid status says the child exited with code 0.
bool exited_ok(int status);

}  // namespace fabricsim::sim
