#!/usr/bin/env bash
# The main job: install what is missing, build, run the quickstart fabric, then a
# small InfiniBand NDR vs RoCEv2 400GbE comparison (fabricsim compare on the
# presets: 2 B write latency, AllReduce, incast, training step on a 16-endpoint
# leaf-spine), with its table, compare.csv/json and plots in results/compare_quickstart/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
cd "$ROOT"
FABRICSIM="${FABRICSIM_BUILD_DIR:-$ROOT/build}/fabricsim"
"$FABRICSIM" run examples/quickstart.yaml
echo
"$FABRICSIM" compare presets/ib_ndr.yaml presets/roce_400g.yaml \
  --topology '{kind: leaf_spine, radix: 8, leaves: 4}' \
  --allreduce-size 1MiB --incast-bytes 256KiB --out results/compare_quickstart
