"""An eikonal distance field trains bit for bit again: two runs of the same seed write the same
network.json bytes (headless runs in this process, helpers.run_app)."""

from helpers import run_headless_here


def test_eikonal_circle_runs_are_byte_identical(gpu, tmp_path):
    written = []
    for run in ("first", "second"):
        out = tmp_path / run
        args = ["--sdf", "circle", "--eikonal", "0.1", "--hidden", "16", "--activation", "softplus"]
        result = run_headless_here(
            gpu, tmp_path, *args, "--batch-size", "512", "--iterations", "200", "--seed", "3", "--out", str(out)
        )
        assert result.returncode == 0, result.stderr
        written.append((out / "network.json").read_bytes())
    assert written[0] == written[1]
    assert b'"weights"' in written[0]
