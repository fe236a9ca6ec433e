"""The frame benchmark end to end on a few frames, and the JSON output the benchmarks share."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.bench import options

ROOT = Path(__file__).resolve().parent.parent


def test_frame_benchmark_writes_its_figures(tmp_path):
    out = tmp_path / "frame.json"
    result = subprocess.run(
        [sys.executable, "-m", "app.bench.frame", "--frames", "3", "--seconds", "0.2", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    assert figures["paused"]["frames"] == 3 and figures["training"]["ms_per_frame"] > 0
    assert figures["training"]["samples_per_second"] > 0 and figures["headless_samples_per_second"] > 0
    assert "window / headless" in result.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["frame.json"], "no temporary file is left"


def test_json_that_cannot_be_written_is_one_line_and_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        options.write_json(str(tmp_path / "missing" / "out.json"), {"a": 1})
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("error: could not write") and error.count("\n") == 1
    options.write_json(None, {"a": 1})  # no path: nothing written, no error


def test_benchmark_options_parse_the_shared_flags():
    parser = options.parser("bench.soak", "python -m app.bench.soak [--json PATH]\n\nSoak benchmark: leaks.\n")
    args = parser.parse_args(["--json", "x.json", "--device", "vulkan"])
    assert (args.json, args.device) == ("x.json", "vulkan") and parser.description == "Soak benchmark: leaks."
    with pytest.raises(SystemExit):
        parser.parse_args(["--device", "tpu"])
