#!/usr/bin/env python3
"""Smoke test of the benchmark command (not a timed test): bench/bench.py --tiny runs
one tiny scenario and must print one valid JSON object with every field; with --repeat 3
the fastest of three runs, with the median and the three wall times beside it."""
import os
import sys
import tempfile

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
# The targets: judged on the record (S2's rate, S3's time, memory and a finished collective).
sys.path.insert(0, os.path.dirname(bench))
import bench as bench_module  # noqa: E402

ok_s2 = {"scenario": "S2", "status": "ok", "delivered_packets_per_wall_s": 1_000_000}
ok_s3 = {"scenario": "S3", "status": "ok", "wall_time_s": 119.9, "peak_memory_bytes": 4 * 2**30 - 1,
         "collective_finished": True}
cases = [(ok_s2, True), (dict(ok_s2, delivered_packets_per_wall_s=999_999), False), (ok_s3, True),
         (dict(ok_s3, wall_time_s=120.0), False), (dict(ok_s3, peak_memory_bytes=4 * 2**30), False),
         (dict(ok_s3, collective_finished=False), False)]
for record, met in cases:
    judged = bench_module.judge(dict(record))
    if judged.get("target_met") is not met or not judged.get("target"):
        sys.exit(f"target of {record}: expected met={met}, got {judged}")
if "target_met" in bench_module.judge({"scenario": "S1", "status": "ok"}):
    sys.exit("S1 has no target: no target_met")
# Peak memory is the run's own, not this process's: on Linux a child's ru_maxrss would
# carry the 512 MiB this process holds (as bench.py once held a parsed results.json).
held = bytearray(512 * 2**20)
held[::4096] = b"x" * (len(held) // 4096)
with tempfile.TemporaryDirectory() as out:
    what, config, sets = bench_module.TINY
    r = bench_module.bench("tiny", what, os.path.join(bench_module.HERE, config), sets, fabricsim, out)
del held
if r.get("status") != "ok" or not 2**20 < r["peak_memory_bytes"] < 256 * 2**20:
    sys.exit(f"the tiny run's peak memory is its own (a few tens of MiB), got {r.get('peak_memory_bytes')}: {r}")
print("ok:", line)
