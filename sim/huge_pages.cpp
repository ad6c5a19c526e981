#include "sim/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
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

}  // namespace fabricsim::sim
