"""sweep, search, validate and cluster against the binary: the CLI's CSV (or JSON) as a DataFrame."""

import io
import json

import pandas as pd
import pytest
import trainsim
from conftest import EXAMPLES, SOURCE, cli


def cli_csv(*args, text_columns=()):
    _, stdout, _ = cli(*args, check_codes=(0, 1))
    return pd.read_csv(io.StringIO(stdout), dtype={c: str for c in text_columns},
                       float_precision="round_trip")


@pytest.mark.parametrize("name", ["gpt3-1.3b-sweep", "gpt3-to-loss-sweep"])
def test_sweep_equals_cli_csv(name):
    path = EXAMPLES / f"{name}.yaml"
    expected = cli_csv("sweep", path, "-j", "2", text_columns=["sweep_fingerprint"])
    got = trainsim.sweep(path, jobs=2)
    assert len(got) > 1
    assert list(got.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_sweep_with_set_and_event_fidelity():
    path = EXAMPLES / "gpt3-1.3b-sweep.yaml"
    expected = cli_csv("sweep", path, "--fidelity", "event", "--set", "training.global_batch=256",
                       text_columns=["sweep_fingerprint"])
    got = trainsim.sweep(path, fidelity="event", set={"training.global_batch": 256})
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_sweep_from_yaml_text_has_the_files_rows():
    path = EXAMPLES / "gpt3-1.3b-sweep.yaml"
    from_file = trainsim.sweep(path)
    from_text = trainsim.sweep(path.read_text())
    # The fingerprint hashes the expanded scenario, which names itself the same way in both.
    pd.testing.assert_frame_equal(from_text, from_file, check_exact=True)


def test_search_equals_cli_csv():
    path = EXAMPLES / "llama3-8b-64-h100.yaml"
    # 300 of the layouts (evenly spaced): the whole space takes seconds, the same code path a fraction.
    expected = cli_csv("search", path, "--format", "csv", "--top", "3", "--max-layouts", "300",
                       "--nodes", "4,8")
    got = trainsim.search(path, top=3, max_layouts=300, nodes=[4, 8])
    assert len(got) >= 3 and (got["fidelity"][:3] == "event").all()
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    analytic = trainsim.search(path, top=3, max_layouts=300, nodes=[4, 8], event=False, objective="cost")
    pd.testing.assert_frame_equal(analytic, cli_csv("search", path, "--format", "csv", "--top", "3",
                                                    "--max-layouts", "300", "--nodes", "4,8", "--no-event",
                                                    "--objective", "cost"), check_exact=True)


def test_validate_suite_equals_cli_csv():
    expected = cli_csv("validate", "--suite", "korthikanti", "--format", "csv")
    got = trainsim.validate("korthikanti")
    assert len(got) > 0
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    # The memory verdict, then what each case ran with beyond its file (nothing here); Korthikanti et al.
    # ran every one of these layouts, and each fits as written.
    assert list(got.columns)[-3:] == ["source", "fits", "settings"]
    assert got["fits"].tolist() == [True] * len(got)
    assert got["settings"].isna().all()
    folder = SOURCE / "scenarios" / "validation" / "korthikanti"
    pd.testing.assert_frame_equal(trainsim.validate(folder), expected, check_exact=True)


def test_validate_settings_equal_cli_csv(tmp_path):
    settings = tmp_path / "settings.yaml"
    settings.write_text("cases:\n  kor22-t5-175b-selective:\n    source: \"Table 5, full\"\n"
                        "    set: {parallelism.recompute: full}\n")
    folder = SOURCE / "scenarios" / "validation" / "korthikanti"
    expected = cli_csv("validate", folder, "--format", "csv", "--settings", settings, "--set",
                       "training.steps=2")
    got = trainsim.validate(folder, settings=settings, set={"training.steps": 2})
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    told = got[got["case"] == "kor22-t5-175b-selective"]["settings"].unique().tolist()
    assert told == ["training.steps=2; parallelism.recompute=full"]


def test_cluster_equals_cli_json():
    path = EXAMPLES / "shared-cluster.yaml"
    _, stdout, _ = cli("cluster", path, "--format", "json")
    expected = json.loads(stdout)
    got = trainsim.cluster(path)
    jobs = got.pop("jobs")
    assert isinstance(jobs, pd.DataFrame) and len(jobs) == len(expected["jobs"])
    assert list(jobs.columns) == list(expected["jobs"][0])
    # A job that has not ended has end_s null: NaN in the frame, None again here.
    assert jobs.astype(object).where(jobs.notna(), None).to_dict("records") == expected.pop("jobs")
    assert got == expected


def test_without_pandas_tables_are_lists_of_dicts(monkeypatch):
    path = EXAMPLES / "gpt3-1.3b-sweep.yaml"
    frame = trainsim.sweep(path)
    monkeypatch.setattr(trainsim, "_pandas", None)
    rows = trainsim.sweep(path)
    assert isinstance(rows, list) and list(rows[0]) == list(frame.columns)
    for row, (_, expected) in zip(rows, frame.iterrows()):
        for key, value in row.items():
            if value is None:
                assert pd.isna(expected[key])
            else:
                assert value == expected[key], key
