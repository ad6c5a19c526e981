#!/usr/bin/env bash
# The fast `fabricsim` for long runs and the benchmark figures (docs/performance.md):
# Release with profile-guided and link-time optimisation, in build-fast/ (the command
# only, no tests). Its results must be the same bit for bit as the Release build's: the
# script checks that before it says the build is done.
#   1. instrumented build (FABRICSIM_PGO=generate)
#   2. training runs, each a few seconds: S1, S2, S3 of bench/ and every example, short,
#      so InfiniBand and RoCE, credits and PFC, raw traffic and RDMA are all profiled
#   3. optimised build from that profile (FABRICSIM_PGO=use, LTO)
#   4. check: build/fabricsim (scripts/build.sh fabricsim) and the fast build give the
#      same results.json on every example and S1-S3 at 30 us (bench/same_results.py);
#      any difference fails the script
#   FABRICSIM_FAST_BUILD_DIR   where (default build-fast/)
#   FABRICSIM_BUILD_DIR        the Release build checked against (default build/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${FABRICSIM_FAST_BUILD_DIR:-$ROOT/build-fast}"
configure() {
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFABRICSIM_TESTS=OFF -DFABRICSIM_RTL=OFF "$@" > /dev/null
}

configure -DFABRICSIM_PGO=generate -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF
cmake --build "$BUILD" --parallel "$(nproc)" --target fabricsim
rm -rf "$BUILD/pgo" "$BUILD/training"
train() {  # config, then --set options
  local config="$1"; shift
  "$BUILD/fabricsim" run "$ROOT/$config" --quiet --out "$BUILD/training/$(basename "$config" .yaml)" "$@"
}
train bench/s1_switch64.yaml --set simulation.duration=100us
train bench/s2_kary_ntree.yaml --set simulation.duration=60us
train bench/s3_leafspine_allreduce.yaml --set simulation.duration=200us
for example in "$ROOT"/examples/*.yaml; do
  train "examples/$(basename "$example")" --set simulation.duration=20us --set simulation.warmup=0us
done
rm -rf "$BUILD/training"

configure -DFABRICSIM_PGO=use -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON
cmake --build "$BUILD" --parallel "$(nproc)" --target fabricsim
"$ROOT/scripts/build.sh" fabricsim
python3 "$ROOT/bench/same_results.py" "${FABRICSIM_BUILD_DIR:-$ROOT/build}/fabricsim" "$BUILD/fabricsim" \
  --set simulation.duration=30us --set simulation.warmup=5us "$ROOT"/examples/*.yaml "$ROOT"/bench/s[123]_*.yaml
echo "build_fast: $BUILD/fabricsim"
