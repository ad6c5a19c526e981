#!/usr/bin/env python3
"""Smoke test of bench/hop_floor (not a timed test): both event queues simulate S2's
fabric alike, and the fabric does what theory says: it carries its offered load at 0.4,
a packet crosses (3 x 2 + 12 x 4 + 48 x 6) / 63 = 5.43 links on average (uniform
destinations on a 4-ary 3-tree), and no packet beats the zero-load latency of the
shortest path."""
import json
import subprocess
import sys

floor = sys.argv[1]
out = subprocess.run([floor, "50"], capture_output=True, text=True)
if out.returncode != 0:
    sys.exit(f"hop_floor exited {out.returncode}: {out.stderr}")
records = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
if [r.get("queue") for r in records] != ["heap", "wheel"]:
    sys.exit(f"expected a heap line and a wheel line: {out.stdout}")
simulated = ["injected_packets", "delivered_packets", "packet_hops", "events", "accepted_load", "mean_latency_ns"]
heap, wheel = records
if any(heap[f] != wheel[f] for f in simulated):
    sys.exit(f"the two queues simulated differently: {heap} {wheel}")
if not 0 < heap["delivered_packets"] <= heap["injected_packets"]:
    sys.exit(f"delivered must be positive and at most injected: {heap}")
if abs(heap["accepted_load"] - 0.4) > 0.02:
    sys.exit(f"accepted load {heap['accepted_load']} at offered 0.4 (below saturation they agree)")
links = (3 * 2 + 12 * 4 + 48 * 6) / 63
if abs(heap["packet_hops"] / heap["delivered_packets"] / links - 1) > 0.02:
    sys.exit(f"{heap['packet_hops'] / heap['delivered_packets']:.3f} links per packet, theory {links:.3f}")
# Shortest path: NIC -> leaf (36 ns to the header + 100 ns pipeline) -> NIC (36 ns + 21 ns tail).
if not 193 <= heap["mean_latency_ns"] < 2000:
    sys.exit(f"mean latency {heap['mean_latency_ns']} ns: below the zero-load minimum or saturated")
for f in ["wall_time_s", "delivered_packets_per_wall_s", "ns_per_hop"]:
    if not all(r[f] > 0 for r in records):
        sys.exit(f"{f} must be positive: {records}")
bad = subprocess.run([floor, "-1"], capture_output=True, text=True)
if bad.returncode != 2 or "usage" not in bad.stderr:
    sys.exit(f"a bad duration must print the usage and exit 2, got {bad.returncode}: {bad.stderr}")
