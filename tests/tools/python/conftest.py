"""Shared by the Python module's tests: the trainsim binary they compare against, and the source tree.
ctest sets TRAINSIM_BINARY, TRAINSIM_SOURCE_DIR and PYTHONPATH (tests/CMakeLists.txt)."""

import os
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("TRAINSIM_SOURCE_DIR", Path(__file__).resolve().parents[3]))
EXAMPLES = SOURCE / "scenarios" / "examples"


def cli(*args, check_codes=(0,)):
    """Runs the trainsim binary; returns (exit code, stdout, stderr)."""
    binary = os.environ.get("TRAINSIM_BINARY", str(SOURCE / "build" / "release" / "tools" / "trainsim"))
    done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
    assert done.returncode in check_codes, done.stderr
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def trainsim_cli():
    return cli
