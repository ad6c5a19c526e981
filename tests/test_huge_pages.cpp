// sim/huge_pages.h: the model's memory keeps its contents and, where the kernel
// offers transparent huge pages with MADV_COLLAPSE, is backed by 2 MiB pages; the
// fabricsim command runs with glibc's malloc asking for huge pages, unless told otherwise.
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/huge_pages.h"
#include "tests/command.h"
#include "tests/sanitizer.h"

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

// GLIBC_TUNABLES set to `value` (unset without one) until the end of the scope.
class TunablesAre {
 public:
  explicit TunablesAre(std::optional<std::string> value) {
    if (const char* v = std::getenv("GLIBC_TUNABLES")) before_ = v;
    set(value);
  }
  ~TunablesAre() { set(before_); }

 private:
  static void set(const std::optional<std::string>& v) {
    if (v) setenv("GLIBC_TUNABLES", v->c_str(), 1);
    else unsetenv("GLIBC_TUNABLES");
  }
  std::optional<std::string> before_;
};

TEST(HugePages, MallocHugePagesReadsTheLastSettingOfTheTunable) {
  using fabricsim::sim::malloc_huge_pages;
  const std::pair<std::optional<std::string>, bool> cases[] = {
      {std::nullopt, false},
      {"glibc.malloc.hugetlb=1", true},
      {"glibc.malloc.check=0:glibc.malloc.hugetlb=1", true},
      {"glibc.malloc.hugetlb=1:glibc.malloc.hugetlb=0", false},
      {"glibc.malloc.hugetlb=0:glibc.malloc.hugetlb=1", true},
      {"glibc.malloc.hugetlb=2", false},
      {"glibc.malloc.hugetlb=10", false},
      {"xglibc.malloc.hugetlb=1", false},
      {"glibc.malloc.hugetlbx=1", false},
  };
  for (const auto& [tunables, on] : cases) {
    TunablesAre env(tunables);
    EXPECT_EQ(malloc_huge_pages(), on) << tunables.value_or("(unset)");
  }
}

// What `simulator.malloc_huge_pages` a short run of the fabricsim command reports.
bool command_runs_with_malloc_huge_pages(const std::optional<std::string>& tunables) {
  TunablesAre env(tunables);
  const std::string dir = ::testing::TempDir() + "/fabricsim_malloc_huge_pages";
  std::filesystem::remove_all(dir);
  const auto r = fabricsim::testing::run_command("run " + std::string(FABRICSIM_SOURCE_DIR) +
                                                 "/examples/quickstart.yaml --quiet --out " + dir +
                                                 " --set simulation.duration=2us --set simulation.warmup=0us");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream results(dir + "/results.json");
  return nlohmann::json::parse(results).at("simulator").at("malloc_huge_pages").get<bool>();
}

TEST(HugePages, TheCommandRunsWithHugePageMallocUnlessTheTunableSaysOtherwise) {
  if (fabricsim::test::kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer has its own allocator";
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(enabled, modes);
  if (modes.find("[madvise]") == std::string::npos) GTEST_SKIP() << "transparent huge pages not [madvise]: " << modes;
  EXPECT_TRUE(command_runs_with_malloc_huge_pages(std::nullopt));
  EXPECT_TRUE(command_runs_with_malloc_huge_pages("glibc.malloc.check=0"));  // added to what is there
  EXPECT_FALSE(command_runs_with_malloc_huge_pages("glibc.malloc.hugetlb=0"));  // the user's choice
}

// The peak a run reports (results.json simulator.peak_memory_bytes) is the process's own
// resident high-water mark: address space reserved and never touched does not raise it,
// memory touched does, by as much, and freeing it does not lower it. (ctest runs each
// test in a fresh process, whose peak is far below the 256 MiB touched here.)
TEST(PeakResidentBytes, RisesByWhatTheProcessTouchesAndStays) {
  using fabricsim::sim::peak_resident_bytes;
  constexpr std::size_t kMiB = std::size_t{1} << 20, kReserved = 1024 * kMiB, kTouched = 256 * kMiB;
  const std::optional<std::uint64_t> start = peak_resident_bytes();
  ASSERT_TRUE(start.has_value()) << "no VmHWM in /proc/self/status";
  auto map = [](std::size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  };
  char* reserved = map(kReserved);
  ASSERT_NE(reserved, nullptr) << std::strerror(errno);
  const std::uint64_t after_reserving = *peak_resident_bytes();
  EXPECT_LT(after_reserving, *start + 64 * kMiB) << "a resident peak, not an address-space one";
  char* touched = map(kTouched);
  ASSERT_NE(touched, nullptr) << std::strerror(errno);
  for (std::size_t i = 0; i < kTouched; i += 4096) touched[i] = 1;
  const std::uint64_t after_touching = *peak_resident_bytes();
  EXPECT_GE(after_touching, after_reserving + kTouched - 16 * kMiB);
  munmap(touched, kTouched);
  munmap(reserved, kReserved);
  // A high-water mark: freeing does not lower it (within the kernel's per-thread RSS
  // counting, which it syncs every 64 page faults).
  EXPECT_GE(*peak_resident_bytes() + 4 * kMiB, after_touching);
}

}  // namespace
