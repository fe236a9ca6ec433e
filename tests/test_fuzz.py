"""Fuzzing, bounded in time and reproducible (fixed seeds): random and mutated command lines,
config files, checkpoints and network files. Every case must end in one line naming the problem
(UserError in-process; exit code 2 on the command line) or a valid result, never another
exception, a traceback, a hang or a half-written --out.

Thousands of cases go through the parsing and checking layer in-process (everything the command
line does before it creates a device); a smaller set runs the whole program in subprocesses."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fuzz_inputs import InputFiles, command_line, mutate_bytes, mutate_json

from app.config import config as cfg
from app.config import files as config_files
from app.entry.cli_args import build_parser, iterations_for, resolve_start
from app.entry.cli_checks import check_headless
from app.errors import UserError
from app.files import checkpoint as ckpt
from app.files.network_io import load_network
from app.kernels.planning import plan_for
from app.loop.session import Session
from app.model.optimizers import OPTIMIZERS

ROOT = Path(__file__).resolve().parent.parent
COUNTS: dict[str, list[int]] = {}  # kind -> [cases, valid ones]


def _one_line(error: UserError) -> None:
    text = str(error)
    assert text.strip() and "\n" not in text and "Traceback" not in text, repr(text)


def _count(kind: str, valid: bool) -> None:
    cases = COUNTS.setdefault(kind, [0, 0])
    cases[0] += 1
    cases[1] += int(valid)


def _assert_both_ways(kind: str, valid: int, refused: int) -> None:
    """The cases of `kind` took both ways at least so often: a fuzzer whose inputs all fail (or
    all pass) at the first check tests nothing past it. The seeds are fixed; the bounds are about
    half of what they give today, so that a change of the inputs' mix shows, not a new option."""
    cases, ok = COUNTS[kind]
    assert ok >= valid and cases - ok >= refused, f"{kind}: {ok} valid, {cases - ok} refused of {cases}"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, gpu) -> InputFiles:
    return InputFiles(tmp_path_factory.mktemp("fuzz"), gpu)


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    print(
        "\nfuzz cases: "
        + ", ".join(f"{kind} {n} ({valid} valid)" for kind, (n, valid) in COUNTS.items())
        + f"; total {sum(n for n, _ in COUNTS.values())}"
    )


def test_command_lines_in_process(inputs):
    rng, cases = random.Random(1001), 2500
    for _ in range(cases):
        argv = command_line(rng, inputs, subprocess_safe=False)
        try:
            args = build_parser().parse_args(argv)
            if not args.headless:
                _count("command lines (in-process)", True)
                continue  # the window's checks need a display; its options are parsed the same way
            check_headless(args)
            start = resolve_start(args)
            assert iterations_for(args, start) >= start.step
            assert cfg.validate(start.config) == start.config
            _count("command lines (in-process)", True)
        except UserError as error:
            _one_line(error)
            _count("command lines (in-process)", False)
        except Exception as error:  # anything else is a bug: name the case
            raise AssertionError(f"{argv!r} raised {error!r}") from error
    _assert_both_ways("command lines (in-process)", valid=500, refused=800)


def test_config_files(inputs, tmp_path):
    rng, cases, path = random.Random(1002), 1500, tmp_path / "config.json"
    for k in range(cases):
        base = rng.choice(inputs.configs)
        data = mutate_json(rng, json.loads(base)) if k % 2 else mutate_bytes(rng, base.encode())
        path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
        try:
            config = config_files.load_file(path)
            assert cfg.validate(config) == config
            _count("config files", True)
        except UserError as error:
            _one_line(error)
            _count("config files", False)
    _assert_both_ways("config files", valid=40, refused=700)


def test_checkpoint_files(inputs, gpu):
    """Valid ones (a header mutation can leave one valid) are also restored and trained a step."""
    rng, cases, sessions = random.Random(1003), 1500, {}
    for k in range(cases):
        good = rng.choice(inputs.checkpoints)
        data = mutate_bytes(rng, good) if k % 3 else inputs.reheader(rng, good)
        try:
            loaded = ckpt.decode(data, "fuzz.ckpt")
        except UserError as error:
            _one_line(error)
            _count("checkpoint files", False)
            continue
        count = plan_for(loaded.config).param_count  # a valid one: consistent and loadable
        width = OPTIMIZERS[loaded.config.optimizer].state_width
        assert loaded.master.size == count and loaded.optimizer_state.size == width * count
        assert (loaded.weights is not None) == (loaded.config.precision == "half")
        key = loaded.config.structure()
        if key in sessions or len(sessions) < 3:  # each new structure costs a compile
            session = sessions.setdefault(key, Session(gpu, loaded.config, grid=8))
            ckpt.restore(session, loaded)
            session.advance(1)
            assert session.trainer.step == loaded.step + 1
        _count("checkpoint files", True)
    _assert_both_ways("checkpoint files", valid=12, refused=700)


def test_network_files(inputs, tmp_path):
    rng, cases, path = random.Random(1004), 1000, tmp_path / "network.json"
    for k in range(cases):
        base = rng.choice(inputs.networks)
        data = mutate_json(rng, json.loads(base)) if k % 2 else mutate_bytes(rng, base.encode())
        path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
        try:
            config, params = load_network(str(path), cfg.Config())
        except UserError as error:
            _one_line(error)
            _count("network files", False)
            continue
        assert params.size == plan_for(config).param_count and np.all(np.isfinite(params))
        _count("network files", True)
    _assert_both_ways("network files", valid=40, refused=450)


def _check_run(result: subprocess.CompletedProcess, argv: list[str], out: Path, files: list[Path]) -> bool:
    """Checks a run's outcome; True for a valid run, False for a refusal."""
    text = result.stdout + result.stderr
    assert "Traceback" not in text, (argv, text[-2000:])
    leftovers = [p.name for p in out.parent.iterdir() if ".partial" in p.name]
    assert not leftovers, (argv, leftovers)
    if result.returncode == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, result.stderr)
        assert not out.exists() and not any(f.exists() for f in files), (argv, "written on error")
        return False
    assert result.returncode in (0, 3), (argv, result.returncode, text[-2000:])  # 3: diverged, files written
    for name in ("summary.json", "loss.csv", "network.json", "heatmaps.png"):
        assert (out / name).is_file(), (argv, name)
    json.loads((out / "summary.json").read_text())
    assert all(f.is_file() for f in files), (argv, files)
    return True


def test_whole_program(inputs, tmp_path):
    rng, cases = random.Random(1005), 24  # 7 valid, 17 refused today
    env = dict(os.environ, XDG_CACHE_HOME=str(inputs.folder / "cache"))  # warm shader caches across cases
    for k in range(cases):
        out, files = tmp_path / f"run{k}", []
        argv = ["--headless", "--quiet", "--out", str(out)] + command_line(rng, inputs, subprocess_safe=True)
        for option, name in (("--save-checkpoint", f"c{k}.ckpt"), ("--export-slang", f"e{k}.slang")):
            if rng.random() < 0.3:
                argv += [option, str(tmp_path / name)]
                files.append(tmp_path / name)
        try:
            result = subprocess.run(
                [sys.executable, "-m", "app", *argv], cwd=ROOT, capture_output=True, text=True, timeout=90, env=env
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{argv!r} hung") from None
        _count("whole program (subprocess)", _check_run(result, argv, out, files))
    _assert_both_ways("whole program (subprocess)", valid=3, refused=8)
