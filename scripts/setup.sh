#!/usr/bin/env bash
# Installs the Debian packages fabricsim needs, only those missing (idempotent).
#   scripts/setup.sh [EXTRA_PACKAGE]...   (scripts/fuzz.sh adds clang and its libFuzzer runtime)
# The sanitizer build (build-asan/) needs nothing extra: gcc's libasan/libubsan come with g++.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libsystemc-dev          # SystemC 2.3.4 with TLM-2.0
  libyaml-cpp-dev         # configuration
  nlohmann-json3-dev      # results.json
  libcli11-dev            # command line
  libgtest-dev libgmock-dev
  verilator               # RTL twins (rtl/): lint, Verilated SystemC models
  python3-matplotlib      # plots of `fabricsim compare` and `fabricsim report` (scripts/*.py, run with /usr/bin/python3)
  slurm-wlm slurm-client munge  # `fabricsim sweep --executor slurm`; tests start a private cluster (scripts/slurm_local.sh)
  chromium                # tests open the HTML report of `fabricsim report` in headless Chromium
  valgrind                # bench/profile.py (callgrind's cache and branch model); its smoke test
  libprotobuf-dev protobuf-compiler  # Chakra execution traces (testbench/chakra): protoc and the runtime
  openmpi-bin libopenmpi-dev  # distributed runs over processes (`mpirun -np N build/fabricsim run`; FABRICSIM_MPI)
)
PACKAGES+=("$@")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
