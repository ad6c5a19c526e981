#!/usr/bin/env python3
"""Check that two fabricsim binaries give the same results.json, apart from the
"simulator" section (wall time, rates), on a list of configurations.

  bench/same_results.py OLD_BINARY NEW_BINARY [--set key=value]... CONFIG...

Each configuration runs with both binaries into the same output folder (so the
configuration echo matches), one after the other; the two results.json files,
without "simulator", must be equal as text. Extra --set options go to every run.
Exit code 0 when every configuration matches, 1 otherwise. Standard library only.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--set", action="append", default=[], dest="sets", help="key=value for every run")
    args = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="same_results_") as tmp:
        for config in args.configs:
            out = pathlib.Path(tmp) / pathlib.Path(config).stem
            a, err_a = run(args.old, config, args.sets, out)
            b, err_b = run(args.new, config, args.sets, out)
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
    print(f"{len(args.configs) - failed}/{len(args.configs)} identical")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
