"""`cmake --install` puts the module in PREFIX/lib/python3/dist-packages/trainsim, and the installed
module reads its presets from PREFIX/share/trainsim as the installed binary does, from any folder."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import trainsim, warnings
warnings.simplefilter("ignore")
print(trainsim.__file__)
print(trainsim.examples_folder())
s = {"model": "installed-only-model", "cluster": {"node": "dgx-h100", "nodes": 8},
     "parallelism": {"tp": 2, "dp": "auto", "micro_batch": 2, "zero": 1},
     "training": {"global_batch": 512, "precision": "bf16", "tokens": 1e12}}
print(trainsim.run(s, fidelity="analytic")["parameters"])
"""


def test_installed_module_reads_installed_presets(tmp_path):
    prefix = tmp_path / "prefix"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run(["cmake", "--install", os.environ["TRAINSIM_BUILD_DIR"], "--prefix", str(prefix)],
                   check=True, capture_output=True)
    package = prefix / "lib" / "python3" / "dist-packages" / "trainsim"
    assert (package / "__init__.py").exists() and list(package.glob("_core*.so"))
    share = prefix / "share" / "trainsim"
    # A model preset that exists only in the installed folder: running it proves where presets are read.
    text = (share / "models" / "llama3-8b.yaml").read_text()
    (share / "models" / "installed-only-model.yaml").write_text(text)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRAINSIM_PATH")}
    env["PYTHONPATH"] = str(prefix / "lib" / "python3" / "dist-packages")
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=elsewhere, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    module_file, examples, parameters = done.stdout.splitlines()
    assert Path(module_file) == package / "__init__.py"
    assert Path(examples) == share / "examples"
    assert float(parameters) > 8e9  # Llama-3 8B: 8.03e9 parameters
    shutil.rmtree(prefix)
