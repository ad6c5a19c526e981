#!/usr/bin/env python3
"""Elaboration time and memory of large fabrics: k-ary 3-trees (3-tier fat trees) of
2,197, 8,000 and 32,768 endpoints (k = 13, 20, 32) with S2's switch, link and traffic
settings, a 1 us run of light uniform traffic on one lane.

Per size, one JSON object per line: `fabricsim validate`'s wall time and peak memory
(the child's ru_maxrss), and of the run: `elaboration_s` (building the model),
`elaboration_peak_memory_bytes`, `peak_memory_bytes` (results built, before they are
written), the whole process's peak (`process_peak_bytes`, results.json written too) and
each per endpoint. A child's peak includes this process's size when it forks (about
15 MB). Standard library only; see docs/performance.md.
"""
import argparse
import json
import mmap
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
S2 = os.path.join(HERE, "s2_kary_ntree.yaml")


def child(cmd):
    """Runs `cmd`; returns (wall seconds, the child's peak resident bytes)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"scale.py: {' '.join(cmd)} failed: {err.strip()}")
    return wall, usage.ru_maxrss * 1024  # Linux: KiB


def simulator_section(path):
    """results.json's "simulator" section, read without loading the rest: a child's
    ru_maxrss starts from this process's size when it forks, so this one stays small."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        start = m.find(b'\n  "simulator": ')
        end = m.find(b"\n  }", start)
        if start < 0 or end < 0:
            sys.exit(f"scale.py: no simulator section in {path}")
        return json.loads(m[start + len(b'\n  "simulator": '):end + 4])


def measure(fabricsim, k, duration, extra):
    sets = [f"topology.k={k}", "topology.n=3"] + extra
    args = [a for s in sets for a in ("--set", s)]
    validate_wall, validate_peak = child([fabricsim, "validate", S2] + args)
    with tempfile.TemporaryDirectory(prefix="fabricsim_scale_") as out:
        run_args = args + ["--set", f"simulation.duration={duration}", "--set", "simulation.warmup=0us",
                           "--set", "simulation.threads=1", "--set", "traffic.load=0.05", "--out", out, "--quiet"]
        run_wall, process_peak = child([fabricsim, "run", S2] + run_args)
        sim = simulator_section(os.path.join(out, "results.json"))
    endpoints = k ** 3
    per = lambda b: round(b / endpoints) if b is not None else None  # noqa: E731
    return dict(
        topology=f"kary_ntree k={k} n=3",
        endpoints=endpoints,
        switches=3 * k * k,
        validate_wall_s=round(validate_wall, 3),
        validate_peak_bytes=validate_peak,
        run_wall_s=round(run_wall, 3),
        elaboration_s=sim["elaboration_s"],
        elaboration_peak_memory_bytes=sim["elaboration_peak_memory_bytes"],
        peak_memory_bytes=sim["peak_memory_bytes"],
        process_peak_bytes=process_peak,
        elaboration_bytes_per_endpoint=per(sim["elaboration_peak_memory_bytes"]),
        peak_bytes_per_endpoint=per(sim["peak_memory_bytes"]),
        process_peak_bytes_per_endpoint=per(process_peak),
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fabricsim", default=os.path.join(HERE, "..", "build", "fabricsim"))
    ap.add_argument("--k", default="13,20,32", help="comma-separated k of the k-ary 3-trees (k^3 endpoints)")
    ap.add_argument("--duration", default="1us", help="simulated time of each run")
    ap.add_argument("--set", action="append", default=[], help="key=value for every run")
    a = ap.parse_args()
    for k in (int(x) for x in a.k.split(",")):
        rec = measure(a.fabricsim, k, a.duration, a.set)
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
