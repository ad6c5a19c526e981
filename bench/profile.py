#!/usr/bin/env python3
"""fabricsim profile figures: runs the benchmark scenarios under callgrind with its
cache and branch model, counting only inside `sc_start` (the simulation, not
configuration, elaboration or results), and prints one JSON object per scenario (one
per line): instructions, level-1 data and instruction misses, last-level misses,
mispredicted branches and an estimate of cycles, in all and per link traversal.

    bench/profile.py [--fabricsim build/fabricsim] [--only S1,S2,S3] [--window 20us,40us]

A window FROM,TO runs the scenario twice, to FROM and to TO simulated, and reports the
difference: the steady state between them, without what happens once at the start (S3
builds its collective's transfer graph before 20 us). A single time reports one run
from 0. The counts do not depend on the machine's speed or load, only on the binary
and the cache sizes modelled (`--ll`: this machine's last level is 32 MiB, 16-way; left
alone, valgrind takes what the processor reports, which on a virtual machine can be
wrong). docs/performance.md has the figures and what they say.

Standard library only; needs valgrind.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the scenarios)

# The windows of docs/performance.md: S1 and S2 from 0 to 20 us, S3 between 20 and 40 us.
WINDOWS = {"S1": "20us", "S2": "20us", "S3": "20us,40us", "S4": "20us", "S5": "5us,10us"}
TINY_WINDOW = "2us,5us"
# callgrind's event names (the "Events :" line of its summary).
EVENTS = ["Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim"]
L1_MISS_CYCLES = 10   # a level-1 miss served by the second level, a mispredicted branch
LL_HIT_CYCLES = 40    # a level-1 data miss served by the last level (S3's misses are)


def parse_window(text):
    """TIME or FROM,TO (FROM before TO), each a number with ns, us or ms."""
    unit_ns = {"ns": 1, "us": 1e3, "ms": 1e6}
    parts = [p.strip() for p in text.split(",") if p.strip()]
    found = [re.fullmatch(r"(\d+(?:\.\d+)?)(ns|us|ms)", p) for p in parts]
    if len(parts) not in (1, 2) or not all(found):
        sys.exit(f"profile: --window {text!r}: expected TIME or FROM,TO with units ns/us/ms (e.g. 20us,40us)")
    ns = [float(m.group(1)) * unit_ns[m.group(2)] for m in found]
    if ns[0] <= 0 or (len(ns) == 2 and ns[0] >= ns[1]):
        sys.exit(f"profile: --window {text!r}: times must be positive and FROM before TO")
    return parts


def callgrind(fabricsim, config, sets, duration, out_dir, ll):
    """Starts one run under callgrind to `duration`; returns (process, log path, run folder)."""
    tag = duration.replace(".", "_")
    run_dir = os.path.join(out_dir, f"run_{tag}")
    log = os.path.join(out_dir, f"valgrind_{tag}.log")
    cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes",
           "--toggle-collect=sc_core::sc_start*", f"--callgrind-out-file={os.path.join(out_dir, 'callgrind.out.' + tag)}"]
    if ll:
        cmd.append(f"--LL={ll}")
    cmd += [fabricsim, "run", config, "--quiet", "--out", run_dir, "--set", f"simulation.duration={duration}"]
    for s in sets:
        cmd += ["--set", s]
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=f)
    return proc, log, run_dir


def counts(log, run_dir):
    """callgrind's totals inside sc_start, and the run's link traversals and deliveries."""
    with open(log) as f:
        text = f.read()
    names = re.search(r"Events\s*:\s*(.+)", text)
    values = re.search(r"Collected\s*:\s*(.+)", text)
    if not names or not values:
        tail = "\n".join(text.strip().splitlines()[-5:])
        raise RuntimeError(f"{log}: no callgrind summary (did the run fail?):\n{tail}")
    c = dict(zip(names.group(1).split(), map(int, values.group(1).split())))
    missing = [e for e in EVENTS if e not in c]
    if missing:
        raise RuntimeError(f"{log}: callgrind did not count {', '.join(missing)}")
    with open(os.path.join(run_dir, "results.json")) as f:
        r = json.load(f)
    c["link_traversals"] = r["simulator"]["packet_hops"]
    c["delivered_packets"] = r["packets"]["delivered"]
    return c


def figures(c):
    l1d, l1i = c["D1mr"] + c["D1mw"], c["I1mr"]
    mispredicts = c["Bcm"] + c["Bim"]
    return {
        "instructions": c["Ir"],
        "l1_data_misses": l1d,
        "l1_instruction_misses": l1i,
        "last_level_misses": c["ILmr"] + c["DLmr"] + c["DLmw"],
        "mispredicted_branches": mispredicts,
        # Ir + 10 x (L1 misses + mispredicts): what docs/performance.md calls estimated cycles
        "estimated_cycles": c["Ir"] + L1_MISS_CYCLES * (l1d + l1i + mispredicts),
        # the same with each L1 data miss served by the last level
        "estimated_cycles_l1d_from_last_level": c["Ir"] + LL_HIT_CYCLES * l1d + L1_MISS_CYCLES * (l1i + mispredicts),
    }


def profile(name, config, sets, window, fabricsim, out_dir, ll):
    record = {"scenario": name, "config": os.path.relpath(config), "set": sets, "window": ",".join(window),
              "last_level": ll or "valgrind's default"}
    scenario_dir = os.path.join(out_dir, name.lower())
    os.makedirs(scenario_dir, exist_ok=True)
    runs = [callgrind(fabricsim, config, sets, d, scenario_dir, ll) for d in window]  # side by side
    try:
        for proc, log, _ in runs:
            if proc.wait() != 0:
                with open(log) as f:
                    tail = f.read().strip().splitlines()[-3:]
                raise RuntimeError(f"run exited {proc.returncode}: " + " / ".join(tail))
        c = [counts(log, run_dir) for _, log, run_dir in runs]
    except RuntimeError as e:
        record.update(status="failed", error=str(e))
        return record
    total = c[-1] if len(c) == 1 else {k: c[1][k] - c[0][k] for k in c[0]}
    f = figures(total)
    record.update(status="ok", link_traversals=total["link_traversals"], delivered_packets=total["delivered_packets"], **f)
    if total["link_traversals"] > 0:
        record["per_link_traversal"] = {k: round(v / total["link_traversals"], 1) for k, v in f.items()}
    record["callgrind_out"] = sorted(os.path.join(scenario_dir, n) for n in os.listdir(scenario_dir) if n.startswith("callgrind.out."))
    return record


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench.add_common_arguments(ap, "S1,S2,S3", "folder for the runs and callgrind outputs")
    ap.add_argument("--window", default=None,
                    help="TIME, or FROM,TO simulated (default per scenario: S1, S2 20us; S3 20us,40us)")
    ap.add_argument("--ll", default="33554432,16,64", metavar="SIZE,ASSOC,LINE",
                    help="last-level cache modelled (default: 32 MiB, 16-way, 64 B lines; 'auto': valgrind's own)")
    ap.add_argument("--tiny", action="store_true", help="the smoke test's tiny scenario, between 2 and 5 us")
    args = ap.parse_args()
    names = bench.selected(args, "profile")
    if not shutil.which("valgrind"):
        sys.exit("profile: valgrind not found (scripts/setup.sh installs it)")
    ll = None if args.ll == "auto" else args.ll
    if ll and not re.fullmatch(r"\d+,\d+,\d+", ll):
        sys.exit(f"profile: --ll {args.ll!r}: expected SIZE,ASSOC,LINE in bytes (e.g. 33554432,16,64) or auto")
    out_dir = args.out or tempfile.mkdtemp(prefix="fabricsim_profile_")
    if args.tiny:
        what, config, sets = bench.TINY
        runs = [("tiny", what, config, [s for s in sets if not s.startswith("simulation.duration")],
                 args.window or TINY_WINDOW)]
    else:
        runs = [(n,) + bench.SCENARIOS[n] + (args.window or WINDOWS[n],) for n in names]
    runs = [(name, what, os.path.join(HERE, config), sets + args.set, parse_window(window))
            for name, what, config, sets, window in runs]
    failed = False
    for name, what, config, sets, window in runs:
        skipped = bench.skipped_without_rtl(name, what, args.fabricsim, config, sets)
        if skipped:
            print(json.dumps(skipped), flush=True)
            continue
        record = profile(name, config, sets, window, args.fabricsim, out_dir, ll)
        failed = failed or record["status"] != "ok"
        print(json.dumps(record), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
