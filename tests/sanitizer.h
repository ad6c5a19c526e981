// Whether this test binary is built with AddressSanitizer (gcc defines
// __SANITIZE_ADDRESS__, clang answers __has_feature): tests that bound memory or run
// long scenarios adapt to it.
#pragma once

namespace fabricsim::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace fabricsim::test
