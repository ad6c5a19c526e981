#!/usr/bin/env python3
"""Smoke test of the benchmark command (not a timed test): bench/bench.py --tiny runs
one tiny scenario and must print one valid JSON object with every field; with --repeat 3
the fastest of three runs, with the median and the three wall times beside it."""
import sys

from smoke_json import one_json_line

bench, fabricsim = sys.argv[1], sys.argv[2]
r, line = one_json_line([sys.executable, bench, "--tiny", "--fabricsim", fabricsim])
fields = ["wall_time_s", "simulated_time_ns", "events", "delivered_packets_per_wall_s", "packet_hops_per_wall_s",
          "peak_memory_bytes", "delivered_packets", "packet_hops"]
missing = [f for f in fields if not isinstance(r.get(f), (int, float)) or r[f] <= 0]
if r.get("status") != "ok" or missing:
    sys.exit(f"bad record (status {r.get('status')}, missing or not positive: {missing}): {line}")
if not isinstance(r.get("huge_page_mib"), int) or r["huge_page_mib"] < 0:
    sys.exit(f"huge_page_mib must be a count of MiB, got {r.get('huge_page_mib')!r}")
if not isinstance(r.get("build"), str) or not r["build"].startswith(("Release", "Debug", "RelWithDebInfo", "MinSizeRel")):
    sys.exit(f"build must name the CMake build type, got {r.get('build')!r}")
if abs(r["simulated_time_ns"] - 5000) > 1e-6:
    sys.exit(f"the tiny scenario simulates 5 us, got {r['simulated_time_ns']} ns")

r, line = one_json_line([sys.executable, bench, "--tiny", "--repeat", "3", "--fabricsim", fabricsim])
runs = r.get("wall_time_s_runs")
if r.get("status") != "ok" or r.get("runs") != 3 or not isinstance(runs, list) or len(runs) != 3:
    sys.exit(f"--repeat 3: expected three runs, got: {line}")
if r["wall_time_s"] != min(runs) or not min(runs) <= r["wall_time_s_median"] <= max(runs):
    sys.exit(f"--repeat 3: the record is the fastest run and the median lies between the runs: {line}")
print("ok:", line)
