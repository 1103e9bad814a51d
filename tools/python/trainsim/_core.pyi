"""Type stubs of trainsim._core, the compiled half (tools/python/core_module.cpp). The public functions
are those of the trainsim package, which wrap these and turn their text into dicts and DataFrames."""

class Source:
    """A scenario: a file (text is its path) or YAML text labelled `label` in messages."""

    def __init__(self, text: str, is_path: bool, label: str) -> None: ...

class SearchArgs:
    objective: str
    top: int
    jobs: int
    nodes: list[int]
    event: bool
    max_layouts: int
    def __init__(self) -> None: ...

def run(
    source: Source, sets: list[tuple[str, str]], fidelity: str, full_cluster: bool
) -> tuple[str, bool, bool, str, list[str], list[str]]:
    """(summary.json text, feasible, fits, reason, budget violations, notes)."""

def explain(source: Source, sets: list[tuple[str, str]]) -> str:
    """`trainsim explain --json`'s text."""

def sweep(source: Source, sets: list[tuple[str, str]], fidelity: str, jobs: int) -> tuple[str, list[str]]:
    """(the sweep's CSV, its notes)."""

def search(source: Source, sets: list[tuple[str, str]], args: SearchArgs) -> str:
    """`trainsim search --format csv`'s text."""

def validate(paths: list[str], suites: list[str], fidelity: str, jobs: int) -> str:
    """`trainsim validate --format csv`'s text."""

def cluster(path: str) -> str:
    """`trainsim cluster --format json`'s text."""

def examples_folder() -> str: ...
def validation_suites() -> list[str]: ...
