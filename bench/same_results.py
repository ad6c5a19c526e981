#!/usr/bin/env python3
"""Check that two fabricsim binaries give the same results.json, apart from the
"simulator" section (wall time, rates), on a list of configurations.

  bench/same_results.py OLD_BINARY NEW_BINARY [--set key=value]... CONFIG...

Each configuration runs with both binaries into the same output folder (so the
configuration echo matches), one after the other; the two results.json files,
without "simulator", must be equal as text. Extra --set options go to every run.
Exit code 0 when every configuration matches, 1 otherwise. Standard library only.

--percentiles-within REL is for changes that alter percentiles on purpose (the
binned stats::Distribution): p50 / p99 / p99.9 may then differ by at most REL
relative, and a "mean" by 1e-12 relative (summation order); everything else must
still be equal. It prints the largest relative difference seen per key.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile


def run(binary, config, sets, out):
    cmd = [binary, "run", config, "--out", str(out), "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    done = subprocess.run(cmd, capture_output=True, text=True)
    results = out / "results.json"
    if not results.exists():
        return None, f"exit {done.returncode}: {done.stderr.strip()[-500:]}"
    data = json.loads(results.read_text())
    data.pop("simulator", None)
    return json.dumps(data, indent=1, sort_keys=True), None


PERCENTILES = ("p50", "p99", "p99.9")


def compare(a, b, rel, worst, path="$", key=None):
    """First difference between two results trees that the tolerances do not allow, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"{path}: keys {sorted(a.keys() ^ b.keys())}"
        for k in sorted(a):
            why = compare(a[k], b[k], rel, worst, f"{path}.{k}", k)
            if why:
                return why
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            why = compare(x, y, rel, worst, f"{path}[{i}]", key)
            if why:
                return why
        return None
    if a == b:
        return None
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    bound = rel if key in PERCENTILES else 1e-12 if key == "mean" else None
    if numbers and bound is not None:
        diff = abs(a - b) / abs(a) if a else float("inf")
        worst[key] = max(worst.get(key, 0.0), diff)
        if diff <= bound:
            return None
    return f"{path}: {a} vs {b}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--set", action="append", default=[], dest="sets", help="key=value for every run")
    ap.add_argument("--percentiles-within", type=float, metavar="REL",
                    help="allow p50/p99/p99.9 to differ by REL relative (and means by 1e-12)")
    args = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="same_results_") as tmp:
        for config in args.configs:
            out = pathlib.Path(tmp) / pathlib.Path(config).stem
            a, err_a = run(args.old, config, args.sets, out)
            b, err_b = run(args.new, config, args.sets, out)
            if a is not None and b is not None and a != b and args.percentiles_within is not None:
                worst = {}
                why = compare(json.loads(a), json.loads(b), args.percentiles_within, worst)
                if why is None:
                    spread = ", ".join(f"{k} {v:.2e}" for k, v in sorted(worst.items()))
                    print(f"within {config} (largest relative differences: {spread})")
                    continue
                failed += 1
                print(f"DIFF {config}: {why}")
                continue
            if a is None or b is None or a != b:
                failed += 1
                why = err_a or err_b or "results differ"
                if a is not None and b is not None:
                    la, lb = a.splitlines(), b.splitlines()
                    first = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
                    why += f" (first difference at line {first + 1}: {la[first:first + 1]} vs {lb[first:first + 1]})"
                print(f"DIFF {config}: {why}")
            else:
                print(f"same {config} ({len(a)} chars)")
    alike = "identical" if args.percentiles_within is None else "identical or within the tolerances"
    print(f"{len(args.configs) - failed}/{len(args.configs)} {alike}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
