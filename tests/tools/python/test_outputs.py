"""The module's outputs: the same input gives byte-identical text (the summary, the sweep's CSV, the
cluster's JSON), whatever the thread count; and the module writes no file, so a Python process killed
mid-call leaves nothing half-written (what it returns is its only output; `trainsim sweep -o` and
`--resume` are the command line's, tested in tests/tools/sweep_test.cpp)."""

import os
import signal
import subprocess
import sys
import time

from conftest import EXAMPLES
from trainsim import _core
from trainsim._scenario_text import source_of

SCENARIO = str(EXAMPLES / "llama3-8b-64-h100.yaml")
SWEEP = str(EXAMPLES / "gpt3-1.3b-sweep.yaml")
CLUSTER = str(EXAMPLES / "shared-cluster.yaml")


def test_two_runs_give_byte_identical_summaries_at_both_fidelities():
    for fidelity in ("analytic", "event"):
        first = _core.run(source_of(SCENARIO), [], fidelity, False)[0]
        second = _core.run(source_of(SCENARIO), [], fidelity, False)[0]
        assert '"iteration_time_s"' in first
        assert first == second


def test_two_sweeps_give_byte_identical_csv_whatever_the_thread_count():
    one = _core.sweep(source_of(SWEEP), [], "analytic", 1)[0]
    two = _core.sweep(source_of(SWEEP), [], "analytic", 2)[0]
    again = _core.sweep(source_of(SWEEP), [], "analytic", 2)[0]
    assert one.count("\n") > 2  # a header and rows
    assert one == two == again


def test_two_cluster_runs_give_byte_identical_json():
    first = _core.cluster(CLUSTER)
    assert '"jobs"' in first
    assert first == _core.cluster(CLUSTER)


def test_the_module_writes_no_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    _core.run(source_of(SCENARIO), [], "event", False)
    _core.sweep(source_of(SWEEP), [], "analytic", 2)
    _core.cluster(CLUSTER)
    assert os.listdir(tmp_path) == []


def test_a_process_killed_mid_sweep_leaves_nothing_behind(tmp_path):
    # Sweeps of the 1,152-point grid, one after another until the kill: SIGKILL lands inside one however
    # fast a sweep is.
    script = ("import sys, trainsim\n"
              "print('started', flush=True)\n"
              "while True:\n"
              f"    trainsim.sweep({SWEEP!r}, set={{'sweep': '{{cluster.nodes: [1, 2, 4, 8, 16, 32], "
              "parallelism.micro_batch: [1, 2, 4, 8], parallelism.zero: [0, 1, 2, 3], "
              "parallelism.recompute: [none, selective, full], training.optimizer: [adamw, sgd-momentum]}'}, "
              "fidelity='event', jobs=2)\n")
    env = dict(os.environ, TMPDIR=str(tmp_path))
    child = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout.readline().strip() == "started"
    time.sleep(0.5)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    assert os.listdir(tmp_path) == []
