#!/usr/bin/env python3
"""Smoke test of the scale benchmark (not a timed test): bench/scale.py on k-ary 3-trees
of k = 2 and 3 prints one JSON object per size, with its endpoints and switches and every
time and memory figure positive, the peak with the results built at least the one at the
end of elaboration."""
import json
import subprocess
import sys

scale, fabricsim = sys.argv[1], sys.argv[2]
out = subprocess.run([sys.executable, scale, "--fabricsim", fabricsim, "--k", "2,3", "--duration", "200ns"],
                     capture_output=True, text=True)
if out.returncode != 0:
    sys.exit(f"scale.py failed ({out.returncode}): {out.stderr}")
lines = out.stdout.splitlines()
if len(lines) != 2:
    sys.exit(f"one record per size expected: {out.stdout}")
for k, line in zip((2, 3), lines):
    r = json.loads(line)
    if r["endpoints"] != k ** 3 or r["switches"] != 3 * k * k:
        sys.exit(f"k={k}: wrong shape: {line}")
    for key in ("validate_wall_s", "validate_peak_bytes", "run_wall_s", "elaboration_s", "elaboration_peak_memory_bytes",
                "peak_memory_bytes", "process_peak_bytes", "peak_bytes_per_endpoint"):
        if not r[key] > 0:
            sys.exit(f"k={k}: {key} must be positive: {line}")
    # Both read VmHWM, the first earlier (ru_maxrss counts a little differently: not compared).
    if r["peak_memory_bytes"] < r["elaboration_peak_memory_bytes"]:
        sys.exit(f"k={k}: peaks out of order: {line}")
print("ok:", out.stdout)
