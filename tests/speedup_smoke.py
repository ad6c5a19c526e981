#!/usr/bin/env python3
"""Smoke test of the speed comparison (not a timed test): bench/speedup.py runs the tiny
scenario with one binary as both sides, two rounds, and must print one JSON object with
each side's runs and the ratios; a missing binary is an error naming it."""
import subprocess
import sys

from smoke_json import one_json_line

speedup, fabricsim = sys.argv[1], sys.argv[2]
r, line = one_json_line([sys.executable, speedup, fabricsim, fabricsim, "--tiny", "--rounds", "2"])
if r.get("status") != "ok" or r.get("rounds") != 2:
    sys.exit(f"bad record: {line}")
for key in ("old", "new"):
    s = r[key]
    if s.get("runs") != 2 or len(s.get("wall_time_s_runs", [])) != 2 or s["wall_time_s"] != min(s["wall_time_s_runs"]):
        sys.exit(f"{key}: two runs, the record the faster: {line}")
    if "scenario" in s:
        sys.exit(f"{key}: the scenario's fields are given once, not per side: {line}")
    if s["delivered_packets"] <= 0 or s["events"] <= 0:
        sys.exit(f"{key}: no packets or events counted: {line}")
if r["old"]["delivered_packets"] != r["new"]["delivered_packets"]:
    sys.exit(f"the same binary simulated differently: {line}")
if not r["speedup_min"] > 0 or not r["speedup_median"] > 0:
    sys.exit(f"ratios must be positive: {line}")
bad = subprocess.run([sys.executable, speedup, "/nonexistent/fabricsim", fabricsim, "--tiny"], capture_output=True,
                     text=True)
if bad.returncode == 0 or "/nonexistent/fabricsim" not in bad.stderr:
    sys.exit(f"a missing binary must be an error naming it, got {bad.returncode}: {bad.stderr}")
print("ok:", line)
