#!/usr/bin/env python3
"""Smoke test of the processes benchmark (not a timed test): bench/processes.py on S2 with
1 and 2 processes prints one JSON object per run, with a lane per process, every time
and memory figure positive, and the two-process run's results those of one process."""
import json
import subprocess
import sys

bench, fabricsim = sys.argv[1], sys.argv[2]
out = subprocess.run([sys.executable, bench, "--fabricsim", fabricsim, "--only", "S2", "--processes", "1,2"],
                     capture_output=True, text=True)
if out.returncode != 0:
    sys.exit(f"processes.py failed ({out.returncode}): {out.stderr}")
lines = out.stdout.splitlines()
if len(lines) != 2:
    sys.exit(f"one record per run expected: {out.stdout}")
for processes, line in zip((1, 2), lines):
    r = json.loads(line)
    if r["processes"] != processes or r["lanes"] != processes or r["endpoints"] != 64:
        sys.exit(f"{processes} processes: wrong run: {line}")
    for key in ("wall_s", "simulation_s", "peak_memory_bytes_process_0", "packet_hops"):
        if not r[key] > 0:
            sys.exit(f"{processes} processes: {key} must be positive: {line}")
    if not r["same_results_as_first"]:
        sys.exit(f"{processes} processes: results differ from one process's: {line}")
print("ok:", out.stdout)
