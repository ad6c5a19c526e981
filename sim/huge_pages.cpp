#include "sim/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
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

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

constexpr const char* kHugetlbTunable = "glibc.malloc.hugetlb";

// The value GLIBC_TUNABLES gives tunable `name` (name=value pairs separated by ':', the
// last of a name counts), if any.
std::optional<std::string> tunable(const std::string& name) {
  std::istringstream tunables(env("GLIBC_TUNABLES"));
  std::optional<std::string> value;
  for (std::string t; std::getline(tunables, t, ':');)
    if (t.size() > name.size() && t.compare(0, name.size(), name) == 0 && t[name.size()] == '=')
      value = t.substr(name.size() + 1);
  return value;
}

}  // namespace

bool malloc_huge_pages() { return tunable(kHugetlbTunable) == "1"; }

void run_with_malloc_huge_pages(char* argv[]) {
#ifndef FABRICSIM_ASAN
  if (tunable(kHugetlbTunable)) return;
  if (env("LD_PRELOAD").find("vgpreload") != std::string::npos) return;  // valgrind's tools
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(enabled, modes);
  // Only where the kernel gives huge pages to the memory asked for them ([always]: to all).
  if (modes.find("[madvise]") == std::string::npos) return;
  const std::string before = env("GLIBC_TUNABLES");
  const std::string tunables = before.empty() ? kMallocHugePages : before + ":" + kMallocHugePages;
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Not run again (no /proc?): on as before.
  if (before.empty()) unsetenv("GLIBC_TUNABLES");
  else setenv("GLIBC_TUNABLES", before.c_str(), 1);
#else
  (void)argv;
#endif
}

}  // namespace fabricsim::sim
