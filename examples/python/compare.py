#!/usr/bin/env python3
"""Compare H100 and B200 offers for training one model: run time against cost.

Each option is one scenario (a dict nested like the YAML) run in-process by the trainsim module, at the
analytic fidelity (milliseconds each); the table is printed and the time-vs-cost plot written as PNG
(matplotlib, headless). The prices are placeholders: put in the quotes you have.

    python3 examples/python/compare.py [--out compare.png]

Needs the trainsim module on the path: built (PYTHONPATH=build/release/tools/python) or installed
(PYTHONPATH=PREFIX/lib/python3/dist-packages).
"""

import argparse
import warnings

import matplotlib

matplotlib.use("Agg")  # headless: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import trainsim  # noqa: E402

MODEL = "llama3-70b"
TOKENS = 2e12
# Offers to compare: node preset, price per GPU-hour (placeholders), and the node counts to consider.
OFFERS = {
    "H100": {"node": "dgx-h100", "gpu_hour": "$2.50/h", "nodes": [32, 64, 128]},
    "B200": {"node": "dgx-b200", "gpu_hour": "$5.00/h", "nodes": [16, 32, 64]},
}


def scenario(gpu, offer, nodes):
    return {
        "name": f"{MODEL}-{gpu}-{nodes}",
        "model": MODEL,
        "cluster": {"node": offer["node"], "nodes": nodes},
        "parallelism": {"tp": 8, "pp": 4, "dp": "auto", "schedule": "1f1b", "micro_batch": 1,
                        "sequence_parallel": True, "zero": 1, "recompute": "selective"},
        "training": {"global_batch": 512, "precision": "bf16", "optimizer": "adamw", "tokens": TOKENS},
        "pricing": {"gpu_hour": offer["gpu_hour"]},
    }


def compare():
    rows = []
    for gpu, offer in OFFERS.items():
        for nodes in offer["nodes"]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # notes about defaults, as `trainsim run` prints them
                try:
                    r = trainsim.run(scenario(gpu, offer, nodes), fidelity="analytic")
                    fits = True
                except trainsim.InfeasibleError as e:  # does not fit: shown, but not plotted
                    r, fits = e.result, False
            rows.append({"gpu": gpu, "nodes": nodes, "gpus": int(r["gpus"]), "fits": fits,
                         "iteration_s": r["iteration_time_s"], "mfu": r["mfu"],
                         "run_days": r["run_time_s"] / 86400, "cost_musd": r["cost_total_usd"] / 1e6})
    return pd.DataFrame(rows)


def plot(table, out):
    fig, ax = plt.subplots(figsize=(6, 4))
    for gpu, group in table[table["fits"]].groupby("gpu"):
        ax.plot(group["run_days"], group["cost_musd"], marker="o", label=gpu)
        for _, row in group.iterrows():
            ax.annotate(f"{row['gpus']} GPUs", (row["run_days"], row["cost_musd"]), fontsize=8,
                        textcoords="offset points", xytext=(4, 4))
    ax.set_xlabel("run time (days)")
    ax.set_ylabel("cost (million USD)")
    ax.set_title(f"{MODEL}, {TOKENS:.0e} tokens")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="compare.png", help="the plot (PNG)")
    args = parser.parse_args()
    table = compare()
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    plot(table, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
