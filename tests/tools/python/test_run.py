"""trainsim.run and trainsim.explain against the binary: the same numbers, to the last digit."""

import json
import warnings

import pytest
import trainsim
from conftest import EXAMPLES, cli

# Every shipped example that `trainsim run` reads (shared-cluster.yaml is a cluster file: test_tables.py).
RUN_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.yaml") if p.name != "shared-cluster.yaml")


def test_examples_are_found():
    assert len(RUN_EXAMPLES) >= 10
    assert trainsim.examples_folder() == str(EXAMPLES)


def python_run(path, **kwargs):
    """(the summary, whether InfeasibleError was raised)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return trainsim.run(path, **kwargs), False
        except trainsim.InfeasibleError as e:
            return e.result, True


@pytest.mark.parametrize("fidelity", ["event", "analytic"])
@pytest.mark.parametrize("example", RUN_EXAMPLES, ids=lambda p: p.stem)
def test_run_equals_summary_json(example, fidelity, tmp_path):
    code, _, _ = cli("run", example, "--fidelity", fidelity, "-o", tmp_path, check_codes=(0, 1))
    expected = json.loads((tmp_path / "summary.json").read_text())
    got, raised = python_run(str(example), fidelity=fidelity)
    assert got == expected  # every number parsed from the same digits: equal to the last bit
    assert raised == (code == 1)  # exit 1 (infeasible, does not fit, budget) <-> InfeasibleError


def test_default_fidelity_is_the_clis(tmp_path):
    example = EXAMPLES / "llama3-8b-64-h100.yaml"
    cli("run", example, "-o", tmp_path)
    assert python_run(example)[0] == json.loads((tmp_path / "summary.json").read_text())


def test_does_not_fit_carries_reason_and_partial_result():
    example = EXAMPLES / "llama3-405b-8k-standard-attention.yaml"
    _, _, stderr = cli("run", example, "--fidelity", "analytic", check_codes=(1,))
    with pytest.raises(trainsim.InfeasibleError) as raised:
        trainsim.run(example, fidelity="analytic")
    assert raised.value.reason in stderr  # "does not fit: stage 1 needs ..."
    assert raised.value.reason.startswith("does not fit: ")
    assert raised.value.result["fits"] is False
    assert raised.value.result["memory_per_gpu_bytes"] > 80 * 2**30


def test_yaml_text_and_dict_give_the_files_numbers():
    path = EXAMPLES / "llama3-8b-64-h100.yaml"
    from_file = trainsim.run(str(path), fidelity="analytic")
    text = path.read_text()
    from_text = trainsim.run(text, fidelity="analytic")
    assert from_text == from_file  # the file names itself (name:), so even the label is the same
    as_dict = {
        "name": "llama3-8b-64-h100",
        "tags": {"team": "llm", "project": "llama3-small"},
        "model": "llama3-8b",
        "cluster": {"node": "dgx-h100", "nodes": 8},
        "parallelism": {"tp": 2, "pp": 1, "dp": "auto", "micro_batch": 2, "sequence_parallel": True,
                        "zero": 1, "recompute": "none"},
        "training": {"global_batch": 512, "precision": "bf16",
                     "optimizer": {"kind": "adamw", "state_precision": "fp32", "master_weights": True},
                     "tokens": 1e12},
        "checkpoint": {"every_steps": 500, "mode": "async", "keep": 2},
        "pricing": {"gpu_hour": "$2.10/h"},
    }
    assert trainsim.run(as_dict, fidelity="analytic") == from_file


def test_set_is_the_clis_set(tmp_path):
    path = EXAMPLES / "llama3-8b-64-h100.yaml"
    cli("run", path, "--fidelity", "analytic", "--set", "cluster.nodes=4", "--set", "parallelism.tp=4",
        "-o", tmp_path)
    expected = json.loads((tmp_path / "summary.json").read_text())
    assert python_run(path, fidelity="analytic", set={"cluster.nodes": 4, "parallelism.tp": 4})[0] == expected
    assert python_run(path, fidelity="analytic", set=["cluster.nodes=4", "parallelism.tp=4"])[0] == expected


def test_full_cluster_needs_event():
    with pytest.raises(trainsim.InputError, match="fidelity='event'"):
        trainsim.run(EXAMPLES / "llama3-8b-64-h100.yaml", fidelity="analytic", full_cluster=True)


@pytest.mark.parametrize("name", ["llama3-8b-64-h100", "llama2-7b-to-loss"])
def test_explain_equals_cli_json(name):
    path = EXAMPLES / f"{name}.yaml"
    _, stdout, _ = cli("explain", path, "--json")
    got = trainsim.explain(path)
    assert got == json.loads(stdout)
    assert got["sections"] and all(line["formula"] for line in got["sections"][0]["lines"])


def test_explain_ops_equals_cli_json():
    path = EXAMPLES / "llama3-8b-64-h100.yaml"
    _, stdout, _ = cli("explain", path, "--json", "--ops")
    got = trainsim.explain(path, ops=True)
    assert got == json.loads(stdout)
    titles = [s["title"] for s in got["sections"]]
    assert any(t.startswith("ops of one layer") for t in titles)
    assert not any(t.startswith("ops of one layer") for t in (s["title"] for s in trainsim.explain(path)["sections"]))
