#!/usr/bin/env python3
"""Smoke test of the benchmark command (not a timed test): bench/bench.py --tiny runs
one tiny scenario and must print one valid JSON object with every field; with --repeat 3
the fastest of three runs, with the median and the three wall times beside it; the
reference of S2 (bench/hop_floor) runs and the ratio to it is fabricsim's ns per hop over
the fastest floor."""
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
sys.path.insert(0, os.path.dirname(bench))
import bench as bench_module  # noqa: E402

# The reference of S2 and S4: the bare event loop over the same simulated time, and the ratio.
floor = os.path.join(os.path.dirname(fabricsim), "bench", "hop_floor")
ns = bench_module.floor_ns_per_hop(floor, r)
if not isinstance(ns, (int, float)) or ns <= 0:
    sys.exit(f"{floor} over {r['simulated_time_ns']} ns: expected a positive ns per hop, got {ns!r}")
rated = bench_module.with_floor({"status": "ok", "simulation_wall_time_s": 2.0, "packet_hops": 1_000_000},
                                [None, 500.0, 400.0])
if (rated.get("ns_per_hop"), rated.get("floor_ns_per_hop"), rated.get("floor_ratio")) != (2000.0, 400.0, 5.0):
    sys.exit(f"with_floor: 2 s over 1e6 hops against the fastest floor of 400 ns is 2000 ns, ratio 5: {rated}")
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
