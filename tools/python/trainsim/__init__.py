"""trainsim from Python: the simulator's commands as functions, in-process.

Each function does what the ``trainsim`` command of the same name does, through the same library calls,
and returns what that command writes as Python data: ``run`` the object of ``summary.json`` (a dict,
field names with their units: ``iteration_time_s``, ``memory_per_gpu_bytes``, ``cost_total_usd``),
``sweep``/``search``/``validate`` the rows of their CSV as a pandas DataFrame (a list of dicts when
pandas is not installed), ``explain`` and ``cluster`` their JSON as a dict.

A scenario is a path, YAML text, or a dict nested like the YAML::

    import trainsim
    s = {"model": {"preset": "llama3-8b"}, "cluster": {"node": {"preset": "dgx-h100"}, "nodes": 4}, ...}
    trainsim.run(s, fidelity="analytic")["iteration_time_s"]

Bad input raises ``trainsim.InputError`` (file, line, column, key path, message: the command line's
text); a plan that does not fit, is infeasible or misses its budget raises ``trainsim.InfeasibleError``
with the reason and the partial result. The simulation runs without the GIL: threads estimate in
parallel.
"""

from __future__ import annotations

import csv
import io
import json
import os
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Optional, Union

from . import _core
from ._errors import Diagnostic, InfeasibleError, InputError
from ._scenario_text import Scenario, Sets, path_of, sets_of, source_of

__all__ = [
    "run", "explain", "sweep", "search", "validate", "cluster", "examples_folder", "validation_suites",
    "InputError", "InfeasibleError", "Diagnostic",
]

try:
    import pandas as _pandas
except ImportError:  # pandas is optional: tables come back as lists of dicts
    _pandas = None


def _cell(text: str) -> Any:
    """A CSV cell as pandas.read_csv reads it: empty -> None, true/false -> bool, numbers -> int/float."""
    if text == "":
        return None
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _table(text: str, text_columns: Sequence[str] = ()) -> Any:
    """CSV text (a header line, then rows) as a DataFrame, or a list of dicts without pandas. Columns in
    ``text_columns`` stay strings (e.g. a fingerprint of hex digits)."""
    if _pandas is not None:
        if not text:
            return _pandas.DataFrame()
        # round_trip: every number exactly as Python's float() reads it (pandas' default parser can be
        # off by one unit in the last place).
        return _pandas.read_csv(io.StringIO(text), dtype={c: str for c in text_columns},
                                float_precision="round_trip")
    rows = csv.DictReader(io.StringIO(text))
    return [{k: (v if k in text_columns else _cell(v)) for k, v in row.items()} for row in rows]


def _fidelity(fidelity: Optional[str], default: str) -> str:
    return default if fidelity is None else fidelity


def run(scenario: Scenario, *, set: Sets = None, fidelity: Optional[str] = None,
        full_cluster: bool = False) -> dict[str, Any]:
    """Simulate one scenario, as ``trainsim run S.yaml --format json``.

    scenario: a path, YAML text or a dict nested like the YAML.
    set: overrides applied before the scenario is read, as ``--set``: {"cluster.nodes": 64} or
        ["cluster.nodes=64"].
    fidelity: "event" (default, the discrete-event step) or "analytic" (the closed form, fastest).
    full_cluster: simulate every replica and rank over the cluster graph (needs fidelity "event").

    Returns the summary: the fields of summary.json under the same names, values in the unit the name
    ends with (``iteration_time_s``, ``memory_per_gpu_bytes``, ``cost_total_usd``, ...).
    Raises InputError for bad input, InfeasibleError when the layout is infeasible, does not fit in
    memory or misses a budget (its ``result`` holds the summary).
    """
    chosen = _fidelity(fidelity, "event")
    if full_cluster and chosen != "event":
        raise InputError("full_cluster=True simulates events: it needs fidelity='event'")
    text, feasible, fits, reason, budget, notes = _core.run(source_of(scenario), sets_of(set), chosen,
                                                           bool(full_cluster))
    result = json.loads(text)
    for note in notes:
        warnings.warn(note, stacklevel=2)
    if not feasible:
        raise InfeasibleError("infeasible layout: " + reason, result)
    problems = ([] if fits else ["does not fit: " + reason]) + ["budget: " + v for v in budget]
    if problems:
        raise InfeasibleError("\n".join(problems), result)
    return result


def explain(scenario: Scenario, *, set: Sets = None, ops: bool = False) -> dict[str, Any]:
    """The breakdown of ``trainsim explain S.yaml --json`` as a dict: ``fits``, ``reason`` and
    ``sections``, each with a ``title``, ``notes`` and ``lines`` of ``label``, ``formula`` (the
    formula with the numbers put in), ``value`` (SI units) and ``unit``. ops: add one layer's ops,
    each alone, as ``--ops`` does."""
    return json.loads(_core.explain(source_of(scenario), sets_of(set), bool(ops)))


def sweep(scenario: Scenario, *, set: Sets = None, fidelity: Optional[str] = None,
          jobs: Optional[int] = None) -> Any:
    """Every point of the scenario's ``sweep:`` block, as ``trainsim sweep S.yaml`` (CSV).

    fidelity: "analytic" (default) or "event". jobs: threads (default: all cores).
    Returns one row per point, in point order, with the CSV's columns (``point``, ``sweep_fingerprint``,
    ``scenario``, the swept keys, the tags, then the summary's fields): a DataFrame, or a list of dicts
    when pandas is not installed. Points that cannot be built keep their row with ``feasible`` false
    and the reason.
    """
    text, notes = _core.sweep(source_of(scenario), sets_of(set), _fidelity(fidelity, "analytic"),
                              int(jobs or 0))
    for note in notes:
        warnings.warn(note, stacklevel=2)
    return _table(text, text_columns=("sweep_fingerprint",))


def search(scenario: Scenario, *, set: Sets = None, objective: str = "time", top: int = 10,
           jobs: Optional[int] = None, nodes: Optional[Iterable[int]] = None, event: bool = True,
           max_layouts: Optional[int] = None) -> Any:
    """Every parallel layout of the scenario's model on its cluster, ranked, as ``trainsim search
    S.yaml --format csv``: the top ``top`` (re-simulated event by event unless ``event`` is False) then
    the time-vs-cost Pareto layouts, one row each with ``rank``, ``on_pareto``, ``fidelity``, the
    layout's keys (as ``set=`` takes them), ``budget`` and the summary's fields.

    objective: "time" or "cost". nodes: node counts to consider (default: the scenario's).
    """
    args = _core.SearchArgs()
    args.objective = objective
    args.top = int(top)
    args.jobs = int(jobs or 0)
    args.nodes = [int(n) for n in (nodes or [])]
    args.event = bool(event)
    args.max_layouts = int(max_layouts or 0)
    return _table(_core.search(source_of(scenario), sets_of(set), args))


def validate(paths_or_suite: Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]], None]
             = None, *, fidelity: Optional[str] = None, jobs: Optional[int] = None, set: Sets = None,
             settings: Union[str, "os.PathLike[str]", None] = None) -> Any:
    """Validation cases (scenarios with a ``measured:`` block), predicted against measured, as
    ``trainsim validate ... --format csv``: one row per case and metric.

    paths_or_suite: a suite name (``validation_suites()``: "all", "korthikanti", ...), a case file or
    folder, or a list of them; None: every shipped case. fidelity: "analytic" (default) or "event".
    set: keys overridden in every scenario case (``--set``). settings: a settings file of per-case keys
    (``--settings``); what each case ran with is its ``settings`` column.
    """
    if paths_or_suite is None:
        items: list[str] = []
    elif isinstance(paths_or_suite, (str, os.PathLike)):
        items = [os.fspath(paths_or_suite)]
    else:
        items = [os.fspath(p) for p in paths_or_suite]
    suites = frozenset(_core.validation_suites())  # `set` is the parameter here
    named = [i for i in items if i in suites and not os.path.exists(i)]
    paths = [i for i in items if i not in named]
    return _table(_core.validate(paths, named, _fidelity(fidelity, "analytic"), int(jobs or 0), sets_of(set),
                                 os.fspath(settings) if settings is not None else ""))


def cluster(cluster_file: Union[str, "os.PathLike[str]"]) -> dict[str, Any]:
    """A shared cluster over a period, as ``trainsim cluster C.yaml --format json``: policy, nodes,
    ``cluster`` (utilisation, idle cost, ...), ``teams`` and ``jobs`` (a DataFrame, or a list of dicts
    without pandas)."""
    result = json.loads(_core.cluster(path_of(cluster_file)))
    if _pandas is not None:
        result["jobs"] = _pandas.DataFrame(result["jobs"])
    return result


def examples_folder() -> str:
    """The folder of the shipped example scenarios (installed, or the source tree's)."""
    return _core.examples_folder()


def validation_suites() -> list[str]:
    """The names ``validate`` takes as a suite: "all", then each shipped folder of cases."""
    return list(_core.validation_suites())
