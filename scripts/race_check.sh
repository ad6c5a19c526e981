#!/usr/bin/env bash
# Data races between parallel lanes (simulation.threads): builds fabricsim with
# ThreadSanitizer in build-tsan/ (no tests, no RTL) and runs the lane scenarios of
# Determinism/LanesMatchOneLane, shortened, on 2 threads (3 with FABRICSIM_RACE_THREADS="2 3").
# Any ThreadSanitizer report fails the script (exit 66) and names the scenario. About 20
# minutes on two cores with the build.
#
#   scripts/race_check.sh            # every scenario
#   scripts/race_check.sh ring s2    # the scenarios whose name contains a word given
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build="${FABRICSIM_TSAN_BUILD_DIR:-build-tsan}"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="-fsanitize=thread -O1 -g" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DFABRICSIM_RTL=OFF -DBUILD_TESTING=OFF
fi
cmake --build "$build" --target fabricsim

s2="bench/s2_kary_ntree.yaml --set simulation.duration=10us --set simulation.warmup=1us"
ib="examples/allreduce_leafspine_ib.yaml"
# name | configuration and overrides
scenarios=(
  "s2_voq_packet_log|$s2 --packet-csv"
  "s2_shared_memory_adaptive|$s2 --set switch.buffer=shared_memory --set routing.algorithm=adaptive"
  "s2_sampler_credit_stalls|$s2 --set output.sample_interval=1us --set switch.input_buffer=12KiB --set traffic.load=0.8"
  "s2_pfc_ecn_dcqcn_rdma|$s2 --set link.framing=roce_v2 --set link.flow_control=pfc --set switch.pfc.xoff=4KiB --set switch.pfc.xon=2KiB --set switch.pfc.headroom=8KiB --set switch.input_buffer=64KiB --set switch.ecn.enabled=true --set traffic.transport=rdma --set nic.congestion_control.kind=dcqcn --set traffic.pattern=hotspot --set traffic.load=0.6"
  "s2_bit_errors_go_back_n|$s2 --set link.ber=1e-6 --set traffic.transport=rdma"
  "ring_allreduce_packet_log|$ib --set collective.sizes=[64KiB] --set collective.iterations=2 --set collective.channels=2 --packet-csv"
  "double_binary_tree|$ib --set collective.algorithm=double_binary_tree --set collective.sizes=[256KiB] --set collective.tree_chunk=32KiB --set collective.tree_slots=2"
  "alltoall|$ib --set collective.op=alltoall --set collective.algorithm=direct --set collective.sizes=[256KiB]"
  "sharp|$ib --set collective.algorithm=sharp --set switch.in_network_reduction=true --set collective.sizes=[64KiB,256KiB]"
  "training_step|examples/training_step_fattree.yaml --set training.forward=20us --set training.backward=40us --set training.optimizer=5us --set training.gradient_size=1MiB --set training.bucket_size=256KiB"
)
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=0"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for s in "${scenarios[@]}"; do
  name="${s%%|*}"
  args="${s#*|}"
  if [[ $# -gt 0 ]]; then
    pick=0
    for word in "$@"; do [[ "$name" == *"$word"* ]] && pick=1; done
    [[ $pick == 1 ]] || continue
  fi
  for threads in ${FABRICSIM_RACE_THREADS:-2}; do
    echo "race_check: $name, $threads threads"
    # shellcheck disable=SC2086  # the overrides are words
    if ! "$build/fabricsim" run $args --set simulation.threads=$threads --quiet --out "$out/$name" > "$out/log" 2>&1; then
      cat "$out/log"
      echo "race_check: $name on $threads threads failed (a ThreadSanitizer report above exits 66)" >&2
      exit 66
    fi
  done
done
echo "race_check: no data race found"
