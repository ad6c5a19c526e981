// Transparent huge pages for the model's memory.
//
// A large fabric's blocks (thousands of NICs, links, switch ports) spread over
// hundreds of MiB that every packet visits a few lines of: with 4 KiB pages
// nearly each of those visits also misses the TLB. Backing the heap with 2 MiB
// pages removes most of those misses (S3: about a fifth of the run, docs/performance.md).
#pragma once

#include <cstddef>

namespace fabricsim::sim {

/// Asks the kernel to back the process's heap (the brk heap and anonymous
/// read-write mappings) with transparent huge pages: MADV_HUGEPAGE for what
/// is allocated from now on in those regions, MADV_COLLAPSE (Linux 6.1) for
/// the 2 MiB ranges already mostly resident. Changes nothing the model computes;
/// does nothing where the kernel refuses or under AddressSanitizer (its shadow
/// memory is such a mapping). Returns the bytes collapsed into huge pages.
std::size_t use_huge_pages();

}  // namespace fabricsim::sim
