#!/usr/bin/python3
"""HTML report of a fabricsim sweep (or of one run): plots and tables in one page.

Run by `fabricsim report RESULTS_DIR` with Debian's /usr/bin/python3 (python3-matplotlib).
RESULTS_DIR is the folder of `fabricsim sweep` (sweep.json, points/NNNN/results.json,
packets.csv and qp_rates.csv) or of `fabricsim run` (results.json, packets.csv,
qp_rates.csv). Writes RESULTS_DIR/report/:
  index.html                  self-contained: every plot inlined as a PNG data URI, no
                              network, no external file needed to view it offline
  load_latency.png            network latency p50 / p99 vs offered load, one curve per
                              combination of the other axes (mean over seeds, bars min-max
                              over the seeds), the zero-load latency as a reference line
  throughput_load.png         accepted vs offered load, the line-rate bound min(offered, 1)
  latency_cdf.png             network-latency CDF of up to 8 points (from packets.csv)
  buffer_occupancy.png        switch buffer occupancy over time (ingress + egress, all ports: results.json
                              timeseries) of up to 8 points
  link_utilisation.png        egress utilisation heatmap per tier: points x links
  allreduce_busbw.png         collective bus bandwidth vs message size (runs with a collective),
                              one curve per combination of the axes (mean over seeds, bars min-max)
  cc_rates.png                RDMA congestion-control rate over time (from qp_rates.csv): one run,
                              each QP (more than 8: their lowest, mean and highest); a sweep, the
                              mean over QPs of up to 8 points
A plot whose data is absent (e.g. no collective, no packets.csv) is listed as not applicable.
Axes whose data spans a decade or more are logarithmic with unit-labelled ticks; legends sit
outside the plot area, and every figure is checked for it once drawn (a legend over the data
is reported on stderr as `report: layout check failed: ...`).
"""
import base64
import csv
import html
import json
import math
import os
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402

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


def point_label(row, seed=True):
    parts = ["%s=%s" % (k.split(".")[-1], v) for k, v in row["axes"].items()]
    if seed:
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


LAYOUT = {"figures": 0, "failed": []}


def check_layout(fig, name):
    """Every legend lies outside the plot area of every axes: a legend must never hide data."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    plots = [ax for ax in fig.axes if ax.lines or ax.images or ax.collections]
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in plots:
            if box.overlaps(ax.bbox):
                where = ax.get_title() or ax.get_ylabel()
                LAYOUT["failed"].append("%s: legend over the plot area of '%s'" % (name, where))
    LAYOUT["figures"] += 1


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.tight_layout()
    check_layout(fig, name)
    try:
        fig.savefig(path, dpi=90, bbox_inches="tight")  # the figure grows to hold the outside legend
    except OSError as e:
        cannot_write(path, e)
    plt.close(fig)
    return path


def legend_outside(ax, title=None):
    """The legend right of the axes, long labels wrapped, so it never covers a curve."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, ["\n".join(textwrap.wrap(lab, 32)) or lab for lab in labels], title=title, fontsize=7,
                  title_fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def ns_text(v):
    for scale, unit in ((1e6, "ms"), (1e3, "us")):
        if v >= scale:
            return "%.3g %s" % (v / scale, unit)
    return "%.3g ns" % v


def bytes_text(v):
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if v >= 1 << shift:
            return "%.3g %s" % (v / (1 << shift), unit)
    return "%.3g B" % v


def spans_decades(values):
    values = [v for v in values if v is not None and v > 0]
    return bool(values) and max(values) >= 10 * min(values)


def log_axis(axis, values, text=lambda v: "%g" % v, base=10):
    """A log axis when the values span a decade or more: major ticks labelled in units (text),
    minor ticks between them (labelled at 2 and 5 when the axis spans few decades)."""
    if not spans_decades(values):
        return
    if axis is axis.axes.xaxis:
        axis.axes.set_xscale("log", base=base)
    else:
        axis.axes.set_yscale("log", base=base)
    axis.set_major_locator(ticker.LogLocator(base=base, numticks=10))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: text(v)))
    if base == 10:
        axis.set_minor_locator(ticker.LogLocator(base=10, subs=range(2, 10), numticks=100))
        values = [v for v in values if v is not None and v > 0]
        few = max(values) < 300 * min(values)
        axis.set_minor_formatter(ticker.FuncFormatter(
            lambda v, _: text(v) if few and round(v / 10 ** math.floor(math.log10(v) + 1e-9)) in (2, 5) else ""))
    else:
        axis.set_minor_locator(ticker.LogLocator(base=base, subs=(1.0,), numticks=100))
        axis.set_minor_formatter(ticker.NullFormatter())


def spread(values):
    """(mean, lowest, highest, count) of the values present, or None."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return sum(values) / len(values), min(values), max(values), len(values)


def mean(values):
    s = spread(values)
    return s[0] if s else None


def error_curve(ax, xs, groups, label):
    """Mean of each group as a curve; when a group holds several seeds, bars from its lowest to
    its highest value. Returns the largest number of seeds behind one point."""
    stats = [(x, spread(g)) for x, g in zip(xs, groups)]
    stats = [(x, s) for x, s in stats if s is not None]
    if not stats:
        return 0
    ys = [s[0] for _, s in stats]
    seeds = max(s[3] for _, s in stats)
    bars = [[s[0] - s[1] for _, s in stats], [s[2] - s[0] for _, s in stats]] if seeds > 1 else None
    ax.errorbar([x for x, _ in stats], ys, yerr=bars, marker="o", markersize=4, capsize=3, label=label)
    return seeds


def seeds_note(seeds):
    return "mean of %d seeds, bars: min-max over the seeds" % seeds if seeds > 1 else "one seed per point"


def load_curves(sweep, points):
    """{other-axes label: {load: [metrics of each seed]}} with the load from the axis or the results."""
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


def zero_load_latency(curves):
    """(latency, load): the lowest p50 network latency at the lowest offered load of the sweep
    (mean over seeds), the latency of a packet that meets hardly any queue; (None, load) when
    the sweep has a single load or its lowest is above 0.3 (queueing is no longer negligible)."""
    loads = {x for by_load in curves.values() for x in by_load}
    lowest = min(loads)
    if len(loads) < 2 or lowest > 0.3:
        return None, lowest
    p50 = [mean([num(m.get("latency_p50_ns")) for m in by_load[lowest]]) for by_load in curves.values()
           if lowest in by_load]
    p50 = [v for v in p50 if v is not None]
    return (min(p50), lowest) if p50 else (None, lowest)


def plot_load(sweep, points, out):
    curves = load_curves(sweep, points)
    if not curves:
        return [], "no point with an offered load (traffic.load) and status ok"
    written = []
    fig, axes = plt.subplots(1, 2, figsize=(12.5, 4.2))
    seeds = 0
    for label, by_load in sorted(curves.items()):
        loads = sorted(by_load)
        for ax, key in zip(axes, ("latency_p50_ns", "latency_p99_ns")):
            seeds = max(seeds, error_curve(ax, loads, [[num(m.get(key)) for m in by_load[x]] for x in loads], label))
    zero, at = zero_load_latency(curves)
    all_ns = [num(m.get(k)) for by_load in curves.values() for ms in by_load.values() for m in ms
              for k in ("latency_p50_ns", "latency_p99_ns")]
    for ax, what in zip(axes, ("p50", "p99")):
        if zero is not None:
            ax.axhline(zero, color="k", linestyle=":", linewidth=1,
                       label="zero-load latency %s (p50 at load %g)" % (ns_text(round(zero, 1)), at))
        ax.set_xlabel("offered load (fraction of line rate)")
        ax.set_ylabel("network latency %s" % what)
        ax.set_title("network latency %s" % what)
        log_axis(ax.yaxis, all_ns + [zero], ns_text)
        if ax.get_yscale() != "log":
            ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: ns_text(v)))
        ax.grid(True, which="major", alpha=0.3)
        ax.grid(True, which="minor", alpha=0.1)
    legend_outside(axes[1], seeds_note(seeds))
    fig.suptitle("Load-latency")
    written.append((save(fig, out, "load_latency.png"), "Network latency vs offered load, one curve per "
                    "combination of the other axes; %s.%s" % (seeds_note(seeds), " Dotted: the zero-load latency."
                                                               if zero is not None else "")))

    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    for label, by_load in sorted(curves.items()):
        loads = sorted(by_load)
        error_curve(ax, loads, [[num(m.get("accepted_load")) for m in by_load[x]] for x in loads], label)
    top = max(1.0, max(max(by_load) for by_load in curves.values()))
    ax.plot([0, 1, top], [0, 1, 1], "k--", linewidth=0.8, label="line-rate bound: accepted = offered, at most 1")
    ax.set_xlabel("offered load (fraction of line rate)")
    ax.set_ylabel("accepted load (fraction of line rate)")
    ax.set_title("Throughput vs load")
    ax.grid(True, alpha=0.3)
    legend_outside(ax, seeds_note(seeds))
    written.append((save(fig, out, "throughput_load.png"), "Accepted vs offered load; %s. Dashed: the line-rate "
                    "bound (a fabric cannot deliver more than offered, nor more than line rate)." % seeds_note(seeds)))
    return written, None


def line_plot(out, name, title, xlabel, ylabel, series, why_empty, xtext=None, marker=None, caption=""):
    """One PNG of curves [(label, xs, ys)]; ([], why_empty) when there is none. The x axis is
    logarithmic when its values span a decade (ticks labelled by xtext)."""
    series = [s for s in series if s[1]]
    if not series:
        return [], why_empty
    fig, ax = plt.subplots(figsize=(9, 4.2))
    for label, xs, ys in series:
        ax.plot(xs, ys, label=label, marker=marker)
    if xtext:
        log_axis(ax.xaxis, [x for s in series for x in s[1]], xtext)
        if ax.get_xscale() != "log":
            ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: xtext(v)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", alpha=0.1)
    legend_outside(ax)
    return [(save(fig, out, name), caption)], None


def plot_cdf(points, out):
    series = []
    for label, _, _, folder in pick([p for p in points if os.path.exists(os.path.join(p[3], "packets.csv"))]):
        with open(os.path.join(folder, "packets.csv")) as f:
            lat = sorted(float(r["network_latency_ns"]) for r in csv.DictReader(f))
        series.append((label, lat, [(i + 1) / len(lat) for i in range(len(lat))]))
    return line_plot(out, "latency_cdf.png", "Latency CDF", "network latency", "fraction of packets", series,
                     "no packets.csv with delivered packets (sweep packet_csv: false, or fabricsim run without "
                     "--packet-csv)", xtext=ns_text, caption="Network-latency CDF of up to %d points." % MAX_CURVES)


def plot_buffers(points, out):
    series = []
    for label, _, res, _ in pick([p for p in points if p[2] is not None and p[2].get("timeseries", {}).get("time_ns")]):
        ts = res["timeseries"]
        total = [(i + e) / 1024 for i, e in zip(ts["ingress_bytes"], ts["egress_bytes"])]
        series.append((label, [t / 1e3 for t in ts["time_ns"]], total))
    return line_plot(out, "buffer_occupancy.png", "Buffer occupancy over time", "simulated time (us)",
                     "buffer occupancy, all ports (KiB)", series,
                     "no buffer occupancy time series (output.sample_interval: 0s)",
                     caption="Switch buffer occupancy (ingress + egress, all ports) of up to %d points." % MAX_CURVES)


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
    return [(save(fig, out, "link_utilisation.png"), "Egress utilisation of every link, one heatmap per tier.")], None


def plot_allreduce(points, out):
    """Bus bandwidth vs message size, one curve per combination of the axes (seeds merged: the
    mean, bars from the lowest to the highest seed)."""
    groups = {}
    for _, row, res, _ in points:
        if res is None or not res.get("collective", {}).get("sizes"):
            continue
        label = ("%s %s" % (res["collective"].get("op", ""), point_label(row, seed=False))).strip()
        for s in res["collective"]["sizes"]:
            groups.setdefault(label, {}).setdefault(s["bytes"], []).append(num(s.get("busbw_GBps")))
    if not groups:
        return [], "no collective in these results"
    fig, ax = plt.subplots(figsize=(9, 4.2))
    seeds = 0
    for label, by_size in list(sorted(groups.items()))[:MAX_CURVES]:
        sizes = sorted(by_size)
        seeds = max(seeds, error_curve(ax, sizes, [by_size[x] for x in sizes], label))
    log_axis(ax.xaxis, [x for by_size in groups.values() for x in by_size], bytes_text, base=2)
    if ax.get_xscale() != "log":
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: bytes_text(v)))
    ax.set_xlabel("message size (bytes per rank)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_title("Collective bus bandwidth vs message size")
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", alpha=0.1)
    legend_outside(ax, seeds_note(seeds))
    return [(save(fig, out, "allreduce_busbw.png"), "Bus bandwidth (nccl-tests definition) vs message size; %s."
             % seeds_note(seeds))], None


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
                     "output.sample_interval: 0s)", caption="RDMA congestion-control rate over simulated time.")


def cell(v):
    """A table cell: numbers right-aligned with four significant digits (no exponent), text left
    (an axis value such as "0.2" is kept as written, right-aligned)."""
    if isinstance(v, str) and num(v) is not None:
        return '<td class="num">%s</td>' % html.escape(v)
    if isinstance(v, bool) or v is None or not isinstance(v, (int, float)):
        return '<td class="text">%s</td>' % html.escape("" if v is None else str(v))
    if isinstance(v, float):
        if not math.isfinite(v):
            text = str(v)
        elif v == 0 or abs(v) >= 1000:
            text = "%.0f" % v
        else:
            text = "%.*f" % (max(0, 3 - math.floor(math.log10(abs(v)))), v)
    else:
        text = str(v)
    return '<td class="num">%s</td>' % text


def header(name):
    """A column name that may break after its underscores and dots (long metric names)."""
    return "<th>%s</th>" % html.escape(name).replace("_", "_<wbr>").replace(".", ".<wbr>")


def table_html(sweep, points):
    cols = ["point"] + sweep["axes"] + ["seed"] + sweep.get("columns", [])
    rows = []
    for _, row, res, _ in points:
        m = row.get("metrics") or {}
        cells = [row["point"]] + [row["axes"].get(k) for k in sweep["axes"]] + [row["seed"]]
        cells += [m.get(c) for c in sweep.get("columns", [])]
        rows.append("<tr>" + "".join(cell(c) for c in cells) + "</tr>")
    head = "<tr>" + "".join(header(c) for c in cols) + "</tr>"
    return "<table>\n<thead>%s</thead>\n<tbody>\n%s\n</tbody>\n</table>" % (head, "\n".join(rows))


def run_table_html(res):
    """One run: the fabric-wide figures and the tier table."""
    lat = res["latency"]["network_latency_ns"]
    rows = [("simulated time (ns)", res["simulated_time_ns"]), ("offered load", res["throughput"]["offered_load"]),
            ("accepted load", res["throughput"]["accepted_load"]), ("packets delivered", res["packets"]["delivered"]),
            ("packets dropped", res["packets"]["dropped"])] + [("network latency %s (ns)" % k, lat.get(k))
                                                               for k in ("mean", "p50", "p99", "p99.9", "max")]
    out = '<div class="wide"><table><tbody>' + "".join("<tr><th>%s</th>%s</tr>" % (html.escape(k), cell(v))
                                                        for k, v in rows) + "</tbody></table></div>"
    tiers = res.get("tiers", {})
    if tiers:
        out += '<h3>Tiers</h3><div class="wide"><table><tr>%s</tr>' % "".join(
            header(c) for c in ("tier", "links", "mean", "max", "imbalance"))
        for name, t in sorted(tiers.items()):
            out += "<tr>%s</tr>" % "".join(cell(v) for v in (name, t["links"], t["mean_utilisation"],
                                                             t["max_utilisation"], t.get("imbalance")))
        out += "</table></div>"
    return out


# Readable at 1280 px: the page is at most 1200 px wide, a wide table scrolls inside its own box
# (never the page), numbers are right-aligned in tabular figures.
CSS = """
body { font-family: sans-serif; color: #222; line-height: 1.4; max-width: 1200px; margin: 1.5em auto;
       padding: 0 1em; }
code { overflow-wrap: anywhere; }
.wide { max-width: 100%; overflow-x: auto; margin: 0.5em 0 1.5em; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border: 1px solid #ccc; padding: 2px 6px; }
th { background: #eee; text-align: center; vertical-align: bottom; font-weight: 600; }
tbody th { text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { text-align: left; white-space: nowrap; }
figure { margin: 1em 0; }
img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 13px; color: #444; }
.na { color: #777; }
"""

# Marks the page once loaded (the tests read it): how many plot images the browser decoded, and
# how far the page and its tables reach past the window's width (0: nothing wider than the page).
CHECK = """
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img.plot');
  var ok = 0;
  imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });
  var page = document.documentElement.clientWidth;
  var past = 0;
  document.querySelectorAll('.wide, img, figure').forEach(function (e) {
    past = Math.max(past, Math.ceil(e.getBoundingClientRect().right - page));
  });
  document.body.setAttribute('data-images-total', imgs.length);
  document.body.setAttribute('data-images-decoded', ok);
  document.body.setAttribute('data-overflow-px', Math.max(0, document.documentElement.scrollWidth - page, past));
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
        for path, caption in written:
            with open(path, "rb") as f:
                data = base64.b64encode(f.read()).decode("ascii")
            name = os.path.basename(path)
            body += ('<figure><img class="plot" alt="%s" src="data:image/png;base64,%s">'
                     '<figcaption><code>%s</code>: %s</figcaption></figure>\n') % (
                html.escape(name), data, html.escape(name), html.escape(caption))
        if why_not:
            body += '<p class="na">Not applicable: %s.</p>\n' % html.escape(why_not)
        sections.append("<h2>%s</h2>\n%s" % (html.escape(title), body))
        print("report: %s: %s" % (title, ", ".join(os.path.basename(p) for p, _ in written) or
                                  "not applicable: " + why_not))

    if sweep.get("executor") == "run":
        table = run_table_html(points[0][2])
    else:
        table = '<div class="wide">%s</div>' % table_html(sweep, points)
    ok = sum(1 for _, row, _, _ in points if (row.get("metrics") or {}).get("status", "ok") == "ok")
    page = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fabricsim report: %(title)s</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>%(css)s</style><script>%(check)s</script></head>
<body>
<h1>fabricsim report</h1>
<p>Sweep file: <code>%(file)s</code>; base configuration: <code>%(base)s</code>; executor: %(executor)s;
%(n)d points, %(ok)d ok; axes: %(axes)s.</p>
%(sections)s
<h2>Results table</h2>
%(table)s
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
    for problem in LAYOUT["failed"]:
        print("report: layout check failed: %s" % problem, file=sys.stderr)
    if not LAYOUT["failed"]:
        print("report: layout check: the legends of %d figures lie outside their plot areas" % LAYOUT["figures"])
    print("report: %s" % index)


if __name__ == "__main__":
    main()
