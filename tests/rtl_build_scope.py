#!/usr/bin/env python3
"""The registered RTL models' headers stay inside their own libraries (rtl/README.md,
"Build"): no object outside a fabricsim_rtlm_* library depends on a --cc Verilated
header (Vcc_*), so a new or changed model recompiles nothing else. Reads the header
dependencies ninja recorded in the build folder (`ninja -t deps`).

Usage: rtl_build_scope.py NINJA BUILD_DIR
"""
import re
import subprocess
import sys


def main():
    ninja, build = sys.argv[1], sys.argv[2]
    deps = subprocess.run([ninja, "-C", build, "-t", "deps"], check=True, capture_output=True, text=True).stdout
    leaks, objects, model_objects = [], 0, 0
    target = None
    for line in deps.splitlines():
        if line and not line.startswith(" "):
            target = line.split(":")[0]
            objects += 1
            if "/fabricsim_rtlm_" in target:
                model_objects += 1
            continue
        header = line.strip()
        if target and "/fabricsim_rtlm_" not in target and re.search(r"/Vcc_[^/]*\.h$", header):
            leaks.append(f"{target} includes {header}")
    if model_objects == 0:
        print(f"no model object among the {objects} recorded: build the tree first")
        return 1
    if leaks:
        print("Verilated model headers seen outside their model library:\n  " + "\n  ".join(sorted(set(leaks))[:20]))
        return 1
    print(f"{objects} objects, {model_objects} in model libraries; no model header outside them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
