#!/usr/bin/env python3
"""One fabric over 1, 2 and 4 processes (`mpirun -np N fabricsim run`, one lane each):
wall time, the simulation's own time (`simulator.wall_time_s`, process 0's), process 0's
peak memory, the parallel windows, and whether results.json (but its simulator section)
is the one-process run's. Scenarios: S2 (a 4-ary 3-tree, 64 endpoints, uniform traffic),
a 32-ary 2-tree (a two-level fat tree of 1,024 endpoints, 64 switches of radix 64)
under permutation traffic with S2's switch and link, and S3's first 200 us (a ring
AllReduce over RDMA on a 2,048-endpoint leaf-spine). One
JSON object per line; standard library only; see docs/performance.md, "Several processes".
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
S2 = os.path.join(HERE, "s2_kary_ntree.yaml")
S3 = os.path.join(HERE, "s3_leafspine_allreduce.yaml")
SCENARIOS = {  # name: (configuration, --set)
    "S2": (S2, ["simulation.duration=100us", "simulation.warmup=10us"]),
    "FT1024": (S2, ["topology.k=32", "topology.n=2", "traffic.pattern=permutation", "simulation.duration=10us",
                    "simulation.warmup=2us"]),
    "S3": (S3, ["simulation.duration=200us"]),
}


def run(fabricsim, processes, scenario, out):
    config, sets = scenario
    cmd = []
    if processes > 1:
        cmd = ["mpirun", "-np", str(processes), "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    cmd += [fabricsim, "run", config, "--quiet", "--out", out]
    for s in sets + ["simulation.threads=1", "output.sample_interval=0s"]:
        cmd += ["--set", s]
    start = time.monotonic()
    subprocess.run(cmd, check=True)
    wall = time.monotonic() - start
    with open(os.path.join(out, "results.json")) as f:
        results = json.load(f)
    return wall, results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fabricsim", default=os.path.join(HERE, "..", "build", "fabricsim"))
    ap.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios")
    ap.add_argument("--processes", default="1,2,4", help="comma-separated process counts (1 first: the reference)")
    a = ap.parse_args()
    for name in a.only.split(","):
        reference = None
        for processes in (int(p) for p in a.processes.split(",")):
            with tempfile.TemporaryDirectory(prefix="fabricsim_processes_") as out:
                wall, results = run(a.fabricsim, processes, SCENARIOS[name], out)
            sim = results.pop("simulator")
            results["config"]["output"].pop("directory", None)
            if reference is None:
                reference = results
            print(json.dumps(dict(
                scenario=name, processes=processes, endpoints=len(results["endpoints"]),
                wall_s=round(wall, 3), simulation_s=round(sim["wall_time_s"], 3),
                peak_memory_bytes_process_0=sim["peak_memory_bytes"], lanes=sim["lanes"],
                parallel_windows=sim["parallel_windows"], packet_hops=sim["packet_hops"],
                same_results_as_first=results == reference)), flush=True)


if __name__ == "__main__":
    main()
