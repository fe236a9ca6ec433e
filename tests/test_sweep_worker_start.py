"""A sweep's Ray worker starts as the app's other processes do: importing the trial module (what
the worker does first) loads SlangPy with PyTorch marked absent, so SlangPy never imports it (4-5 s
a worker on an H200 machine, docs/benchmarks.md), and leaves no mark behind (Ray's tune.report
imports torch wherever sys.modules names it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT

CHECK = "import sys; import app.sweep.trial; print('slangpy' in sys.modules, 'torch' in sys.modules)"
STAND_IN = 'import os\nopen(os.environ["TORCH_IMPORTED"], "w").close()\nraise ImportError("stand-in")\n'


def test_a_worker_loads_slangpy_without_torch_and_leaves_no_mark(tmp_path):
    pytest.importorskip("ray")
    (tmp_path / "torch.py").write_text(STAND_IN)  # what SlangPy would import, where PyTorch is installed
    flag = tmp_path / "imported"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "TORCH_IMPORTED": str(flag)}
    result = subprocess.run(
        [sys.executable, "-c", CHECK], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False"], "SlangPy is loaded, and sys.modules names no torch"
    assert not flag.exists(), "SlangPy imported torch"
