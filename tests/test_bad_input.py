"""Bad input: one line naming the problem, exit code 2, no traceback, nothing written."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(args, tmp_path, out=None):
    out = out or tmp_path / "out"
    command = [sys.executable, "-m", "app", "--headless", "--iterations", "5", "--quiet", "--out", str(out), *args]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    return result, out


def _assert_rejected(result, out, words):
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    for word in words:
        assert word in lines[0], lines[0]
    assert not out.exists()


CASES = {
    "unknown activation": (["--activation", "swish"], ["--activation", "swish"]),
    "unknown optimizer": (["--optimizer", "lbfgs"], ["--optimizer"]),
    "unknown encoding": (["--encoding", "hash"], ["--encoding"]),
    "unknown precision": (["--precision", "double"], ["--precision"]),
    "unknown preset": (["--preset", "nope"], ["preset", "nope"]),
    "zero lr": (["--lr", "0"], ["learning rate"]),
    "negative lr": (["--lr", "-0.1"], ["learning rate"]),
    "nan lr": (["--lr", "nan"], ["learning rate"]),
    "infinite lr": (["--lr", "inf"], ["learning rate"]),
    "text lr": (["--lr", "fast"], ["--lr"]),
    "zero width": (["--hidden", "16,0"], ["width", "0"]),
    "too wide": (["--hidden", "257"], ["width", "257"]),
    "bad widths": (["--hidden", "a,b"], ["--hidden"]),
    "too many layers": (["--hidden", "4,4,4,4,4,4,4,4,4"], ["hidden"]),
    "zero batch": (["--batch-size", "0"], ["batch size"]),
    "negative batch": (["--batch-size", "-5"], ["batch size"]),
    "negative iterations": (["--iterations", "-1"], ["--iterations"]),
    "zero frequencies": (["--frequencies", "0"], ["frequencies"]),
    "unknown option": (["--learning-rate", "0.1"], ["--learning-rate"]),
    "no such device": (["--device", "metal"], ["device"]),
}


@pytest.mark.parametrize("name", CASES)
def test_bad_option(tmp_path, name):
    args, words = CASES[name]
    _assert_rejected(*_run(args, tmp_path), words)


def test_missing_config(tmp_path):
    _assert_rejected(*_run(["--config", str(tmp_path / "missing.json")], tmp_path), ["missing.json"])


def test_unreadable_config(tmp_path):
    folder = tmp_path / "a-folder.json"
    folder.mkdir()  # reading a folder fails even for root, unlike chmod 000
    _assert_rejected(*_run(["--config", str(folder)], tmp_path), ["cannot read"])


@pytest.mark.parametrize("text,words", [
    ("{not json", ["not valid JSON"]),
    ("[1, 2]", ["JSON object"]),
    ('{"lr": -1}', ["learning rate"]),
    ('{"hidden": [300]}', ["width", "300"]),
    ('{"colour": "blue"}', ["unknown key", "colour"]),
    ('{"targets": ["x + z"]}', ["unknown name", "z"]),
    ('{"targets": ["__import__(\'os\')"]}', ["unknown function"]),
    ('{"domain": [1, 0, 0, 1]}', ["domain"]),
])
def test_invalid_config(tmp_path, text, words):
    path = tmp_path / "config.json"
    path.write_text(text)
    _assert_rejected(*_run(["--config", str(path)], tmp_path), words)


def test_unwritable_out(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    _assert_rejected(*_run([], tmp_path, out=blocker / "run"), ["--out"])
