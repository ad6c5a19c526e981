#!/usr/bin/env bash
# The tests: install what is missing, build, run the whole suite with ctest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${FABRICSIM_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
ctest --test-dir "$BUILD" --output-on-failure --parallel "$(nproc)" "$@"
