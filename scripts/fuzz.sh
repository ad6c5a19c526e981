#!/usr/bin/env bash
# Fuzzes the configuration reader (tests/fuzz/fuzz_config.cpp) with libFuzzer:
# installs clang and its fuzzer runtime if missing, builds build-fuzz/ (clang,
# ASan + UBSan, -DFABRICSIM_FUZZ=ON) and runs one job for a given time.
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer flags]      default 300 s
#   scripts/fuzz.sh 0 build-fuzz/artifacts/crash-...        replay one input
# Seeds: tests/fuzz/corpus/ (read only). Inputs that grow coverage go to
# build-fuzz/corpus/; findings (crash-*, oom-*, timeout-*, leak-*) to build-fuzz/artifacts/.
# Each finding becomes a case in tests/corpus/bad/ (or a unit test) once understood.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${FABRICSIM_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
TIME="${1:-300}"
shift || true

"$ROOT/scripts/setup.sh" clang libclang-rt-dev
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFABRICSIM_FUZZ=ON -DFABRICSIM_TESTS=OFF -DFABRICSIM_RTL=OFF
fi
cmake --build "$BUILD" --parallel "$(nproc)" --target fuzz_config

if [ "$TIME" = 0 ]; then  # replay the given inputs
  exec "$BUILD/tests/fuzz/fuzz_config" "$@"
fi
mkdir -p "$BUILD/corpus" "$BUILD/artifacts"
# -fork=1: one job in a child process, so a finding is saved and fuzzing goes on.
# Large but valid topologies (fat_tree k: 64) take seconds and gigabytes to validate:
# the limits below report them as timeout-/oom- findings instead of stalling the run.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
"$BUILD/tests/fuzz/fuzz_config" "$BUILD/corpus" "$ROOT/tests/fuzz/corpus" \
  -dict="$ROOT/tests/fuzz/config.dict" -max_total_time="$TIME" -fork=1 \
  -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=20 -rss_limit_mb=4096 -max_len=8192 \
  -artifact_prefix="$BUILD/artifacts/" -print_funcs=0 -print_final_stats=1 "$@"
findings=$(find "$BUILD/artifacts" -type f | wc -l)
echo "fuzz: $findings finding(s) in $BUILD/artifacts/ (replay one: scripts/fuzz.sh 0 FILE)"
