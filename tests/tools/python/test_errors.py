"""Bad input raises trainsim.InputError carrying the command line's diagnostics."""

import pytest
import trainsim
from conftest import EXAMPLES, SOURCE, cli

GOOD = {
    "model": "llama3-8b",
    "cluster": {"node": "dgx-h100", "nodes": 8},
    "parallelism": {"tp": 2, "dp": "auto", "micro_batch": 2, "zero": 1},
    "training": {"global_batch": 512, "precision": "bf16", "tokens": 1e12},
}


def with_change(path, value):
    """GOOD with the key at dotted `path` set to `value`."""
    import copy

    scenario = copy.deepcopy(GOOD)
    *parents, last = path.split(".")
    node = scenario
    for key in parents:
        node = node[key]
    node[last] = value
    return scenario


def test_good_dict_runs():
    assert trainsim.run(GOOD, fidelity="analytic")["iteration_time_s"] > 0


def test_numpy_numbers_are_numbers():
    import numpy as np

    expected = trainsim.run(with_change("cluster.nodes", 16), fidelity="analytic")
    assert trainsim.run(with_change("cluster.nodes", np.int64(16)), fidelity="analytic") == expected
    assert trainsim.run(GOOD, set={"cluster.nodes": np.int32(16)}, fidelity="analytic") == expected


def test_misspelled_key_names_its_path():
    with pytest.raises(trainsim.InputError) as raised:
        trainsim.run(with_change("cluster.nodez", 4), fidelity="analytic")
    e = raised.value
    assert e.key_path == "cluster.nodez"
    assert e.file == "<dict>"
    assert (e.line, e.column) == (5, 3)  # model, cluster, node, nodes, nodez: line 5, indented by 2
    assert e.message == 'unknown key "nodez" (did you mean "node"?)'
    assert len(e.diagnostics) == 1
    assert str(e).splitlines()[0] == f"<dict>:{e.line}:{e.column}: cluster.nodez: {e.message}"


def test_bad_value_names_its_path():
    with pytest.raises(trainsim.InputError) as raised:
        trainsim.run(with_change("parallelism.tp", "two"), fidelity="analytic")
    assert raised.value.key_path == "parallelism.tp"
    assert isinstance(raised.value, ValueError)


def test_every_problem_is_reported():
    bad = with_change("cluster.nodes", -1)
    bad["training"]["precisoin"] = "bf16"
    with pytest.raises(trainsim.InputError) as raised:
        trainsim.run(bad, fidelity="analytic")
    paths = {d.key_path for d in raised.value.diagnostics}
    assert {"cluster.nodes", "training.precisoin"} <= paths


@pytest.mark.parametrize("bad", sorted((SOURCE / "tests" / "tools" / "bad_inputs").glob("*.yaml"))[:6],
                         ids=lambda p: p.stem)
def test_file_errors_are_the_clis_text(bad):
    _, _, stderr = cli("run", bad, "--fidelity", "analytic", check_codes=(2,))
    with pytest.raises(trainsim.InputError) as raised:
        trainsim.run(bad, fidelity="analytic")
    assert "error: " + str(raised.value) + "\n" == stderr
    assert raised.value.file == str(bad)


def test_missing_file_and_wrong_types():
    with pytest.raises(trainsim.InputError):
        trainsim.run(str(EXAMPLES / "no-such-scenario.yaml"))
    with pytest.raises(trainsim.InputError):
        trainsim.run(42)
    with pytest.raises(trainsim.InputError, match="found object"):
        trainsim.run({"model": object()})
    with pytest.raises(trainsim.InputError, match="nan"):
        trainsim.run(with_change("training.tokens", float("nan")))
    with pytest.raises(trainsim.InputError, match="key.path=value"):
        trainsim.run(GOOD, set=["cluster.nodes"])
    with pytest.raises(trainsim.InputError, match="fidelity"):
        trainsim.run(GOOD, fidelity="fast")
