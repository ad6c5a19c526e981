#!/usr/bin/env bash
# The main job: install what is missing, build, run the quickstart fabric, then compare
# InfiniBand NDR and RoCEv2 400GbE (presets/): 2 B write latency, AllReduce and incast
# on a 16-endpoint leaf-spine (results/compare_quickstart/), and a generated GPT-style
# training job (examples/training/gpt_small.yaml: tp inside 8-GPU NVLink servers, pp, dp)
# over cluster sizes of 16 to 128 endpoints on radix-8 switches, 2-tier then 3-tier:
# iteration time, exposed communication, RoCE / IB ratio, bill of materials and cost
# (examples/prices/400g.yaml), table, CSV, JSON and plots in results/compare_quickstart_sizes/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
cd "$ROOT"
FABRICSIM="${FABRICSIM_BUILD_DIR:-$ROOT/build}/fabricsim"
"$FABRICSIM" run examples/quickstart.yaml
echo
"$FABRICSIM" compare presets/ib_ndr.yaml presets/roce_400g.yaml --workload latency,allreduce,incast \
  --topology '{kind: leaf_spine, radix: 8, leaves: 4}' \
  --allreduce-size 1MiB --incast-bytes 256KiB --out results/compare_quickstart
echo
"$FABRICSIM" compare presets/ib_ndr.yaml presets/roce_400g.yaml --workload training \
  --job examples/training/gpt_small.yaml --sizes 16,32,64,128 --radix 8 \
  --prices examples/prices/400g.yaml --out results/compare_quickstart_sizes
