"""How a Python argument becomes a scenario: a path, YAML text, or a dict nested like the YAML."""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Iterable, Mapping
from typing import Any, Union

from . import _core
from ._errors import InputError

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Sets = Union[Mapping[str, Any], Iterable[str], None]


def _scalar(value: Any) -> str:
    """One value as YAML text that the loader reads back as the same value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):  # int, numpy's integers
        return str(int(value))
    if isinstance(value, numbers.Real):  # float, numpy's floats
        if not math.isfinite(value):
            raise InputError(f"{value!r} is not a number trainsim reads")
        return repr(float(value))
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a YAML double-quoted scalar
    raise InputError(f"a scenario value must be a dict, list, str, int, float, bool or None, "
                     f"found {type(value).__name__}")


def _lines(value: Any, indent: str, out: list[str], path: str) -> None:
    """Block-style YAML, one key or item per line, so the loader's line numbers point at one key."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InputError(f"{path or 'scenario'}: keys must be strings, found {key!r}")
            where = f"{path}.{key}" if path else key
            if isinstance(item, (Mapping, list, tuple)) and item:
                out.append(f"{indent}{json.dumps(key)}:")
                _lines(item, indent + "  ", out, where)
            else:
                out.append(f"{indent}{json.dumps(key)}: {to_yaml(item)}")
    else:
        for item in value:
            if isinstance(item, (Mapping, list, tuple)) and item:
                out.append(f"{indent}-")
                _lines(item, indent + "  ", out, path)
            else:
                out.append(f"{indent}- {to_yaml(item)}")


def to_yaml(value: Any) -> str:
    """A dict, list or scalar as YAML text (empty containers as {} and [])."""
    if isinstance(value, Mapping):
        if not value:
            return "{}"
    elif isinstance(value, (list, tuple)):
        if not value:
            return "[]"
    else:
        return _scalar(value)
    out: list[str] = []
    _lines(value, "", out, "")
    return "\n".join(out) + "\n"


def source_of(scenario: Scenario) -> _core.Source:
    """A path (os.PathLike, or a one-line str naming a file or ending in .yaml/.yml), YAML text (any
    other str) or a dict (written out as YAML, messages say "<dict>")."""
    if isinstance(scenario, Mapping):
        return _core.Source(to_yaml(scenario), False, "<dict>")
    if isinstance(scenario, os.PathLike):
        return _core.Source(os.fspath(scenario), True, "")
    if isinstance(scenario, str):
        one_line = "\n" not in scenario
        if one_line and (os.path.exists(scenario) or scenario.endswith((".yaml", ".yml"))):
            return _core.Source(scenario, True, "")
        return _core.Source(scenario, False, "<string>")
    raise InputError(f"a scenario is a path, YAML text or a dict, found {type(scenario).__name__}")


def path_of(file: Union[str, "os.PathLike[str]"]) -> str:
    if isinstance(file, (str, os.PathLike)):
        return os.fspath(file)
    raise InputError(f"expected a file path, found {type(file).__name__}")


def sets_of(sets: Sets) -> list[tuple[str, str]]:
    """``set=`` as the command line's --set: a dict {key.path: value} (values as Python values or YAML
    text) or strings "key.path=value" (value as YAML text)."""
    if sets is None:
        return []
    if isinstance(sets, Mapping):
        return [(str(k), v if isinstance(v, str) else to_yaml(v).rstrip("\n")) for k, v in sets.items()]
    if isinstance(sets, str):
        sets = [sets]
    out = []
    for text in sets:
        key, eq, value = str(text).partition("=")
        if not eq or not key:
            raise InputError(f'--set expects key.path=value, found "{text}"')
        out.append((key, value))
    return out
