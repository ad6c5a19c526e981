// sim/huge_pages.h: the model's memory keeps its contents and, where the kernel
// offers transparent huge pages with MADV_COLLAPSE, is backed by 2 MiB pages.
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/huge_pages.h"

namespace {

// AnonHugePages [KiB] of the mapping that holds `address` (/proc/self/smaps).
std::uint64_t anon_huge_kib_at(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= a && a < hi;  // a mapping's first line: start-end perms ...
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stoull(line.substr(14));
  }
  return 0;
}

// Why huge pages cannot be had here, or empty if they can.
std::string huge_pages_unavailable() {
#if defined(__SANITIZE_ADDRESS__)
  return "AddressSanitizer build";
#endif
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes((std::istreambuf_iterator<char>(enabled)), std::istreambuf_iterator<char>());
  if (modes.empty() || modes.find("[never]") != std::string::npos) return "transparent huge pages off";
  // A touched, aligned 2 MiB range the kernel must be able to collapse.
  const std::size_t huge = 2u << 20;
  void* raw = mmap(nullptr, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return "mmap failed";
  char* aligned = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + huge - 1) & ~(huge - 1));
  std::memset(aligned, 1, huge);
  madvise(aligned, huge, MADV_HUGEPAGE);
  const int rc = madvise(aligned, huge, 25 /* MADV_COLLAPSE */);
  const int err = errno;
  munmap(raw, 2 * huge);
  return rc == 0 ? "" : std::string("MADV_COLLAPSE refused: ") + std::strerror(err);
}

TEST(HugePages, BackTheModelsMemoryAndKeepItsContents) {
  // 64 MiB in use, like a built fabric's blocks.
  std::vector<std::uint64_t> blocks(std::size_t{8} << 20);
  for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = i * 0x9E3779B97F4A7C15ull;
  const std::size_t collapsed = fabricsim::sim::use_huge_pages();
  for (std::size_t i = 0; i < blocks.size(); ++i) ASSERT_EQ(blocks[i], i * 0x9E3779B97F4A7C15ull) << "word " << i;
  const std::string why_not = huge_pages_unavailable();
  if (!why_not.empty()) GTEST_SKIP() << why_not;
  // All of the 64 MiB but its unaligned ends (at most 2 MiB each) are now huge pages
  // (with transparent huge pages "always" on, some were from the start).
  EXPECT_GE(collapsed, std::size_t{60} << 20);
  // (madvise splits the mapping at the 2 MiB boundaries: the middle holds them).
  EXPECT_GE(anon_huge_kib_at(blocks.data() + blocks.size() / 2), std::uint64_t{60} << 10);
}

}  // namespace
