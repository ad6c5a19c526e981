#!/usr/bin/env bash
# The tests: install what is missing, build, run the whole suite with ctest; then build
# the same suite with AddressSanitizer + UndefinedBehaviorSanitizer in its own folder
# and run it again. Extra arguments go to both ctest runs (e.g. -R ZeroLoad).
#   FABRICSIM_BUILD_DIR         Release build (default build/)
#   FABRICSIM_ASAN_BUILD_DIR    sanitizer build (default build-asan/)
#   FABRICSIM_SANITIZERS=0      skip the sanitizer pass (on by default)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${FABRICSIM_BUILD_DIR:-$ROOT/build}"
ASAN_BUILD="${FABRICSIM_ASAN_BUILD_DIR:-$ROOT/build-asan}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
ctest --test-dir "$BUILD" --output-on-failure --parallel "$(nproc)" "$@"

if [ "${FABRICSIM_SANITIZERS:-1}" = 0 ]; then
  exit 0
fi
# -O1 keeps the sanitized suite quick (the test code itself is built at -O0, see
# tests/CMakeLists.txt); -g1 keeps line tables, so reports still name file and line, and
# compiles in three quarters of -g's time. The Verilated RTL twins are left out
# (FABRICSIM_RTL=OFF): generated code, slow to compile instrumented, and the Release
# pass above already runs their tests. So is MPI (FABRICSIM_MPI=OFF): Open MPI leaves its
# own allocations at exit, which LeakSanitizer would report. Configured on every run (quick
# once cached), so an existing build-asan/ gets these options too.
cmake -S "$ROOT" -B "$ASAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DFABRICSIM_SANITIZE=ON -DFABRICSIM_RTL=OFF -DFABRICSIM_MPI=OFF
cmake --build "$ASAN_BUILD" --parallel "$(nproc)"
# Any report fails the test that made it: leaks are checked at every process exit,
# ASan aborts on its first error, UBSan halts on its first finding (-fno-sanitize-recover).
# No suppressions are needed: libsystemc leaves nothing unreachable at exit.
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  ctest --test-dir "$ASAN_BUILD" --output-on-failure --parallel "$(nproc)" "$@"
