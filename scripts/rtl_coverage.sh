#!/usr/bin/env bash
# rtl_coverage.sh [--config FILE] [--set KEY=VALUE ...] [OUT_DIR]: coverage of the RTL twins
# on the shared vectors and in one fabric run.
# Configures (once) and builds build-cov/ with -DFABRICSIM_RTL_COVERAGE=ON (every Verilated
# model with --coverage: line, toggle and the cover properties), runs the vector tests that
# must pass (not the deliberately broken blocks) with one coverage file per test, merges them
# and writes into OUT_DIR (default build-cov/rtl_coverage):
#   coverage.dat   merged points (verilator_coverage input)
#   coverage.info  the same as lcov tracefile (genhtml coverage.info -o html)
#   annotated/     each source with a count per line ("%" marks a line below 1)
#   summary.txt    per block: line, branch, toggle and cover points hit / total, every
#                  cover property with its count, and the signal bits that never toggled
#                  (scripts/rtl_coverage_summary.py)
# Then runs one fabric configuration with its RTL blocks in use (`fabricsim run
# --rtl-coverage`; default examples/single_switch.yaml, 20us, 2 VLs, VOQ with the RTL iSLIP
# allocator and the RTL credit managers of every link; --config FILE replaces it and its
# --set overrides, --set adds overrides) and writes the same four
# files for that run, every block instance's points, into OUT_DIR/fabric/, the run's
# results in OUT_DIR/fabric/results/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${FABRICSIM_COV_BUILD_DIR:-$ROOT/build-cov}"
CONFIG="$ROOT/examples/single_switch.yaml"
SETS=(simulation.duration=20us simulation.warmup=2us switch.buffer=voq switch.allocator=islip
      switch.allocator_impl=rtl switch.vls=2 "traffic.sl=[0, 1]" link.credit_manager_impl=rtl)
USER_SETS=()
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --config) CONFIG="$2"; SETS=(); shift 2 ;;
    --set) USER_SETS+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) echo "rtl_coverage: unknown option $1 (--config FILE, --set KEY=VALUE, OUT_DIR)" >&2; exit 2 ;;
    *) OUT="$1"; shift ;;
  esac
done
OUT="${OUT:-$BUILD/rtl_coverage}"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFABRICSIM_WERROR=ON \
    -DFABRICSIM_RTL=ON -DFABRICSIM_RTL_COVERAGE=ON "${launcher[@]}"
fi
cmake --build "$BUILD" --parallel "$(nproc)" --target test_rtl_vectors fabricsim

# Summary, lcov tracefile and annotated sources of a coverage file, beside it.
report() {
  local dir="$1"
  verilator_coverage --write-info "$dir/coverage.info" "$dir/coverage.dat"
  verilator_coverage --annotate "$dir/annotated" --annotate-all --annotate-min 1 "$dir/coverage.dat" >/dev/null
  python3 "$ROOT/scripts/rtl_coverage_summary.py" "$dir/coverage.dat" | tee "$dir/summary.txt"
}

rm -rf "$OUT"
mkdir -p "$OUT/tests"
FABRICSIM_RTL_COVERAGE="$OUT/tests" "$BUILD/tests/test_rtl_vectors" \
  --gtest_filter='RtlVectors.*-RtlVectors.Broken*' --gtest_brief=1
verilator_coverage --write "$OUT/coverage.dat" "$OUT"/tests/*.dat
report "$OUT"

FABRIC="$OUT/fabric"
mkdir -p "$FABRIC"
args=()
for s in "${SETS[@]}" ${USER_SETS[@]+"${USER_SETS[@]}"}; do args+=(--set "$s"); done
echo "rtl_coverage: fabric run: fabricsim run $CONFIG ${args[*]}"
"$BUILD/fabricsim" run "$CONFIG" "${args[@]}" --out "$FABRIC/results" --rtl-coverage "$FABRIC/coverage.dat" --quiet
report "$FABRIC"
echo "rtl_coverage: vectors: $OUT/{coverage.dat,coverage.info,annotated/,summary.txt}"
echo "rtl_coverage: fabric run: $FABRIC/{coverage.dat,coverage.info,annotated/,summary.txt,results/}"
