// Objects a process leaves to its exit instead of destroying them.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

namespace fabricsim::sim {

namespace detail {
// Holds `object` until the process exits: reachable from a never-destroyed list, so
// LeakSanitizer finds it in use, not leaked.
inline void keep_until_exit(const void* object) {
  static std::mutex lock;
  static auto* const kept = new std::vector<const void*>;  // never destroyed
  const std::lock_guard<std::mutex> hold(lock);
  kept->push_back(object);
}
}  // namespace detail

/// Keeps `object` until the process exits without ever running its destructor, and
/// returns it. For what a process that exits next would only take apart: a simulated
/// fabric (SystemC's port registries remove each socket with a linear search) or a
/// results tree (a node per value). The exit returns the memory at once.
template <class T>
T& leave_to_process_exit(std::unique_ptr<T> object) {
  T& kept = *object;
  detail::keep_until_exit(object.release());
  return kept;
}

}  // namespace fabricsim::sim
