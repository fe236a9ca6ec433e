"""The space a network learns over: functions of (x, y), or with --dims 3 of (x, y, z), z spanning
z_range. In 3D the truth is formulas of x, y and z, encoded raw, as poly2, as Fourier features or by a grid;
the rest is refused in one line that names --dims."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..model.derivative_loss import derivatives_on
from ..model.encodings import ENCODINGS_3D
from ..model.losses import LossSettings
from .mesh_truth import is_mesh_spec
from .settings import TruthSettings
from .targets import parse_target


def check_space(truth: TruthSettings, encoding: str, loss: LossSettings) -> None:
    """A UserError where the config's truth, encoding or loss does not take its dimensions: in 2D a
    target that names z, in 3D what is 2D by nature (an image, a shape, a dataset) or not yet 3D."""
    for target in truth.targets:
        parse_target(target, truth.dims)
    if truth.dims == 2:
        if is_mesh_spec(truth.sdf) and not (truth.dataset or truth.image):
            raise UserError(f"--sdf {Path(truth.sdf).name!r} is a mesh, a shape in 3D: use --dims 3")
        return
    for name, on in (
        ("a dataset", truth.dataset),
        ("an image", truth.image),
        ("a 2D shape (--sdf)", truth.sdf and not is_mesh_spec(truth.sdf)),
    ):
        if on:
            raise UserError(
                f"--dims 3 learns functions of x, y and z (formulas or a Slang file), not {name}: use --dims 2"
            )
    if encoding not in ENCODINGS_3D:
        raise UserError(f"--dims 3 takes the {', '.join(ENCODINGS_3D)} encodings, not {encoding}")
    if ENCODINGS_3D[encoding].trained and derivatives_on(loss):  # a grid's derivative terms are 2D
        raise UserError(
            f"--dims 3 trains a {encoding} on the squared error alone: set --grad-weight, --eikonal and --normal-weight to 0"
        )
    if loss.normal_weight > 0:  # it needs a shape's boundary points, which 3D has none of
        raise UserError("--dims 3 has no shape to align normals with: set --normal-weight to 0")


def depth_range(truth: TruthSettings):
    """z's range for a function of (x, y, z), None for one of (x, y)."""
    return list(truth.z_range) if truth.dims == 3 else None
