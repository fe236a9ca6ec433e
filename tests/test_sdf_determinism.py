"""An eikonal distance field trains bit for bit again: two runs of the same seed write the same
network.json bytes and grid tables (headless runs in this process, helpers.run_app), on the shape
preset's hash grid (--sdf alone) and on a softplus network of its own."""

import pytest
from helpers import run_headless_here


@pytest.mark.parametrize(
    "network",
    [[], ["--encoding", "poly2", "--eikonal", "0.1", "--hidden", "16"]],
    ids=["shape-preset", "poly2-softplus"],
)
def test_eikonal_circle_runs_are_byte_identical(gpu, tmp_path, network):
    written = []
    for run in ("first", "second"):
        out = tmp_path / run
        result = run_headless_here(
            gpu, tmp_path, "--sdf", "circle", *network, "--batch-size", "512", "--iterations", "200", "--seed", "3",
            "--out", str(out),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        tables = sorted(out.glob("*.npy"))
        written.append([(out / "network.json").read_bytes(), *(path.read_bytes() for path in tables)])
    assert written[0] == written[1]
    assert b'"weights"' in written[0][0]
    assert len(written[0]) == (2 if not network else 1), "the preset's grid tables are compared too"
