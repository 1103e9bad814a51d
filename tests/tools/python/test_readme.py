"""The README's Python example runs as written and prints what it promises."""

import contextlib
import io
import re

from conftest import SOURCE


def test_readme_python_example_runs():
    readme = (SOURCE / "README.md").read_text()
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert re.fullmatch(r"\d+\.\d\d s per step, \d+\.\d\d M\$", lines[0])
    assert lines[1].startswith("4 nodes: ") and lines[2].startswith("16 nodes: ")
    assert float(lines[1].split()[2]) > float(lines[2].split()[2])  # 4 nodes take longer than 16
    assert lines[3].startswith("cluster.nodes -> ")
