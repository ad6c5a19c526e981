#include "sim/huge_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1; older headers lack it, older kernels answer EINVAL
#endif

#if defined(__SANITIZE_ADDRESS__)
#define FABRICSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FABRICSIM_ASAN 1
#endif
#endif
// Sanitizers with an allocator of their own: glibc's malloc tunables do nothing there.
#if defined(FABRICSIM_ASAN) || defined(__SANITIZE_THREAD__)
#define FABRICSIM_OWN_ALLOCATOR 1
#endif

namespace fabricsim::sim {

std::size_t use_huge_pages() {
#ifdef FABRICSIM_ASAN
  return 0;
#else
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  constexpr std::size_t kSmall = 4096, kPerHuge = kHuge / kSmall;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::size_t collapsed = 0;
  std::vector<unsigned char> resident(kPerHuge);
  while (std::getline(maps, line)) {
    // start-end perms offset dev inode [path]
    unsigned long lo = 0, hi = 0, offset = 0, inode = 0;
    char perms[5] = "", dev[16] = "", path[64] = "";
    if (std::sscanf(line.c_str(), "%lx-%lx %4s %lx %15s %lu %63s", &lo, &hi, perms, &offset, dev, &inode, path) < 6)
      continue;
    if (std::string(perms) != "rw-p" || inode != 0 || (path[0] && std::string(path) != "[heap]")) continue;
    const std::uintptr_t first = (lo + kHuge - 1) & ~(kHuge - 1), last = hi & ~(kHuge - 1);
    if (last <= first) continue;
    if (madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) != 0) continue;
    // Collapse only ranges mostly in use: a huge page over a sparse range would fill it.
    for (std::uintptr_t a = first; a < last; a += kHuge) {
      if (mincore(reinterpret_cast<void*>(a), kHuge, resident.data()) != 0) continue;
      std::size_t in = 0;
      for (unsigned char r : resident) in += r & 1;
      if (2 * in >= kPerHuge && madvise(reinterpret_cast<void*>(a), kHuge, MADV_COLLAPSE) == 0) collapsed += kHuge;
    }
  }
  return collapsed;
#endif
}

namespace {

constexpr std::string_view kHugetlbTunable = "glibc.malloc.hugetlb";

// The value of `entry` if it is `name`=value. No allocation, no library state:
// run_with_malloc_huge_pages uses it before any constructor has run.
std::optional<std::string_view> value_of(std::string_view entry, std::string_view name) {
  if (entry.size() <= name.size() || entry.substr(0, name.size()) != name || entry[name.size()] != '=') return {};
  return entry.substr(name.size() + 1);
}

// The value GLIBC_TUNABLES (`tunables`, name=value pairs separated by ':') gives tunable
// `name`, the last of that name counting; empty optional if none.
std::optional<std::string_view> tunable(std::string_view tunables, std::string_view name) {
  std::optional<std::string_view> value;
  while (!tunables.empty()) {
    const std::size_t colon = tunables.find(':');
    if (const auto v = value_of(tunables.substr(0, colon), name)) value = v;
    if (colon == std::string_view::npos) break;
    tunables.remove_prefix(colon + 1);
  }
  return value;
}

#ifndef FABRICSIM_OWN_ALLOCATOR
// The value of `name` in the environment `envp` (NAME=value entries), empty if absent.
std::string_view env_value(char** envp, std::string_view name) {
  for (char** e = envp; e && *e; ++e)
    if (const auto v = value_of(*e, name)) return *v;
  return {};
}
#endif

}  // namespace

bool malloc_huge_pages() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunable(tunables ? tunables : "", kHugetlbTunable) == std::string_view("1");
}

void run_with_malloc_huge_pages(char** argv, char** envp) {
#ifndef FABRICSIM_OWN_ALLOCATOR
  const std::string_view before = env_value(envp, "GLIBC_TUNABLES");
  if (tunable(before, kHugetlbTunable)) return;
  if (env_value(envp, "LD_PRELOAD").find("vgpreload") != std::string_view::npos) return;  // valgrind's tools
  // Only where the kernel gives huge pages to the memory asked for them ([always]: to all).
  char modes[256] = {};
  const int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t n = read(fd, modes, sizeof modes - 1);
  close(fd);
  if (n <= 0 || std::string_view(modes, static_cast<std::size_t>(n)).find("[madvise]") == std::string_view::npos) return;
  // The environment again with GLIBC_TUNABLES set, in static storage: nothing here may
  // allocate (the C++ runtime is not initialised yet). An environment too large for it
  // runs as it is.
  static char tunables[4096];
  static char* env[1024];
  const std::string_view name = "GLIBC_TUNABLES", added = kMallocHugePages;
  const std::string_view separator = before.empty() ? "" : ":";
  const std::size_t length = name.size() + 1 + before.size() + separator.size() + added.size();
  if (length >= sizeof tunables) return;
  char* w = tunables;
  for (std::string_view part : {name, std::string_view("="), before, separator, added})
    w = std::copy(part.begin(), part.end(), w);
  *w = '\0';
  std::size_t k = 0;
  for (char** e = envp; e && *e; ++e) {
    if (value_of(*e, name)) continue;  // replaced by `tunables`
    if (k + 2 >= std::size(env)) return;
    env[k++] = *e;
  }
  env[k++] = tunables;
  env[k] = nullptr;
  execve("/proc/self/exe", argv, env);
  // Not run again (no /proc?): on as before, the environment unchanged.
#else
  (void)argv;
  (void)envp;
#endif
}

namespace {

// A "Field: N kB" line of a /proc file, in bytes.
std::optional<std::uint64_t> proc_kib_field(const char* file, const std::string& field) {
  std::ifstream in(file);
  std::string line;
  const std::string format = field + ": %llu kB";
  while (std::getline(in, line)) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), format.c_str(), &kib) == 1) return std::uint64_t{kib} * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> peak_resident_bytes() { return proc_kib_field("/proc/self/status", "VmHWM"); }

std::optional<std::uint64_t> available_memory_bytes() { return proc_kib_field("/proc/meminfo", "MemAvailable"); }

}  // namespace fabricsim::sim
