#!/usr/bin/env python3
"""Plot the step's signed error against GPU count, per source, from two `trainsim validate` CSVs.

    python3 tools/plot_error_vs_scale.py BEFORE.csv AFTER.csv [--out docs/error_vs_scale.png]
                                         [--suite published] [--source REGEX]

One line per source (the case's `source` without its row) through its mean error at each GPU count, before
dashed and after solid, every case a small marker; only sources whose cases ran on at least two GPU counts.
The error is the speed error, positive when the prediction is too fast: predicted/measured − 1 for rates
(tokens/s, TFLOP/s, MFU), measured/predicted − 1 for times, so that series of either kind read the same way.
The GPU count of a case is cluster.nodes times cluster.gpus_per_node (else its node preset's,
topologies/presets/nodes/). The table of points is printed.
Needs Debian's python3-matplotlib and python3-yaml (tools/dev installs them).
"""

import argparse
import csv
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")  # headless: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import yaml  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def source_of(text):
    """The source without its row: 'Narayanan et al. 2021, ..., Table 1, row 3 (7.5 B)' -> '... Table 1'."""
    return re.split(r",? rows? |\s\(", text)[0].strip().rstrip(",")


def gpus_of(case_file, presets):
    """cluster.nodes x GPUs per node of a case file, or None when the file or its node cannot be read."""
    try:
        with open(case_file, encoding="utf-8") as f:
            case = yaml.safe_load(f)
    except (OSError, yaml.YAMLError):
        return None
    cluster = case.get("cluster") if isinstance(case, dict) else None
    if not isinstance(cluster, dict):
        return None
    per_node = cluster.get("gpus_per_node")
    node = cluster.get("node")
    if per_node is None and isinstance(node, str):
        if node not in presets:
            try:
                with open(os.path.join(REPO, "topologies/presets/nodes", node + ".yaml"), encoding="utf-8") as f:
                    presets[node] = yaml.safe_load(f).get("gpus_per_node")
            except (OSError, yaml.YAMLError, AttributeError):
                presets[node] = None
        per_node = presets[node]
    nodes = cluster.get("nodes", 1)
    if not isinstance(per_node, int) or not isinstance(nodes, int):
        return None
    return per_node * nodes


def speed_error(row):
    measured, predicted = float(row["measured"]), float(row["predicted"])
    if measured <= 0 or predicted <= 0:
        return None
    return measured / predicted - 1 if "time" in row["metric"] else predicted / measured - 1


def load(path, suites, source_filter):
    """{case: (source, metric, speed error, case file)}: each case's first scored metric."""
    out = {}
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["case"] in out or not row["error"] or (suites and row["group"] not in suites):
                continue
            source = source_of(row["source"])
            if source_filter and not re.search(source_filter, source):
                continue
            error = speed_error(row)
            if error is not None:
                out[row["case"]] = (source, row["metric"], error, row["file"])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--out", default=os.path.join(REPO, "docs", "error_vs_scale.png"))
    parser.add_argument("--suite", action="append", default=[], help="validate group (repeatable)")
    parser.add_argument("--source", default="", help="regular expression on the source")
    args = parser.parse_args()
    before = load(args.before, args.suite, args.source)
    after = load(args.after, args.suite, args.source)
    presets = {}
    series = {}
    for case, (source, metric, error, case_file) in after.items():
        gpus = gpus_of(case_file, presets)
        if gpus is None:
            continue
        old = before[case][2] if case in before else None
        series.setdefault(source, []).append((gpus, case, metric, old, error))
    series = {s: sorted(p) for s, p in series.items() if len({g for g, *_ in p}) >= 2}
    if not series:
        sys.exit("no source has cases on two or more GPU counts in " + args.after)
    print("source\tcase\tgpus\tmetric\tbefore\tafter")
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for i, (source, points) in enumerate(sorted(series.items())):
        color = f"C{i % 10}"
        for gpus, case, metric, old, new in points:
            shown_old = "" if old is None else f"{100 * old:+.1f}%"
            print(f"{source}\t{case}\t{gpus}\t{metric}\t{shown_old}\t{100 * new:+.1f}%")
        label = source if len(source) <= 60 else source[:57] + "..."
        for column, style, alpha, suffix in ((3, "s--", 0.5, " (before)"), (4, "o-", 1.0, " (after)")):
            known = [(p[0], 100 * p[column]) for p in points if p[column] is not None]
            if not known:
                continue
            # Every case a small marker; the line joins the mean at each GPU count.
            ax.scatter([x for x, _ in known], [y for _, y in known], s=8, color=color, alpha=0.3 * alpha)
            counts = sorted({x for x, _ in known})
            means = [sum(y for x, y in known if x == c) / sum(1 for x, _ in known if x == c) for c in counts]
            ax.plot(counts, means, style, color=color, alpha=alpha, mfc="none" if column == 3 else color,
                    label=label + suffix)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("GPUs")
    ax.set_ylabel("speed error, % (positive: predicted too fast)")
    ax.set_title("Step error against scale: " + os.path.basename(args.before) + " (dashed) vs " +
                 os.path.basename(args.after) + " (solid)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print("wrote " + args.out, file=sys.stderr)


if __name__ == "__main__":
    main()
