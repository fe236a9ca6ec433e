"""Bad input: one line naming the problem, exit code 2, no traceback, nothing written. The app runs
in this process (helpers.run_app): what is checked is what it says, not how a process starts."""

import json

import pytest
from helpers import run_app


def _run(gpu, args, tmp_path, out=None, env=None, headless=True):
    """The app's run of `args` in this process (helpers.run_app: the exit code and what it
    printed, as its process would have them), and the --out folder it was given."""
    out = out or tmp_path / "out"
    mode = ["--headless", "--iterations", "5", "--quiet", "--out", str(out)] if headless else []
    return run_app(gpu, tmp_path, *mode, *args, env=env), out


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
    "empty width in --hidden": (["--hidden", "8,,8"], ["--hidden", "8,,8"]),
    "trailing comma in --hidden": (["--hidden", "16,"], ["--hidden", "16,"]),
    "empty --preset": (["--preset", ""], ["--preset", "empty"]),
    "empty --config": (["--config", ""], ["--config", "empty"]),
    "empty --screenshot": (["--screenshot", ""], ["--screenshot", "empty"]),
    "screenshot not a png": (["--screenshot", "shot.jpg"], ["--screenshot", ".png"]),
    "screenshot is a folder": (["--screenshot", "/tmp"], ["--screenshot"]),
    "screenshot in a missing root": (["--screenshot", "/proc/none/a.png"], ["--screenshot"]),
    "zero window width": (["--width", "0"], ["--width", "0"]),
    "huge height": (["--height", "100000"], ["--height", "100000"]),
    "zero eval-every": (["--eval-every", "0"], ["--eval-every"]),
    "negative seed": (["--seed", "-1"], ["seed"]),
    "tiny lr underflows to 0": (["--lr", "1e-400"], ["learning rate"]),
    "unknown name in a target": (["--target", "x + z"], ["target 'x + z' at column 5", "unknown name 'z'"]),
    "target that never closes": (["--target", "sin(x"], ["column 4", "never closed"]),
    "__import__ as a target": (["--target", "__import__('os').system('ls')"], ["column 1", "an attribute"]),
    "Slang injection as a target": (["--target", "x; } void f() {"], ["column 4", "unmatched '}'"]),
    "300-deep parentheses": (["--target", "(" * 300 + "x"], ["column 41", "nested more than 40"]),
    "10,000-character target": (["--target", "x+" * 5000], ["at most 500 characters"]),
    "nine targets": (["--target", "x"] * 9, ["targets must list 1 to 8"]),
    "empty target": (["--target", ""], ["--target", "empty"]),
    "target and target file": (["--target", "x", "--target-file", "t.slang"], ["--target or --target-file"]),
    "missing target file": (["--target-file", "/nonexistent/t.slang"], ["cannot read target file"]),
    "beta1 of 1": (["--beta1", "1"], ["beta1 must be in [0, 1)"]),
    "text epsilon": (["--epsilon", "tiny"], ["--epsilon"]),
}


@pytest.mark.parametrize("name", CASES)
def test_bad_option(gpu, tmp_path, name):
    args, words = CASES[name]
    _assert_rejected(*_run(gpu, args, tmp_path), words)


def test_missing_config(gpu, tmp_path):
    _assert_rejected(*_run(gpu, ["--config", str(tmp_path / "missing.json")], tmp_path), ["missing.json"])


def test_unreadable_config(gpu, tmp_path):
    folder = tmp_path / "a-folder.json"
    folder.mkdir()  # reading a folder fails even for root, unlike chmod 000
    _assert_rejected(*_run(gpu, ["--config", str(folder)], tmp_path), ["cannot read"])


@pytest.mark.parametrize(
    "text,words",
    [
        ("{not json", ["not valid JSON"]),
        ("[1, 2]", ["JSON object"]),
        ('{"lr": -1}', ["learning rate"]),
        ('{"hidden": [300]}', ["width", "300"]),
        ('{"colour": "blue"}', ["unknown key", "colour"]),
        ('{"targets": ["x + z"]}', ["unknown name", "z"]),
        ('{"targets": ["__import__(\'os\')"]}', ["unknown function"]),
        ('{"domain": [1, 0, 0, 1]}', ["domain"]),
    ],
)
def test_invalid_config(gpu, tmp_path, text, words):
    path = tmp_path / "config.json"
    path.write_text(text)
    _assert_rejected(*_run(gpu, ["--config", str(path)], tmp_path), words)


def test_unwritable_out(gpu, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    _assert_rejected(*_run(gpu, [], tmp_path, out=blocker / "run"), ["--out"])


def test_empty_out(gpu, tmp_path):
    result, _ = _run(gpu, ["--headless", "--out", ""], tmp_path, headless=False)
    _assert_rejected(result, tmp_path / "none", ["--out", "empty"])


def test_bogus_device_override(gpu, tmp_path):
    _assert_rejected(
        *_run(gpu, [], tmp_path, env={"SLANGPY_DEVICE_TYPE_OVERRIDE": "bogus"}),
        ["SLANGPY_DEVICE_TYPE_OVERRIDE", "bogus"],
    )


def test_window_without_display_points_to_headless(gpu, tmp_path, monkeypatch):
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    result, _ = _run(gpu, ["--fresh"], tmp_path, headless=False)
    _assert_rejected(result, tmp_path / "none", ["display", "--headless"])


@pytest.mark.parametrize(
    "content,words",
    [
        (b"\xff\xfe{}", ["not UTF-8"]),
        (b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", ["nested too deeply"]),
        (json.dumps({"targets": ["x" + "+x" * 300]}).encode(), ["at most 500 characters"]),
        (json.dumps({"targets": ["-" * 100 + "x"]}).encode(), ["nested more than"]),
        (json.dumps({"targets": ["x\u0000"]}).encode(), ["NUL character"]),
        (json.dumps({"hidden": [[[[16]]]]}).encode(), ["whole number"]),
    ],
    # Short ids: the generated one would hold 200 KB of brackets.
    ids=["not-utf8", "deep-nesting", "long-target", "deep-target", "nul", "nested-hidden"],
)
def test_malformed_config_file(gpu, tmp_path, content, words):
    path = tmp_path / "config.json"
    path.write_bytes(content)
    _assert_rejected(*_run(gpu, ["--config", str(path)], tmp_path), words)


@pytest.mark.parametrize(
    "target,domain,words",
    [
        ("1/0", [-1, 1, -1, 1], ["f2", "1/0", "inf"]),
        ("log(-1)", [-1, 1, -1, 1], ["log(-1)", "nan"]),
        ("sqrt(x)", [-1, 1, -1, 1], ["sqrt(x)", "nan", "x = -"]),
        ("x*x", [-1e30, 1e30, -1, 1], ["x*x", "inf"]),  # finite in float64, not in the GPU's float32
    ],
)
def test_non_finite_ground_truth_is_bad_input_not_divergence(gpu, tmp_path, target, domain, words):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"targets": ["x", target], "domain": domain}))
    _assert_rejected(*_run(gpu, ["--config", str(path)], tmp_path), words)


def test_help_describes_every_option_with_its_default(gpu, tmp_path):
    result, _ = _run(gpu, ["--help"], tmp_path, headless=False)
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    for option in (
        "--iterations",
        "--out",
        "--eval-every",
        "--screenshot",
        "--quiet",
        "--device",
        "--config",
        "--preset",
        "--hidden",
        "--activation",
        "--output-activation",
        "--encoding",
        "--frequencies",
        "--precision",
        "--optimizer",
        "--lr",
        "--batch-size",
        "--seed",
        "--eval-grid",
        "--width",
        "--height",
        "--no-vsync",
        "--fresh",
    ):
        assert option in text, option
    for default in (
        "(default 1000)",
        "(default 100)",
        "(default 16)",
        "(default leaky_relu)",
        "(default 0.01)",
        "(default 4096)",
        "(default adam)",
        "(default 1280)",
        "(default 64)",
    ):
        assert default in text, default
