#!/usr/bin/env python3
"""One estimate from Python in-process (trainsim.run) against `trainsim run` as a subprocess, both at the
analytic fidelity on the same example and writing the same summary: the median wall time of N calls each.
Also llm-analysis's `analysis.train` when it is installed (it is not a Debian package: reported absent).

    tools/dev python bench/python_vs_cli.py [--calls 1000] [--cli-calls 200]

The module and the binary are the build folder's (build/release); results in bench/README.md.
"""

import argparse
import json
import os
import statistics
import subprocess
import time
import warnings
from pathlib import Path

import trainsim

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "scenarios" / "examples" / "llama3-8b-64-h100.yaml"
BINARY = os.environ.get("TRAINSIM_BINARY", str(ROOT / "build" / "release" / "tools" / "trainsim"))


def median_s(call, n):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="in-process calls (default 1000)")
    parser.add_argument("--cli-calls", type=int, default=200, help="subprocess calls (default 200)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # the example's checkpoint note, once per call

    def in_process():
        return trainsim.run(str(EXAMPLE), fidelity="analytic")

    def subprocess_run():
        out = subprocess.run([BINARY, "run", str(EXAMPLE), "--fidelity", "analytic", "--format", "json"],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    assert in_process() == subprocess_run()  # the same summary both ways
    in_process()  # presets parsed and cached, as in any session after its first call
    python_s = median_s(in_process, args.calls)
    cli_s = median_s(subprocess_run, args.cli_calls)
    print(f"example: {EXAMPLE.name}, fidelity analytic, load {os.getloadavg()[0]:.2f}")
    print(f"trainsim.run in-process: median {python_s * 1e3:.3f} ms of {args.calls} calls")
    print(f"trainsim run subprocess: median {cli_s * 1e3:.3f} ms of {args.cli_calls} calls")
    print(f"ratio: {cli_s / python_s:.1f}x")
    try:
        import llm_analysis
        print(f"llm-analysis {getattr(llm_analysis, '__version__', '')} is installed; this script does not "
              "measure it")
    except ImportError:
        print("llm-analysis: not installed (not a Debian package), not measured")


if __name__ == "__main__":
    main()
