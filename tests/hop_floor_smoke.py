#!/usr/bin/env python3
"""Smoke test of bench/hop_floor (not a timed test): both event queues simulate S2's
fabric alike, and the fabric does what theory says: it carries its offered load at 0.4,
a packet crosses (3 x 2 + 12 x 4 + 48 x 6) / 63 = 5.43 links on average (uniform
destinations on a 4-ary 3-tree), and at a load of 0.01 the mean latency is the
zero-load closed form over the three path lengths."""
import json
import subprocess
import sys

floor = sys.argv[1]
simulated = ["injected_packets", "delivered_packets", "packet_hops", "events", "accepted_load", "mean_latency_ns"]


def run(*args):
    """The heap's record, once the wheel's simulated the same."""
    out = subprocess.run([floor, *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"hop_floor exited {out.returncode}: {out.stderr}")
    records = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    if [r.get("queue") for r in records] != ["heap", "wheel"]:
        sys.exit(f"expected a heap line and a wheel line: {out.stdout}")
    heap, wheel = records
    if any(heap[f] != wheel[f] for f in simulated):
        sys.exit(f"the two queues simulated differently: {heap} {wheel}")
    for f in ["wall_time_s", "delivered_packets_per_wall_s", "ns_per_hop"]:
        if not all(r[f] > 0 for r in records):
            sys.exit(f"{f} must be positive: {records}")
    return heap


heap = run("50")
if not 0 < heap["delivered_packets"] <= heap["injected_packets"]:
    sys.exit(f"delivered must be positive and at most injected: {heap}")
if abs(heap["accepted_load"] - 0.4) > 0.02:
    sys.exit(f"accepted load {heap['accepted_load']} at offered 0.4 (below saturation they agree)")
links = (3 * 2 + 12 * 4 + 48 * 6) / 63
if abs(heap["packet_hops"] / heap["delivered_packets"] / links - 1) > 0.02:
    sys.exit(f"{heap['packet_hops'] / heap['delivered_packets']:.3f} links per packet, theory {links:.3f}")
# Zero load: a path of L links crosses L - 1 switches: L x 36 ns (first bit out to header
# in) + (L - 1) x 100 ns (pipeline) + 21 ns (the last link's tail); 2, 4 and 6 links for 3,
# 12 and 48 of the 63 destinations.
zero_load = sum(n * (path * 36 + (path - 1) * 100 + 21) for n, path in [(3, 2), (12, 4), (48, 6)]) / 63
if not zero_load < heap["mean_latency_ns"] < 2 * zero_load:
    sys.exit(f"mean latency {heap['mean_latency_ns']} ns at 0.4: below zero load ({zero_load:.1f} ns) or saturated")
light = run("200", "0.01")
if abs(light["mean_latency_ns"] / zero_load - 1) > 0.02:
    sys.exit(f"mean latency {light['mean_latency_ns']} ns at 0.01 load, zero-load closed form {zero_load:.1f} ns")
for bad_args in (["-1"], ["50", "1.5"]):
    bad = subprocess.run([floor, *bad_args], capture_output=True, text=True)
    if bad.returncode != 2 or "usage" not in bad.stderr:
        sys.exit(f"{bad_args} must print the usage and exit 2, got {bad.returncode}: {bad.stderr}")
