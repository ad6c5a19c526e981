#!/usr/bin/env python3
"""fabricsim benchmark: runs the fixed scenarios of docs/performance.md with
`fabricsim run`, one child process each, and prints one JSON object per scenario
(one per line) with wall time, simulated time, events, delivered packets and
packet-hops per wall-second and the run's peak memory (the child's own, as results.json
reports it: not getrusage's ru_maxrss, which on Linux includes this script's own peak).

    bench/bench.py [--fabricsim build/fabricsim] [--only S1,S2] [--quick] [--threads N] [--repeat N] [--out DIR]

Standard library only. Benchmark figures, not timed tests: the numbers depend on
the machine and its load. On a shared machine one run can be a third slower than the
next; --repeat N runs each scenario N times and reports the fastest run, with the
median and every run's wall time beside it (bench/speedup.py sets two binaries
against each other the same way).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (what, config, extra --set overrides)
SCENARIOS = {
    "S1": ("one 64-port switch, VOQ + iSLIP, uniform 0.8 load, 1 ms", "s1_switch64.yaml", []),
    "S2": ("4-ary 3-tree (64 endpoints, 48 switches of radix 8), uniform 0.4, 1 KiB, cut-through, 4 SLs on 4 VLs",
           "s2_kary_ntree.yaml", []),
    "S3": ("leaf-spine of 64-port switches, 2048 endpoints, ring AllReduce 64 MiB per rank",
           "s3_leafspine_allreduce.yaml", []),
    "S4": ("S2 with the RTL iSLIP allocator co-simulated", "s2_kary_ntree.yaml",
           ["switch.allocator_impl=rtl"]),
    # The workload whose QPs grow with the square of the ranks.
    "S5": ("leaf-spine of 32-port switches, 512 endpoints, direct all-to-all 1 MiB per rank (a QP per pair of ranks)",
           "s3_leafspine_allreduce.yaml",
           ["topology.radix=32", "collective.op=alltoall", "collective.algorithm=direct", "collective.sizes=[1MiB]"]),
    # A generated training iteration (examples/training/gpt_small.yaml: tp 4 in 8-GPU
    # servers, pp 2, dp the rest) on k-ary fat trees of 1,024 and 8,192 GPUs.
    "S6": ("generated GPT-style training iteration, fat tree k=16, 1024 GPUs (dp 128)", "../examples/training/gpt_small.yaml",
           ["topology.k=16", "training.global_batch=256"]),
    "S7": ("generated GPT-style training iteration, three-tier fat tree of radix 32, 8192 GPUs (dp 1024)",
           "s7_training_8192.yaml", []),
}
# Scenarios simulating S2's fabric and traffic, which bench/hop_floor runs in a bare event loop
# (not when --set may have changed them).
FLOOR_SCENARIOS = ("S2", "S4")
QUICK = {  # --quick: same shapes, less work
    "S1": ["simulation.duration=100us"],
    "S2": ["simulation.duration=50us"],
    "S3": ["simulation.duration=200us"],  # the first 200 us of the real S3 (full scale, part of the time)
    "S4": ["simulation.duration=50us"],
    "S5": ["simulation.duration=10us"],
    "S6": ["simulation.duration=200us"],
    "S7": ["simulation.duration=100us"],
}
# A tiny scenario for the smoke test (tests/CMakeLists.txt): 4 endpoints, 5 us.
TINY = ("4 endpoints on one switch, 5 us (smoke test)", "s1_switch64.yaml",
        ["switch.ports=4", "topology.endpoints=4", "simulation.duration=5us", "simulation.warmup=0us"])


def run_child(cmd):
    """Runs cmd; returns (exit code, wall seconds, CPU seconds, stderr text)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, text


def rtl_available(fabricsim, config):
    cmd = [fabricsim, "validate", config, "--set", "switch.allocator_impl=rtl"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode == 0, (p.stderr or p.stdout).strip()


def add_common_arguments(ap, only, out_help):
    """The options bench.py and profile.py share: binary, scenarios, output folder, --set."""
    ap.add_argument("--fabricsim", default=os.path.join(os.environ.get("FABRICSIM_BUILD_DIR", "build"), "fabricsim"),
                    help="the fabricsim binary (default: $FABRICSIM_BUILD_DIR/fabricsim or build/fabricsim)")
    ap.add_argument("--only", default=only, help=f"comma-separated scenarios (default: {only})")
    ap.add_argument("--out", default=None, help=out_help + " (default: a temporary folder)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="extra override for every run")


def selected(args, prog):
    """The scenarios --only names (exits naming the unknown ones), after checking the binary."""
    if not os.access(args.fabricsim, os.X_OK):
        sys.exit(f"{prog}: {args.fabricsim}: no fabricsim binary (build it, or pass --fabricsim)")
    names = [n.strip().upper() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        sys.exit(f"{prog}: --only: unknown scenario {', '.join(unknown)}; valid: {', '.join(SCENARIOS)}")
    return names


def skipped_without_rtl(name, what, fabricsim, config, sets):
    """The "skipped" record of a scenario that needs the RTL allocator in a build without it, else None."""
    if "switch.allocator_impl=rtl" not in sets:
        return None
    ok, why = rtl_available(fabricsim, config)
    if ok:
        return None
    return {"scenario": name, "what": what, "status": "skipped",
            "reason": "RTL allocator not in this build (configure with -DFABRICSIM_RTL=ON): " + why}


def bench(name, what, config, sets, fabricsim, out_dir):
    record = {"scenario": name, "what": what, "config": os.path.relpath(config), "set": sets}
    run_dir = os.path.join(out_dir, name.lower())
    cmd = [fabricsim, "run", config, "--out", run_dir]
    for s in sets:
        cmd += ["--set", s]
    code, wall, cpu, err = run_child(cmd)
    if code != 0:
        record.update(status="failed", exit_code=code, error=err.strip().splitlines()[-1:] or [""])
        return record
    with open(os.path.join(run_dir, "results.json")) as f:
        r = json.load(f)
    s = r["simulator"]
    delivered = r["packets"]["delivered"]
    hops = s["packet_hops"]
    peak = s.get("peak_memory_bytes")
    record.update(
        status="ok",
        wall_time_s=round(wall, 3),                      # whole process: configuration, elaboration, run, results
        cpu_time_s=round(cpu, 3),                        # user + system: less sensitive to a loaded machine
        simulation_wall_time_s=round(s["wall_time_s"], 3),  # sc_start only
        simulated_time_ns=r["simulated_time_ns"],
        events=s["process_activations"],                # wake-ups of switches and NICs (tlm/wake_queue.h)
        delta_cycles=s.get("delta_cycles"),
        delivered_packets=delivered,
        packet_hops=hops,
        delivered_packets_per_wall_s=round(delivered / wall),
        packet_hops_per_wall_s=round(hops / wall),
        delivered_packets_per_cpu_s=round(delivered / cpu) if cpu > 0 else None,
        delivered_packets_per_simulation_wall_s=round(delivered / s["wall_time_s"]) if s["wall_time_s"] > 0 else None,
        peak_memory_bytes=peak,                          # the child's own high-water mark (VmHWM); None: unknown
        peak_memory_mib=round(peak / 2**20, 1) if peak is not None else None,
        huge_page_mib=round(s.get("huge_page_bytes", 0) / 2**20),  # of it, backed by 2 MiB pages (sim/huge_pages.h)
        malloc_huge_pages=s.get("malloc_huge_pages", False),  # malloc asked for huge pages from the start
        build=s.get("build"),                            # CMake build type and PGO / LTO (scripts/build_fast.sh)
        lanes=s.get("lanes", 1),                         # wake-queue lanes run in parallel (simulation.threads)
        switches=r["topology"]["switches"],
        endpoints=r["topology"]["endpoints"],
    )
    if "collective" in r:
        record["collective_finished"] = r["collective"]["finished"]
        record["collective_time_us"] = [size["time_us"] for size in r["collective"]["sizes"]]
    if "fast_forward" in r:
        record["fast_forward"] = {k: r["fast_forward"][k] for k in ("applied", "reason", "transfers_skipped", "bytes_skipped")}
    return record


def with_fast_forward(off, on):
    """One record of a scenario run without and with simulation.fast_forward: each side's
    wall time, events and packet-hops, the ratios (off / on) of wall time and events, and
    the relative errors of the collective times and of the packet hops (the skipped
    transfers' packets count on the links they would have crossed)."""
    if off["status"] != "ok" or on["status"] != "ok":
        return off if off["status"] != "ok" else on
    keys = ("wall_time_s", "simulation_wall_time_s", "events", "packet_hops", "delivered_packets", "simulated_time_ns")
    record = {k: v for k, v in off.items() if k not in keys}
    record.update(off={k: off[k] for k in keys if k in off}, on={k: on[k] for k in keys if k in on})
    record["on"]["collective_time_us"] = on.get("collective_time_us")
    record["fast_forward"] = on.get("fast_forward")
    record["events_ratio"] = round(off["events"] / max(1, on["events"]), 2)
    record["packet_hops_error"] = abs(on["packet_hops"] - off["packet_hops"]) / max(1, off["packet_hops"])
    record["wall_time_ratio"] = round(off["wall_time_s"] / max(1e-9, on["wall_time_s"]), 2)
    if off.get("collective_time_us") and on.get("collective_time_us") and off.get("collective_finished"):
        record["collective_time_error"] = max(abs(b - a) / a for a, b in zip(off["collective_time_us"], on["collective_time_us"]))
    return record


def add_run_arguments(ap):
    """The options that choose what each run simulates (bench.py and speedup.py)."""
    ap.add_argument("--quick", action="store_true", help="shorter runs; S3: its first 200 us simulated (2048 endpoints, 64 MiB per rank)")
    ap.add_argument("--tiny", action="store_true", help="one tiny scenario (the smoke test)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="simulation.threads of every run: the fabric's parallel lanes, the same results with any "
                         "number (default: this machine's cores, %(default)s)")


def planned_runs(args, prog):
    """(name, what, config path, --set list) per scenario the arguments ask for."""
    if args.threads < 1:
        sys.exit(f"{prog}: --threads: at least 1")
    names = selected(args, prog)
    runs = [("tiny",) + TINY] if args.tiny else [(n,) + SCENARIOS[n] for n in names]
    return [(name, what, os.path.join(HERE, config),
             sets + (QUICK.get(name, []) if args.quick else []) + [f"simulation.threads={args.threads}"] + args.set)
            for name, what, config, sets in runs]


def best_of(records):
    """The fastest of several runs of one scenario, with the median and every wall time; a
    failed run, or runs that simulated differently (same seed: they must not), fail it."""
    failed = next((r for r in records if r["status"] != "ok"), None)
    if failed:
        return failed
    counts = {(r["events"], r["delivered_packets"], r["packet_hops"]) for r in records}
    best = dict(min(records, key=lambda r: r["wall_time_s"]))
    if len(counts) > 1:
        best.update(status="failed", error=[f"runs of one scenario simulated differently (events, delivered, hops): "
                                            f"{sorted(counts)}"])
    walls = [r["wall_time_s"] for r in records]
    best.update(runs=len(records), wall_time_s_median=round(statistics.median(walls), 3), wall_time_s_runs=walls,
                delivered_packets_per_wall_s_median=round(best["delivered_packets"] / statistics.median(walls)))
    return best


def floor_ns_per_hop(floor, record):
    """The bare event loop's ns per hop (bench/hop_floor, its timing wheel) over the simulated
    time of `record`, run right after it so both meet the same minutes of the machine."""
    us = record["simulated_time_ns"] / 1000
    p = subprocess.run([floor, f"{us:g}"], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    wheel = [json.loads(line) for line in p.stdout.splitlines() if '"wheel"' in line]
    return wheel[0]["ns_per_hop"] if wheel else None


def with_floor(record, floors):
    """Adds fabricsim's ns per link traversal (sc_start wall time over packet-hops, on its
    lanes) and its ratio to the fastest of `floors`, the bare loop's ns per hop."""
    floors = [f for f in floors if f]
    if record.get("status") != "ok" or not floors:
        return record
    ns = record["simulation_wall_time_s"] * 1e9 / record["packet_hops"]
    record.update(ns_per_hop=round(ns, 1), floor_ns_per_hop=min(floors), floor_ratio=round(ns / min(floors), 2))
    return record


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(ap, "S1,S2,S3,S4,S5", "folder for each run's results")
    add_run_arguments(ap)
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per scenario; the record is the fastest, with the median and every wall time (default 1)")
    ap.add_argument("--fast-forward", action="store_true",
                    help="run each scenario without and with simulation.fast_forward and print both, their events "
                         "and wall-time ratios and the collective times' relative error")
    ap.add_argument("--floor", default=None,
                    help="bench/hop_floor binary, the reference S2 and S4 are set against "
                         "(default: bench/hop_floor beside the fabricsim binary, if built)")
    args = ap.parse_args()
    if args.repeat < 1:
        sys.exit("bench: --repeat: at least 1")
    out_dir = args.out or tempfile.mkdtemp(prefix="fabricsim_bench_")
    floor = args.floor or os.path.join(os.path.dirname(args.fabricsim), "bench", "hop_floor")
    floor = floor if os.access(floor, os.X_OK) else None
    failed = False
    for name, what, config, sets in planned_runs(args, "bench"):
        skipped = skipped_without_rtl(name, what, args.fabricsim, config, sets)
        if skipped:
            print(json.dumps(skipped), flush=True)
            continue
        if args.fast_forward:
            off = bench(name, what, config, sets, args.fabricsim, out_dir)
            on = bench(name, what, config, sets + ["simulation.fast_forward=true"], args.fabricsim, out_dir)
            record = with_fast_forward(off, on)
            failed = failed or record["status"] != "ok"
            print(json.dumps(record), flush=True)
            continue
        records, floors = [], []
        for _ in range(args.repeat):
            records.append(bench(name, what, config, sets, args.fabricsim, out_dir))
            if floor and name in FLOOR_SCENARIOS and not args.set and records[-1]["status"] == "ok":
                floors.append(floor_ns_per_hop(floor, records[-1]))
        record = records[0] if args.repeat == 1 else best_of(records)
        with_floor(record, floors)
        failed = failed or record["status"] != "ok"
        print(json.dumps(record), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
