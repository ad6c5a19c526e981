#!/usr/bin/env bash
# rtl_coverage.sh [OUT_DIR]: coverage of the RTL twins on the shared vectors.
# Configures (once) and builds build-cov/ with -DFABRICSIM_RTL_COVERAGE=ON (the vector-test
# models Verilated with --coverage: line, toggle and the cover properties), runs the vector
# tests that must pass (not the deliberately broken blocks) with one coverage file per test,
# merges them and writes into OUT_DIR (default build-cov/rtl_coverage):
#   coverage.dat   merged points (verilator_coverage input)
#   coverage.info  the same as lcov tracefile (genhtml coverage.info -o html)
#   annotated/     each source with a count per line ("%" marks a line below 1)
#   summary.txt    per block: line, branch, toggle and cover points hit / total, every
#                  cover property with its count, and the signal bits that never toggled
#                  (scripts/rtl_coverage_summary.py)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${FABRICSIM_COV_BUILD_DIR:-$ROOT/build-cov}"
OUT="${1:-$BUILD/rtl_coverage}"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFABRICSIM_WERROR=ON \
    -DFABRICSIM_RTL=ON -DFABRICSIM_RTL_COVERAGE=ON "${launcher[@]}"
fi
cmake --build "$BUILD" --parallel "$(nproc)" --target test_rtl_vectors

rm -rf "$OUT"
mkdir -p "$OUT/tests"
FABRICSIM_RTL_COVERAGE="$OUT/tests" "$BUILD/tests/test_rtl_vectors" \
  --gtest_filter='RtlVectors.*-RtlVectors.Broken*' --gtest_brief=1
verilator_coverage --write "$OUT/coverage.dat" "$OUT"/tests/*.dat
verilator_coverage --write-info "$OUT/coverage.info" "$OUT/coverage.dat"
verilator_coverage --annotate "$OUT/annotated" --annotate-all --annotate-min 1 "$OUT/coverage.dat" >/dev/null
python3 "$ROOT/scripts/rtl_coverage_summary.py" "$OUT/coverage.dat" | tee "$OUT/summary.txt"
echo "rtl_coverage: $OUT/{coverage.dat,coverage.info,annotated/,summary.txt}"
