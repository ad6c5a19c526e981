#!/usr/bin/env python3
"""Summary of a Verilator coverage file (coverage.dat, SystemC::Coverage-3 format).

Per source file: points hit / total for each kind (line = statement blocks, branch =
if/else and case arms, toggle = each signal bit going 0->1 and 1->0, cover = the
SystemVerilog cover properties); then every cover property with its count, and the
signals with bits that never toggled (verilator_coverage --annotate shows one count per
source line, not per bit). A point of several block instances (a fabric run's file,
`fabricsim run --rtl-coverage`: the hierarchy field names each instance) counts once,
with the instances' counts summed; each file's module instances are listed last.
Usage: rtl_coverage_summary.py coverage.dat [--min N]  (a point counts as hit from N, default 1)
"""
import argparse
import collections
import os
import re
import sys

KINDS = [("v_line", "line"), ("v_branch", "branch"), ("v_toggle", "toggle"), ("v_user", "cover")]


def points(path):
    """Yields (fields dict, count) per point of a coverage file."""
    line_re = re.compile(r"^C '(.*)' (\d+)$")
    with open(path, encoding="latin-1") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = line_re.match(line)
            if not m:
                sys.exit(f"rtl_coverage_summary: {path}:{n}: not a coverage point: {line[:80]}")
            fields = {}
            for item in m.group(1).split("\x01"):
                if "\x02" in item:
                    key, value = item.split("\x02", 1)
                    fields[key] = value
            yield fields, int(m.group(2))


def merged_points(path):
    """Points of a coverage file with the instances of one point merged: yields (fields
    without the hierarchy, summed count, hierarchy names)."""
    merged = {}
    for fields, count in points(path):
        hier = fields.pop("h", "")
        key = tuple(sorted(fields.items()))
        entry = merged.setdefault(key, [fields, 0, set()])
        entry[1] += count
        if hier:
            entry[2].add(hier)
    yield from merged.values()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dat")
    ap.add_argument("--min", type=int, default=1)
    args = ap.parse_args()

    hit = collections.defaultdict(lambda: collections.Counter())
    total = collections.defaultdict(lambda: collections.Counter())
    covers = []
    bits = collections.defaultdict(lambda: [0, 0])  # (file, signal) -> [bits never toggled, bits]
    instances = collections.defaultdict(set)  # file -> module instances (hierarchy names)
    for fields, count, hiers in merged_points(args.dat):
        page = fields.get("page", "")
        kind = next((name for prefix, name in KINDS if page.startswith(prefix)), None)
        if kind is None:
            continue
        src = os.path.basename(fields.get("f", "?"))
        total[src][kind] += 1
        if kind in ("line", "branch"):  # their hierarchy is the module instance's (a cover point's adds its name)
            instances[src].update(hiers)
        hit[src][kind] += count >= args.min
        if kind == "cover":
            covers.append((src, int(fields.get("l", 0)), fields.get("o", "?"), count))
        if kind == "toggle":
            signal = re.sub(r"(\[\d+\])+$", "", fields.get("o", "?"))
            bits[(src, signal)][0] += count < args.min
            bits[(src, signal)][1] += 1

    names = [name for _, name in KINDS]
    print(f"{'block (file)':<28}" + "".join(f"{n:>18}" for n in names))
    for src in sorted(total):
        cells = []
        for n in names:
            t = total[src][n]
            cells.append(f"{hit[src][n]}/{t} {100.0 * hit[src][n] / t:5.1f}%" if t else "-")
        print(f"{src:<28}" + "".join(f"{c:>18}" for c in cells))
    print("\ncover properties (count = sampled clock edges where the property held):")
    for src, line, name, count in sorted(covers):
        print(f"  {src + ':' + str(line):<24} {name:<28} {count:>8}{'' if count >= args.min else '   NEVER'}")
    print("\nsignals with bits that never toggled (bits never toggled / bits):")
    for (src, signal), (idle, n) in sorted(bits.items()):
        if idle:
            print(f"  {src:<24} {signal:<40} {idle:>4}/{n}")
    print("\nmodule instances (hierarchy names in the data):")
    for src in sorted(instances):
        names = sorted(instances[src])
        shown = ", ".join(names[:4]) + (f", ... ({len(names) - 4} more)" if len(names) > 4 else "")
        print(f"  {src:<24} {len(names):>4}  {shown}")


if __name__ == "__main__":
    main()
