#!/usr/bin/python3
"""Plots of a `fabricsim compare` report.

    /usr/bin/python3 scripts/plot_compare.py DIR/compare.json [OUT_DIR]

Reads compare.json (written by `fabricsim compare`) and writes PNGs into OUT_DIR
(default: the folder of compare.json):

  one comparison point (a single topology):
    compare_latency.png    RDMA write latency p50 / p99 / p99.9 per configuration
    compare_allreduce.png  AllReduce bus bandwidth and completion time
    compare_incast.png     incast completion vs its line-rate bound; drops, pauses, retransmissions
    compare_training.png   training step time split into compute and exposed communication
  a cluster-size sweep (--sizes):
    sweep_allreduce.png    AllReduce bus bandwidth and completion time vs endpoints
    sweep_latency.png      2 B write latency p50 vs endpoints
    sweep_incast.png       incast completion time vs endpoints
    sweep_training.png     training step time and communication fraction vs endpoints
                           (the --comm-threshold line drawn)
    sweep_fabric.png       training iteration rate relative to the InfiniBand column
                           (which fabric wins at which size, by how much), and the
                           fabric cost per training throughput (with --prices) or the
                           switch count per size; with --bom-only, the fabric cost
                           (with --prices) or the switch count alone

Needs matplotlib (Debian: python3-matplotlib). Call /usr/bin/python3 explicitly: a
pyenv python3 on PATH may not have it.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def metric(point, label, workload, key):
    m = point["runs"].get(label, {}).get(workload)
    if not m or key not in m or m[key] is None:
        return float("nan")
    return m[key]


def latency(point, label, size, key):
    m = point["runs"].get(label, {}).get("latency")
    if not m:
        return float("nan")
    for s in m.get("sizes", []):
        if s["bytes"] == size:
            return s[key]
    return float("nan")


def bars(ax, labels, series, ylabel, title):
    """Grouped bars: series = [(name, [value per label])]."""
    n = len(series)
    width = 0.8 / max(n, 1)
    for i, (name, values) in enumerate(series):
        xs = [x + (i - (n - 1) / 2) * width for x in range(len(labels))]
        rects = ax.bar(xs, values, width, label=name)
        for r, v in zip(rects, values):
            if v == v:  # not NaN
                ax.annotate(f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}", (r.get_x() + r.get_width() / 2, r.get_height()), ha="center",
                            va="bottom", fontsize=7)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=15, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if n > 1:
        ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def single_point(report, point, out):
    labels = [c["label"] for c in report["configs"]]
    workloads = report["workloads"]
    written = []
    subtitle = f"{point['endpoints']} endpoints, {point['topology'].strip()}"
    if "latency" in workloads:
        fig, ax = plt.subplots(figsize=(7, 4))
        pair = point["latency_pair"]
        series = [(name, [latency(point, l, 2, key) for l in labels])
                  for name, key in (("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p99_9_us"))]
        bars(ax, labels, series, "latency [us]",
             f"RDMA write 2 B (ib_write_lat convention), ep{pair['client']} -> ep{pair['server']}, "
             f"{pair['path_switches']} switches\n{subtitle}")
        written.append(save(fig, out, "compare_latency.png"))
    if "allreduce" in workloads:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
        size = report["options"]["allreduce_size"]
        bars(a1, labels, [("busbw", [metric(point, l, "allreduce", "busbw_GBps") for l in labels])], "GB/s",
             f"AllReduce ring {size}: bus bandwidth")
        bars(a2, labels, [("time", [metric(point, l, "allreduce", "time_us") for l in labels])], "us",
             f"AllReduce ring {size}: completion time")
        fig.suptitle(subtitle, fontsize=9)
        written.append(save(fig, out, "compare_allreduce.png"))
    if "incast" in workloads:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
        bars(a1, labels, [("all done", [metric(point, l, "incast", "slowest_completion_us") for l in labels]),
                          ("mean sender", [metric(point, l, "incast", "mean_completion_us") for l in labels]),
                          ("line-rate bound", [metric(point, l, "incast", "ideal_us") for l in labels])],
             "us", "incast completion")
        bars(a2, labels, [("drops", [metric(point, l, "incast", "drops") for l in labels]),
                          ("PFC pauses", [metric(point, l, "incast", "pause_frames") for l in labels]),
                          ("retransmitted", [metric(point, l, "incast", "retransmitted_packets") for l in labels])],
             "count", "incast: loss and flow control")
        fig.suptitle(f"{point['endpoints'] - 1}:1 incast of RDMA WRITEs, {report['options'].get('incast_bytes', '?')} per sender; "
                     + subtitle, fontsize=9)
        written.append(save(fig, out, "compare_incast.png"))
    if "training" in workloads and report.get("training_modelled"):
        fig, ax = plt.subplots(figsize=(7, 4))
        compute = [metric(point, l, "training", "compute_us") for l in labels]
        exposed = [metric(point, l, "training", "exposed_communication_us") for l in labels]
        ax.bar(labels, compute, label="compute")
        ax.bar(labels, exposed, bottom=compute, label="exposed communication")
        for i, l in enumerate(labels):
            f = metric(point, l, "training", "communication_fraction")
            if f == f:
                ax.annotate(f"{100 * f:.1f}% comm", (i, compute[i] + exposed[i]), ha="center", va="bottom", fontsize=8)
        ax.set_ylabel("step time [us]")
        ax.set_title("training step (data parallel, ring AllReduce per bucket)\n" + subtitle, fontsize=10)
        ax.set_ylim(0, 1.2 * max([c + e for c, e in zip(compute, exposed) if c == c and e == e] or [1]))
        ax.legend(fontsize=8, loc="lower right")
        ax.grid(axis="y", alpha=0.3)
        plt.setp(ax.get_xticklabels(), rotation=15, ha="right", fontsize=8)
        written.append(save(fig, out, "compare_training.png"))
    return written


def row(point, metric_name, label):
    """A table row's value (compare.json points[].rows), NaN when absent."""
    for r in point.get("rows", []):
        if r["metric"] == metric_name:
            v = r["values"].get(label)
            return float("nan") if v is None else v
    return float("nan")


def row_named(points, prefix):
    """The first row metric starting with prefix, or None."""
    for p in points:
        for r in p.get("rows", []):
            if r["metric"].startswith(prefix):
                return r["metric"]
    return None


def sweep(report, out):
    labels = [c["label"] for c in report["configs"]]
    points = report["points"]
    xs = [p["endpoints"] for p in points]
    workloads = report["workloads"] if ran(report) else []  # --bom-only runs nothing
    written = []

    def lines(ax, getter, ylabel, title):
        for l in labels:
            ax.plot(xs, [getter(p, l) for p in points], marker="o", label=l)
        opts = report["options"]
        ax.set_xlabel(f"endpoints (radix {opts.get('radix', '?')}, {opts.get('oversubscription', 1)}:1, "
                      f"{opts.get('layout', 'leaf')} layout)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)

    if "allreduce" in workloads:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
        size = report["options"]["allreduce_size"]
        lines(a1, lambda p, l: metric(p, l, "allreduce", "busbw_GBps"), "GB/s", f"AllReduce ring {size}: bus bandwidth")
        lines(a2, lambda p, l: metric(p, l, "allreduce", "time_us"), "us", f"AllReduce ring {size}: completion time")
        written.append(save(fig, out, "sweep_allreduce.png"))
    if "latency" in workloads:
        fig, ax = plt.subplots(figsize=(6, 4))
        lines(ax, lambda p, l: latency(p, l, 2, "p50_us"), "us", "RDMA write 2 B p50, endpoints on different leaves")
        written.append(save(fig, out, "sweep_latency.png"))
    if "incast" in workloads:
        fig, ax = plt.subplots(figsize=(6, 4))
        lines(ax, lambda p, l: metric(p, l, "incast", "slowest_completion_us"), "us",
              f"(n-1):1 incast, {report['options'].get('incast_bytes', '?')} per sender: all done")
        written.append(save(fig, out, "sweep_incast.png"))
    if "training" in workloads and report.get("training_modelled"):
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
        lines(a1, lambda p, l: metric(p, l, "training", "step_time_us"), "us", "training step time")
        lines(a2, lambda p, l: 100 * metric(p, l, "training", "communication_fraction"), "%",
              "exposed communication / step")
        threshold = report["options"].get("comm_threshold")
        if threshold is not None:
            a2.axhline(100 * threshold, color="grey", linestyle="--", linewidth=1)
        written.append(save(fig, out, "sweep_training.png"))
    relative = row_named(points, "training: iteration rate relative to column")
    if relative:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
        base = labels[int(relative.rsplit(" ", 1)[1]) - 1]
        lines(a1, lambda p, l: row(p, relative, l), f"iteration rate / {base}",
              f"training iteration rate relative to {base} (above 1: faster)")
        a1.axhline(1.0, color="grey", linestyle="--", linewidth=1)
        for l in labels:
            if l == base:
                continue
            for x, p in zip(xs, points):
                v = row(p, relative, l)
                if v == v:
                    a1.annotate(f"{100 * (v - 1):+.0f}%", (x, v), textcoords="offset points", xytext=(0, 6),
                                ha="center", fontsize=7)
        cost = row_named(points, "cost: fabric per training throughput")
        if cost:
            lines(a2, lambda p, l: row(p, cost, l), f"{report['options'].get('currency', '')} per (iteration/s)",
                  "fabric cost per training throughput")
            a2.set_yscale("log")
        else:
            lines(a2, lambda p, l: sum(row(p, m, l) for m in [r["metric"] for r in p["rows"]]
                                       if m.startswith("fabric: ") and " switches (radix" in m),
                  "switches", "switches in the fabric")
            a2.set_yscale("log")
        written.append(save(fig, out, "sweep_fabric.png"))
    elif not workloads:
        fig, ax = plt.subplots(figsize=(6, 4))
        cost = row_named(points, "cost: fabric (")
        if cost:
            lines(ax, lambda p, l: row(p, cost, l), report["options"].get("currency", ""), "fabric cost")
        else:
            lines(ax, lambda p, l: sum(r["values"].get(l, 0) for r in p["rows"]
                                       if r["metric"].startswith("fabric: ") and " switches (radix" in r["metric"]),
                  "switches", "switches in the fabric")
        ax.set_yscale("log")
        written.append(save(fig, out, "sweep_fabric.png"))
    return written


def ran(report):
    """Whether any workload ran (not `compare --bom-only`)."""
    return any(p.get("runs") for p in report["points"])


def cannot_write(path, e):
    """Exits with the file and the OS reason (a full disk, a read-only folder), not a traceback."""
    sys.exit("plots: cannot write %s: %s" % (path, e.strerror or e))


def save(fig, out, name):
    fig.tight_layout()
    path = os.path.join(out, name)
    try:
        fig.savefig(path, dpi=110)
    except OSError as e:
        cannot_write(path, e)
    plt.close(fig)
    return path


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    with open(sys.argv[1]) as f:
        report = json.load(f)
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(sys.argv[1]))
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        cannot_write(out, e)
    if report.get("sweep"):
        written = sweep(report, out)
    elif ran(report):
        written = single_point(report, report["points"][0], out)
    else:
        written = []
    if not written:
        print("plots: none (nothing was run)")
        return 0
    print("plots: " + ", ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
