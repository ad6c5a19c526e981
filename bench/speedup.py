#!/usr/bin/env python3
"""fabricsim speed comparison of two binaries: runs the benchmark scenarios with both,
alternating in rounds (OLD then NEW, then NEW then OLD, ...), so both meet the same
minutes of a shared machine, and prints one JSON object per scenario (one per line)
with each binary's record as bench.py --repeat gives it (its fastest run, the median
and every wall time) and the ratios OLD / NEW (above 1: NEW is faster).

    bench/speedup.py OLD_BINARY NEW_BINARY [--only S2] [--rounds 5] [--threads N] [--quick] [--set K=V]

Only the speed: whether the two simulate the same is bench/same_results.py's check
(each side gives its event and packet counts; the runs of one side must agree). On this project's shared
two-core machines one run of S2 can be a third slower than the next; a change worth
less than a few per cent needs more rounds than that to show, or callgrind's counts
(bench/profile.py). Standard library only.
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the scenarios and one run)


# What a side's record leaves out: the scenario's own fields, given once.
SCENARIO_FIELDS = ("scenario", "what", "config", "set")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old", help="the binary to compare against (e.g. a copy of build/fabricsim before a change)")
    ap.add_argument("new", help="the binary measured")
    ap.add_argument("--only", default="S2", help="comma-separated scenarios (default: S2)")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each binary per scenario (default 5)")
    ap.add_argument("--out", default=None, help="folder for each run's results (default: a temporary folder)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra override for every run")
    bench.add_run_arguments(ap)
    args = ap.parse_args()
    if args.rounds < 1:
        sys.exit("speedup: --rounds: at least 1")
    for binary in (args.old, args.new):
        if not os.access(binary, os.X_OK):
            sys.exit(f"speedup: {binary}: no fabricsim binary")
    args.fabricsim = args.new  # (bench.selected checks it)
    out_dir = args.out or tempfile.mkdtemp(prefix="fabricsim_speedup_")
    failed = False
    for name, what, config, sets in bench.planned_runs(args, "speedup"):
        skipped = bench.skipped_without_rtl(name, what, args.old, config, sets) or \
            bench.skipped_without_rtl(name, what, args.new, config, sets)
        if skipped:
            print(json.dumps(skipped), flush=True)
            continue
        runs = {"old": [], "new": []}
        for k in range(args.rounds):
            for key in (("old", "new") if k % 2 == 0 else ("new", "old")):
                binary = args.old if key == "old" else args.new
                runs[key].append(bench.bench(name, what, config, sets, binary, os.path.join(out_dir, key)))
        record = {"scenario": name, "what": what, "config": os.path.relpath(config), "set": sets, "rounds": args.rounds}
        # Each side as bench.py --repeat reports it: its fastest run, the median and every wall time.
        old, new = (bench.best_of(runs[key]) for key in ("old", "new"))
        bad = next((r for r in (old, new) if r["status"] != "ok"), None)
        if bad:
            record.update(status="failed", error=bad.get("error"))
            failed = True
        else:
            old, new = ({k: v for k, v in r.items() if k not in SCENARIO_FIELDS} for r in (old, new))
            record.update(status="ok", old=old, new=new,
                          speedup_min=round(old["wall_time_s"] / new["wall_time_s"], 3),
                          speedup_median=round(old["wall_time_s_median"] / new["wall_time_s_median"], 3))
        print(json.dumps(record), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
