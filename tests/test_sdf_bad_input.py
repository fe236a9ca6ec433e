"""Bad shapes at the command line (--sdf): one line naming the problem, exit code 2, no traceback,
nothing written to --out (test_bad_input.py's checks)."""

import numpy as np
import pytest
import slangpy as spy
from test_bad_input import _assert_rejected, _run


def _files(folder):
    """The bad shape files, by case name."""
    (folder / "no-path.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"></svg>\n')
    spy.Bitmap(np.full((16, 16), 255, np.uint8)).write(str(folder / "white.png"))
    (folder / "empty.csv").write_text("")
    (folder / "no-normals.csv").write_text("x,y\n0.5,0\n0,0.5\n-0.5,0\n0,-0.5\n")
    (folder / "outside.csv").write_text("x,y,nx,ny\n5,5,1,0\n6,5,0,1\n5,6,-1,0\n")
    u, v = np.meshgrid(np.arange(32), np.arange(32))
    disc = np.where(np.hypot(u - 15.5, v - 15.5) < 10, 0, 255).astype(np.uint8)
    spy.Bitmap(disc).write(str(folder / "disc.png"))


CASES = {
    "svg without a path": (["--sdf", "{dir}/no-path.svg"], ["no-path.svg", "no filled path or shape"]),
    "all-white silhouette": (["--sdf", "{dir}/white.png"], ["white.png", "all light"]),
    "empty points file": (["--sdf", "{dir}/empty.csv"], ["empty.csv", "0 points"]),
    "points without normals": (["--sdf", "{dir}/no-normals.csv"], ["no-normals.csv", "normal columns"]),
    "points all outside the domain": (["--sdf", "{dir}/outside.csv"], ["outside.csv", "entirely outside the domain"]),
    "missing file": (["--sdf", "{dir}/missing.svg"], ["no file", "missing.svg"]),
    "unknown built-in": (["--sdf", "hexagon"], ["no built-in shape 'hexagon'", "circle"]),
    "shape and dataset": (["--sdf", "circle", "--dataset", "spiral"], ["one ground truth at a time", "--sdf"]),
    "Sobolev on a dataset": (["--grad-weight", "1", "--dataset", "spiral"], ["--grad-weight", "no gradient"]),
    "normals without a shape": (["--normal-weight", "1"], ["--normal-weight", "needs an --sdf shape"]),
    "normals of a silhouette": (
        ["--sdf", "{dir}/disc.png", "--normal-weight", "1"],
        ["--normal-weight", "shape with normals", "'disc.png' has none"],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_bad_shape(gpu, tmp_path, name):
    args, words = CASES[name]
    _files(tmp_path)
    _assert_rejected(*_run(gpu, [arg.format(dir=tmp_path) for arg in args], tmp_path), words)
