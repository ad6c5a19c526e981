#!/usr/bin/python3
"""HTML report of a fabricsim sweep (or of one run): plots and tables in one page.

Run by `fabricsim report RESULTS_DIR` with Debian's /usr/bin/python3 (python3-matplotlib).
RESULTS_DIR is the folder of `fabricsim sweep` (sweep.json, points/NNNN/results.json,
packets.csv and qp_rates.csv) or of `fabricsim run` (results.json, packets.csv,
qp_rates.csv). Writes RESULTS_DIR/report/:
  index.html                  self-contained: every plot inlined as a PNG data URI, no
                              network, no external file needed to view it offline
  load_latency.png            network latency p50 / p99 vs offered load, one curve per
                              combination of the other axes (mean over seeds)
  throughput_load.png         accepted vs offered load (the ideal y = x dashed)
  latency_cdf.png             network-latency CDF of up to 8 points (from packets.csv)
  buffer_occupancy.png        switch buffer occupancy over time (ingress + egress, all ports: results.json
                              timeseries) of up to 8 points
  link_utilisation.png        egress utilisation heatmap per tier: points x links
  allreduce_busbw.png         collective bus bandwidth vs message size (runs with a collective)
  cc_rates.png                RDMA congestion-control rate over time (from qp_rates.csv): one run,
                              each QP (more than 8: their lowest, mean and highest); a sweep, the
                              mean over QPs of up to 8 points
A plot whose data is absent (e.g. no collective, no packets.csv) is listed as not applicable.
"""
import base64
import csv
import html
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MAX_CURVES = 8


def load_points(root):
    """[(label, row, results)] for a sweep folder or a single run folder."""
    sweep_file = os.path.join(root, "sweep.json")
    if os.path.exists(sweep_file):
        with open(sweep_file) as f:
            sweep = json.load(f)
        points = []
        for row in sweep["points"]:
            res = None
            path = os.path.join(root, row["results"])
            if os.path.exists(path):
                with open(path) as f:
                    res = json.load(f)
            points.append((point_label(row), row, res, os.path.dirname(path)))
        return sweep, points
    with open(os.path.join(root, "results.json")) as f:
        res = json.load(f)
    row = {"point": 0, "axes": {}, "seed": res.get("seed"), "metrics": {}}
    sweep = {"axes": [], "columns": [], "points": [row], "sweep_file": res.get("config_file", ""),
             "base_config": res.get("config_file", ""), "executor": "run"}
    return sweep, [("run", row, res, root)]


def point_label(row):
    parts = ["%s=%s" % (k.split(".")[-1], v) for k, v in row["axes"].items()]
    parts.append("seed=%s" % row["seed"])
    return " ".join(parts)


def num(v):
    try:
        x = float(v)
        return x if math.isfinite(x) else None
    except (TypeError, ValueError):
        return None


def pick(points, n=MAX_CURVES):
    """Up to n points spread over the list (first and last included)."""
    if len(points) <= n:
        return points
    step = (len(points) - 1) / (n - 1)
    return [points[round(i * step)] for i in range(n)]


def cannot_write(path, e):
    """Exits with the file and the OS reason (a full disk, a read-only folder), not a traceback."""
    sys.exit("report: cannot write %s: %s" % (path, e.strerror or e))


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=90)
    except OSError as e:
        cannot_write(path, e)
    plt.close(fig)
    return path


def load_curves(sweep, points):
    """{other-axes label: [(load, [metrics...])]} with the load from the axis or the results."""
    load_key = "traffic.load"
    others = [k for k in sweep["axes"] if k != load_key]
    curves = {}
    for _, row, res, _ in points:
        m = row.get("metrics") or {}
        if res is not None and not m:
            thr = res.get("throughput", {})
            lat = res.get("latency", {}).get("network_latency_ns", {})
            m = {"offered_load": thr.get("offered_load"), "accepted_load": thr.get("accepted_load"),
                 "latency_p50_ns": lat.get("p50"), "latency_p99_ns": lat.get("p99")}
        load = num(row["axes"].get(load_key)) if load_key in row["axes"] else num(m.get("offered_load"))
        if load is None or m.get("status", "ok") != "ok":
            continue
        label = " ".join("%s=%s" % (k.split(".")[-1], row["axes"][k]) for k in others) or "all"
        curves.setdefault(label, {}).setdefault(load, []).append(m)
    return curves


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def plot_load(sweep, points, out):
    curves = load_curves(sweep, points)
    if not curves:
        return [], "no point with an offered load (traffic.load) and status ok"
    written = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for label, by_load in sorted(curves.items()):
        loads = sorted(by_load)
        for ax, key in zip(axes, ("latency_p50_ns", "latency_p99_ns")):
            ys = [mean([num(m.get(key)) for m in by_load[x]]) for x in loads]
            ax.plot(loads, ys, marker="o", label=label)
    for ax, what in zip(axes, ("p50", "p99")):
        ax.set_xlabel("offered load (fraction of line rate)")
        ax.set_ylabel("network latency %s (ns)" % what)
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("Load-latency")
    written.append(save(fig, out, "load_latency.png"))

    fig, ax = plt.subplots(figsize=(6, 4.2))
    for label, by_load in sorted(curves.items()):
        loads = sorted(by_load)
        ax.plot(loads, [mean([num(m.get("accepted_load")) for m in by_load[x]]) for x in loads], marker="o",
                label=label)
    top = max(max(by_load) for by_load in curves.values())
    ax.plot([0, top], [0, top], "k--", linewidth=0.8, label="accepted = offered")
    ax.set_xlabel("offered load")
    ax.set_ylabel("accepted load (fraction of line rate)")
    ax.set_title("Throughput vs load")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    written.append(save(fig, out, "throughput_load.png"))
    return written, None


def line_plot(out, name, title, xlabel, ylabel, series, why_empty, xscale=None, marker=None):
    """One PNG of curves [(label, xs, ys)]; ([], why_empty) when there is none."""
    series = [s for s in series if s[1]]
    if not series:
        return [], why_empty
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, xs, ys in series:
        ax.plot(xs, ys, label=label, marker=marker)
    if xscale:
        ax.set_xscale(*xscale)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return [save(fig, out, name)], None


def plot_cdf(points, out):
    series = []
    for label, _, _, folder in pick([p for p in points if os.path.exists(os.path.join(p[3], "packets.csv"))]):
        with open(os.path.join(folder, "packets.csv")) as f:
            lat = sorted(float(r["network_latency_ns"]) for r in csv.DictReader(f))
        series.append((label, lat, [(i + 1) / len(lat) for i in range(len(lat))]))
    return line_plot(out, "latency_cdf.png", "Latency CDF", "network latency (ns)", "fraction of packets", series,
                     "no packets.csv with delivered packets (sweep packet_csv: false, or fabricsim run without "
                     "--packet-csv)", xscale=("log",))


def plot_buffers(points, out):
    series = []
    for label, _, res, _ in pick([p for p in points if p[2] is not None and p[2].get("timeseries", {}).get("time_ns")]):
        ts = res["timeseries"]
        total = [(i + e) / 1024 for i, e in zip(ts["ingress_bytes"], ts["egress_bytes"])]
        series.append((label, [t / 1e3 for t in ts["time_ns"]], total))
    return line_plot(out, "buffer_occupancy.png", "Buffer occupancy over time", "simulated time (us)",
                     "buffer occupancy, all ports (KiB)", series,
                     "no buffer occupancy time series (output.sample_interval: 0s)")


def plot_utilisation(points, out):
    with_ports = [p for p in points if p[2] is not None and p[2].get("ports")][:48]
    tiers = sorted({port["tier"] for p in with_ports for port in p[2]["ports"]})
    if not tiers:
        return [], "no per-port results"
    fig, axes = plt.subplots(1, len(tiers), figsize=(max(6, 4.5 * len(tiers)), 1.5 + 0.25 * len(with_ports)),
                             squeeze=False)
    for ax, tier in zip(axes[0], tiers):
        names = [port["name"] for port in with_ports[0][2]["ports"] if port["tier"] == tier]
        grid = []
        for _, _, res, _ in with_ports:
            util = {port["name"]: port["egress_utilisation"] for port in res["ports"] if port["tier"] == tier}
            grid.append([util.get(n, float("nan")) for n in names])
        im = ax.imshow(grid, aspect="auto", vmin=0, vmax=1, cmap="viridis", interpolation="nearest")
        ax.set_title("tier %s (%d links)" % (tier, len(names)))
        ax.set_xlabel("link (switch egress port)")
        ax.set_yticks(range(len(with_ports)))
        ax.set_yticklabels([p[0] for p in with_ports], fontsize=6)
        fig.colorbar(im, ax=ax, label="egress utilisation")
    fig.suptitle("Link utilisation per tier")
    return [save(fig, out, "link_utilisation.png")], None


def plot_allreduce(points, out):
    series = []
    for label, _, res, _ in pick([p for p in points if p[2] is not None and p[2].get("collective", {}).get("sizes")]):
        sizes = [s for s in res["collective"]["sizes"] if num(s.get("busbw_GBps")) is not None]
        series.append(("%s %s" % (res["collective"].get("op", ""), label), [s["bytes"] for s in sizes],
                       [s["busbw_GBps"] for s in sizes]))
    return line_plot(out, "allreduce_busbw.png", "Collective bus bandwidth vs message size",
                     "message size (bytes per rank)", "bus bandwidth (GB/s)", series, "no collective in these results",
                     xscale=("log",), marker="o")


def read_rates(folder):
    """qp_rates.csv as {(endpoint, qpn): ([time_us], [rate_gbps])}, or {} when absent."""
    path = os.path.join(folder, "qp_rates.csv")
    rates = {}
    if os.path.exists(path):
        with open(path) as f:
            for r in csv.DictReader(f):
                xs, ys = rates.setdefault((int(r["endpoint"]), int(r["qpn"])), ([], []))
                xs.append(float(r["time_ns"]) / 1e3)
                ys.append(float(r["cc_rate_gbps"]))
    return rates


def across_qps(rates, how):
    """Per sample time, `how` (min, max, mean) of the rates of the QPs sampled then."""
    at = {}
    for xs, ys in rates.values():
        for x, y in zip(xs, ys):
            at.setdefault(x, []).append(y)
    times = sorted(at)
    return times, [how(at[t]) for t in times]


def plot_cc_rates(points, out):
    def has_rows(folder):
        path = os.path.join(folder, "qp_rates.csv")
        return os.path.exists(path) and os.path.getsize(path) > len("time_ns,endpoint,qpn,cc_rate_gbps\n")

    with_rates = [(label, read_rates(folder)) for label, _, _, folder in pick([p for p in points if has_rows(p[3])])]
    if len(points) == 1 and with_rates:
        rates = with_rates[0][1]
        if len(rates) <= MAX_CURVES:
            series = [("endpoint %d QP %d" % qp, xs, ys) for qp, (xs, ys) in sorted(rates.items())]
        else:
            series = [("%s of %d QPs" % (name, len(rates)),) + across_qps(rates, how)
                      for name, how in (("lowest", min), ("mean", mean), ("highest", max))]
    else:
        series = [("mean, " + label,) + across_qps(rates, mean) for label, rates in with_rates]
    return line_plot(out, "cc_rates.png", "Congestion-control rate over time", "simulated time (us)",
                     "CC rate (Gb/s)", series,
                     "no qp_rates.csv with rows (no RDMA queue pairs with congestion control, or "
                     "output.sample_interval: 0s)")


def table_html(sweep, points):
    cols = ["point"] + sweep["axes"] + ["seed"] + sweep.get("columns", [])
    rows = []
    for _, row, res, _ in points:
        cells = [row["point"]] + [row["axes"].get(k) for k in sweep["axes"]] + [row["seed"]]
        m = row.get("metrics") or {}
        for c in sweep.get("columns", []):
            v = m.get(c)
            cells.append("%.6g" % v if isinstance(v, float) else v)
        rows.append("<tr>" + "".join("<td>%s</td>" % html.escape("" if c is None else str(c)) for c in cells) + "</tr>")
    head = "<tr>" + "".join("<th>%s</th>" % html.escape(c) for c in cols) + "</tr>"
    return "<table>\n<thead>%s</thead>\n<tbody>\n%s\n</tbody>\n</table>" % (head, "\n".join(rows))


def run_table_html(res):
    """One run: the fabric-wide figures and the tier table."""
    lat = res["latency"]["network_latency_ns"]
    rows = [("simulated time (ns)", res["simulated_time_ns"]), ("offered load", res["throughput"]["offered_load"]),
            ("accepted load", res["throughput"]["accepted_load"]), ("packets delivered", res["packets"]["delivered"]),
            ("packets dropped", res["packets"]["dropped"])] + [("network latency %s (ns)" % k, lat.get(k))
                                                               for k in ("mean", "p50", "p99", "p99.9", "max")]
    out = "<table><tbody>" + "".join("<tr><th>%s</th><td>%s</td></tr>" % (html.escape(k), html.escape(str(v)))
                                     for k, v in rows) + "</tbody></table>"
    tiers = res.get("tiers", {})
    if tiers:
        out += "<h3>Tiers</h3><table><tr><th>tier</th><th>links</th><th>mean</th><th>max</th><th>imbalance</th></tr>"
        for name, t in sorted(tiers.items()):
            out += "<tr><td>%s</td><td>%s</td><td>%.4f</td><td>%.4f</td><td>%s</td></tr>" % (
                html.escape(name), t["links"], t["mean_utilisation"], t["max_utilisation"],
                html.escape(str(t.get("imbalance"))))
        out += "</table>"
    return out


CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; font-size: 12px; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #eee; }
figure { margin: 1em 0; }
img { max-width: 100%; border: 1px solid #ddd; }
.na { color: #777; }
.wide { overflow-x: auto; }
"""

# Marks the page once loaded: how many plot images the browser decoded (the tests read it).
CHECK = """
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img.plot');
  var ok = 0;
  imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });
  document.body.setAttribute('data-images-total', imgs.length);
  document.body.setAttribute('data-images-decoded', ok);
});
"""


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS_DIR")
    root = sys.argv[1]
    sweep, points = load_points(root)
    out = os.path.join(root, "report")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        cannot_write(out, e)
    sections = []
    for title, fn in (("Load-latency and throughput", lambda: plot_load(sweep, points, out)),
                      ("Latency CDF", lambda: plot_cdf(points, out)),
                      ("Buffer occupancy over time", lambda: plot_buffers(points, out)),
                      ("Link utilisation per tier", lambda: plot_utilisation(points, out)),
                      ("AllReduce bus bandwidth vs message size", lambda: plot_allreduce(points, out)),
                      ("Congestion-control rate over time", lambda: plot_cc_rates(points, out))):
        written, why_not = fn()
        body = ""
        for path in written:
            with open(path, "rb") as f:
                data = base64.b64encode(f.read()).decode("ascii")
            name = os.path.basename(path)
            body += '<figure><img class="plot" alt="%s" src="data:image/png;base64,%s"><figcaption>%s</figcaption></figure>\n' % (
                html.escape(name), data, html.escape(name))
        if why_not:
            body += '<p class="na">Not applicable: %s.</p>\n' % html.escape(why_not)
        sections.append("<h2>%s</h2>\n%s" % (html.escape(title), body))
        print("report: %s: %s" % (title, ", ".join(os.path.basename(p) for p in written) or "not applicable: " + why_not))

    if sweep.get("executor") == "run":
        table = run_table_html(points[0][2])
    else:
        table = table_html(sweep, points)
    ok = sum(1 for _, row, _, _ in points if (row.get("metrics") or {}).get("status", "ok") == "ok")
    page = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fabricsim report: %(title)s</title>
<style>%(css)s</style><script>%(check)s</script></head>
<body>
<h1>fabricsim report</h1>
<p>Sweep file: <code>%(file)s</code>; base configuration: <code>%(base)s</code>; executor: %(executor)s;
%(n)d points, %(ok)d ok; axes: %(axes)s.</p>
%(sections)s
<h2>Results table</h2>
<div class="wide">%(table)s</div>
</body></html>
""" % {"title": html.escape(os.path.basename(os.path.abspath(root))), "css": CSS, "check": CHECK,
       "file": html.escape(str(sweep.get("sweep_file", ""))), "base": html.escape(str(sweep.get("base_config", ""))),
       "executor": html.escape(str(sweep.get("executor", ""))), "n": len(points), "ok": ok,
       "axes": html.escape(", ".join(sweep["axes"]) or "none"), "sections": "\n".join(sections), "table": table}
    index = os.path.join(out, "index.html")
    try:
        with open(index, "w") as f:
            f.write(page)
    except OSError as e:
        cannot_write(index, e)
    print("report: %s" % index)


if __name__ == "__main__":
    main()
