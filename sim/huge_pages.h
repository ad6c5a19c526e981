// The process's memory: transparent huge pages for the model, and its peak.
//
// A large fabric's blocks (thousands of NICs, links, switch ports) spread over
// hundreds of MiB that every packet visits a few lines of: with 4 KiB pages
// nearly each of those visits also misses the TLB. Backing the heap with 2 MiB
// pages removes most of those misses (docs/performance.md, "Running long jobs").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace fabricsim::sim {

/// Asks the kernel to back the process's heap (the brk heap and anonymous
/// read-write mappings) with transparent huge pages: MADV_HUGEPAGE for what
/// is allocated from now on in those regions, MADV_COLLAPSE (Linux 6.1) for
/// the 2 MiB ranges already mostly resident. Changes nothing the model computes;
/// does nothing where the kernel refuses or under AddressSanitizer (its shadow
/// memory is such a mapping). Returns the bytes collapsed into huge pages.
std::size_t use_huge_pages();

/// glibc's malloc asks for transparent huge pages for the memory it maps and the heap it
/// grows only with its tunable glibc.malloc.hugetlb=1 (glibc 2.35 and later), which it
/// reads from GLIBC_TUNABLES once, as the process starts. use_huge_pages() covers the model
/// as built; what is allocated while it runs (an all-to-all's QPs, made per iteration;
/// the results) would otherwise land on 4 KiB pages, each first touch a page fault.
inline constexpr const char* kMallocHugePages = "glibc.malloc.hugetlb=1";
/// Whether this process runs with kMallocHugePages (its GLIBC_TUNABLES, whose last
/// glibc.malloc.hugetlb is 1; a glibc before 2.35 ignores the tunable).
bool malloc_huge_pages();
/// Makes this process run with kMallocHugePages: executes this program again in its place
/// (/proc/self/exe, the same arguments, `envp` with the tunable added to GLIBC_TUNABLES).
/// Called from the `.preinit_array` (sim/main.cpp), before any shared library's
/// constructors, so it allocates nothing and uses no C++ library state. Returns, changing
/// nothing, where GLIBC_TUNABLES already sets glibc.malloc.hugetlb, transparent huge
/// pages are not "madvise", under valgrind or a sanitizer's allocator, or when the exec
/// fails (docs/performance.md, "Huge pages").
void run_with_malloc_huge_pages(char** argv, char** envp);

/// The most memory this process has had resident so far [B] (VmHWM of /proc/self/status:
/// its own address space, from its exec on), or nothing where the kernel does not say.
/// Not getrusage's ru_maxrss: Linux folds into a process's ru_maxrss the high-water mark
/// of the address space it replaced at exec, so a child of a large parent (a benchmark
/// script that has read a big results.json) reports at least the parent's peak.
std::optional<std::uint64_t> peak_resident_bytes();

/// The memory the machine can give a new process without swapping [B] (MemAvailable of
/// /proc/meminfo), or nothing where the kernel does not say.
std::optional<std::uint64_t> available_memory_bytes();

}  // namespace fabricsim::sim
