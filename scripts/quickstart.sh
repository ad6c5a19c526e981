#!/usr/bin/env bash
# The main job: install what is missing, build, run the quickstart fabric.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
cd "$ROOT"
"${FABRICSIM_BUILD_DIR:-$ROOT/build}/fabricsim" run examples/quickstart.yaml
