#!/usr/bin/env bash
# Configures (once) and builds fabricsim in Release into build/, warnings as errors.
# Arguments are targets to build instead of all (e.g. `build.sh fabricsim`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${FABRICSIM_BUILD_DIR:-$ROOT/build}"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFABRICSIM_WERROR=ON
fi
cmake --build "$BUILD" --parallel "$(nproc)" ${1:+--target "$@"}
