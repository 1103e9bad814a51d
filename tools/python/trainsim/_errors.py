"""The two errors trainsim raises: bad input, and a plan that cannot run as asked."""

from __future__ import annotations

from typing import Any, NamedTuple


class Diagnostic(NamedTuple):
    """One problem in the input, located as precisely as known (0 / "" when unknown)."""

    file: str
    line: int
    column: int
    key_path: str
    message: str


class InputError(ValueError):
    """Bad input: the scenario (file, YAML text or dict) or an argument is not what trainsim reads.

    ``str(error)`` is the command line's text (without its ``error:`` prefix): one line per problem,
    ``file:line:column: key.path: message``. ``diagnostics`` holds every problem; ``file``, ``line``,
    ``column``, ``key_path`` and ``message`` are those of the first.
    """

    def __init__(self, text: str, diagnostics: list[tuple[str, int, int, str, str]] | None = None):
        super().__init__(text)
        self.diagnostics: list[Diagnostic] = [Diagnostic(*d) for d in (diagnostics or [])]
        if not self.diagnostics:
            self.diagnostics = [Diagnostic("", 0, 0, "", text)]
        first = self.diagnostics[0]
        self.file: str = first.file
        self.line: int = first.line
        self.column: int = first.column
        self.key_path: str = first.key_path
        self.message: str = first.message


class InfeasibleError(RuntimeError):
    """The scenario loads but cannot run as asked: the layout is infeasible, it does not fit in memory,
    or a budget check failed (the cases in which ``trainsim run`` exits 1).

    ``reason`` says why (as the command line says it on standard error); ``result`` is the summary
    ``trainsim.run`` would have returned, with every number that could be computed.
    """

    def __init__(self, reason: str, result: dict[str, Any]):
        super().__init__(reason)
        self.reason: str = reason
        self.result: dict[str, Any] = result
