#!/usr/bin/env python3
"""Smoke test of the profile command (not a timed test): bench/profile.py --tiny runs
the tiny scenario under callgrind between 2 and 5 us and must print one JSON object
whose counts are the difference of the two runs: positive, and per link traversal
consistent with the totals."""
import sys
import tempfile

from smoke_json import one_json_line

profile, fabricsim = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory(prefix="fabricsim_profile_smoke_") as folder:
    r, line = one_json_line([sys.executable, profile, "--tiny", "--fabricsim", fabricsim, "--out", folder])
fields = ["instructions", "l1_data_misses", "l1_instruction_misses", "mispredicted_branches", "estimated_cycles",
          "link_traversals", "delivered_packets"]
bad = [f for f in fields if not isinstance(r.get(f), int) or r[f] <= 0]
if r.get("status") != "ok" or bad or r.get("window") != "2us,5us":
    sys.exit(f"bad record (status {r.get('status')}, window {r.get('window')}, missing or not positive: {bad}): {line}")
expected = r["instructions"] + 10 * (r["l1_data_misses"] + r["l1_instruction_misses"] + r["mispredicted_branches"])
if r["estimated_cycles"] != expected:
    sys.exit(f"estimated_cycles {r['estimated_cycles']} is not Ir + 10 x (L1 misses + mispredicts) = {expected}")
per = r["per_link_traversal"]
if abs(per["instructions"] - r["instructions"] / r["link_traversals"]) > 0.05:
    sys.exit(f"per-traversal instructions {per['instructions']} do not divide the totals")
# Between 2 and 5 us the tiny scenario's 4 endpoints inject a few hundred packets.
if not 50 <= r["link_traversals"] <= 2000:
    sys.exit(f"implausible link traversals between 2 and 5 us: {r['link_traversals']}")
if len(r.get("callgrind_out", [])) != 2:
    sys.exit(f"expected the two runs' callgrind outputs, got {r.get('callgrind_out')}")
print("ok:", line)
