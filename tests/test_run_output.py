"""Issue 16, Found 3 and 4: a headless run is never discarded at the end. Ctrl+C finishes the
current chunk, writes what was trained with summary.json marked "interrupted_at_step" (and the
checkpoint asked for) and exits 130. A write that fails is one line and exit code 2, and what
can be written still is, the network first; where it went is said."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import run_headless_here

from app.files import checkpoint

ROOT = Path(__file__).resolve().parent.parent


def _env(tmp_path: Path) -> dict:
    return dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))


def _run(gpu, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """A headless run of 20 steps, in this process (helpers.run_app)."""
    return run_headless_here(gpu, tmp_path, "--iterations", "20", *args)


def _one_error_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: cannot write "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def _network(path: Path) -> dict:
    network = json.loads(path.read_text())
    assert network["format"].startswith("slang-visual-trainer/network") and network["layers"]
    return network


def test_ctrl_c_writes_the_run_so_far_and_exits_130(tmp_path):
    out, ckpt = tmp_path / "d", tmp_path / "x.ckpt"
    command = [sys.executable, "-m", "app", "--headless", "--iterations", "200000", "--batch-size", "256"]
    command += ["--eval-every", "50", "--save-checkpoint", str(ckpt), "--out", str(out)]
    process = subprocess.Popen(
        command, cwd=ROOT, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        seen = ""
        deadline = time.monotonic() + 120
        while "step     100" not in seen and time.monotonic() < deadline and process.poll() is None:
            seen += process.stderr.read(1)  # the loss lines, every 50 steps
        assert "step     100" in seen, seen[-2000:]
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    summary = json.loads((out / "summary.json").read_text())
    step = summary["interrupted_at_step"]
    assert 100 <= step < 200000 and summary["steps"] == step
    assert f"interrupted at step {step:,}: the run so far is in {out}" in stderr
    assert checkpoint.load(ckpt).step == step, "the checkpoint asked for, at the same step"
    assert f"checkpoint: {ckpt}" in stdout
    _network(out / "network.json")
    rows = (out / "loss.csv").read_text().strip().splitlines()
    assert len(rows) == step + 1, "every step trained is in loss.csv"
    assert (out / "heatmaps.png").read_bytes()[:4] == b"\x89PNG"


def test_a_run_not_interrupted_says_so(gpu, tmp_path):
    result = _run(gpu, tmp_path, "--out", str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "d" / "summary.json").read_text())["interrupted_at_step"] is None


def _tmpfs(folder: Path, options: str):
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    return folder


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KB tmpfs, as the issue's full disk (needs root, as here)."""
    yield _tmpfs(tmp_path / "disk", "size=64k")
    subprocess.run(["umount", str(tmp_path / "disk")], check=False)


@pytest.fixture
def one_inode_disk(tmp_path):
    """A tmpfs with room for one file or folder: the checks before training each make a file
    there and remove it, so all pass; after training the first file written takes the room and
    every later one fails, as on a disk that fills during a run."""
    yield _tmpfs(tmp_path / "disk", "size=1m,nr_inodes=2")  # the root folder is one of the two
    subprocess.run(["umount", str(tmp_path / "disk")], check=False)


def test_a_full_disk_writes_the_network_first_and_says_what_failed(gpu, tmp_path, tiny_disk):
    out = tiny_disk / "run"
    line = _one_error_line(_run(gpu, tmp_path, "--out", str(out)))
    assert f"--out {str(out)!r} (heatmaps.png): " in line and "No space left on device" in line, line
    assert "partial" not in line, "the temporary name is not the user's business"
    assert f"written: {out / 'network.json'}, {out / 'summary.json'}, {out / 'loss.csv'}" in line, line
    _network(out / "network.json")
    assert json.loads((out / "summary.json").read_text())["steps"] == 20
    assert sorted(p.name for p in out.iterdir()) == ["loss.csv", "network.json", "summary.json"], "no partial files"


def test_a_file_that_cannot_be_written_is_skipped_and_the_rest_written(gpu, tmp_path):
    """Without root or a tmpfs: heatmaps.png is a folder, so no file can take its name."""
    out = tmp_path / "d"
    (out / "heatmaps.png").mkdir(parents=True)
    line = _one_error_line(_run(gpu, tmp_path, "--out", str(out), "--export-slang", str(tmp_path / "n.slang")))
    assert f"--out {str(out)!r} (heatmaps.png): " in line, line
    assert str(tmp_path / "n.slang") in line.split("written: ")[1]
    _network(out / "network.json")
    assert (tmp_path / "n.slang").read_text().startswith("//")
    assert not [p for p in out.iterdir() if ".partial" in p.name]


@pytest.mark.skipif(not os.access("/proc", os.W_OK), reason="needs a folder that looks writable and is not")
@pytest.mark.parametrize(
    "option, path",
    [
        ("--out", "/proc/run"),
        ("--screenshot", "/proc/shot.png"),
        ("--save-checkpoint", "/proc/run.ckpt"),
        ("--export-slang", "/proc/net.slang"),
    ],
)
def test_an_unwritable_path_is_refused_before_training(gpu, tmp_path, option, path):
    """/proc passes the permission check for root, but nothing can be created in it: each
    output path is tried by making a file there and removing it, before any training."""
    out = tmp_path / "d"
    args = ["--out", str(out), option, path] if option != "--out" else [option, path]
    result = _run(gpu, tmp_path, *args)
    line = _one_error_line(result)
    assert line.startswith(f"error: cannot write {option} {path!r}: "), line
    assert "step" not in result.stdout, "refused before training"
    assert not out.exists() and not (tmp_path / "cache" / "slang-visual-trainer" / "rescued").exists()
    assert not [p for p in Path("/proc").glob(".visual-trainer-probe-*")]


def test_option_paths_that_fail_after_training_no_longer_stop_network_json(gpu, tmp_path, one_inode_disk):
    """The disk fills during the run: the checkpoint, written first, takes its last room; the
    export and screenshot then fail, and network.json is written in --out as usual."""
    out, disk = tmp_path / "d", one_inode_disk
    args = ["--out", str(out), "--screenshot", str(disk / "shot.png"), "--save-checkpoint", str(disk / "run.ckpt")]
    result = _run(gpu, tmp_path, *args, "--export-slang", str(disk / "net.slang"))
    line = _one_error_line(result)
    for option, name in (("--export-slang", "net.slang"), ("--screenshot", "shot.png")):
        assert f"{option} {str(disk / name)!r}: No space left on device" in line, line
    assert "--save-checkpoint" not in line.split("; written: ")[0], line
    _network(out / "network.json")
    assert checkpoint.load(disk / "run.ckpt").step == 20
    assert sorted(p.name for p in disk.iterdir()) == ["run.ckpt"], "no partial files"


def test_an_out_that_fails_after_training_sends_the_network_to_the_cache(gpu, tmp_path, one_inode_disk):
    """--out's folder takes the disk's last room: network.json and the checkpoint asked for on
    the same disk go to the cache's rescue folder; the export elsewhere is written."""
    out, ckpt, export = one_inode_disk / "run", one_inode_disk / "a.ckpt", tmp_path / "a.slang"
    result = _run(gpu, tmp_path, "--out", str(out), "--save-checkpoint", str(ckpt), "--export-slang", str(export))
    line = _one_error_line(result)
    assert line.startswith(f"error: cannot write --out {str(out)!r}: No space left on device; "), line
    assert f"--save-checkpoint {str(ckpt)!r}: No space left on device" in line, line
    rescued = {Path(part.split(" went to ")[1]) for part in line.split("; ") if " went to " in part}
    assert {path.name for path in rescued} == {"network.json", "a.ckpt"}, line
    for path in rescued:
        assert path.parent.parent == tmp_path / "cache" / "slang-visual-trainer" / "rescued"
    _network(next(path for path in rescued if path.name == "network.json"))
    assert checkpoint.load(next(path for path in rescued if path.suffix == ".ckpt")).step == 20
    assert export.is_file() and line.endswith(f"; written: {export}"), line
    assert f"checkpoint: {next(path for path in rescued if path.suffix == '.ckpt')}" in result.stdout
