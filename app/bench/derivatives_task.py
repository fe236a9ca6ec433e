"""The derivatives benchmark's task, shared by the app's rows and PyTorch's (torch_derivatives.py): a
2 -> 64 -> 64 -> 64 -> 1 softplus MLP on the raw point (x, y), trained on a loss of its input gradient,
sobolev (against sin(3x) cos(2y), SOBOLEV_WEIGHT) or eikonal (a circle of CIRCLE_RADIUS,
EIKONAL_WEIGHT), on fresh uniform samples over [-1, 1]^2 every step."""

from __future__ import annotations

HIDDEN = [64, 64, 64]
SIZES = [2, *HIDDEN, 1]
TARGET = "sin(3*x)*cos(2*y)"
CIRCLE_RADIUS = 0.5  # the app's --sdf circle
SOBOLEV_WEIGHT = 1.0
EIKONAL_WEIGHT = 0.1
LOSSES = ("sobolev", "eikonal")
WEIGHTS = {"sobolev": SOBOLEV_WEIGHT, "eikonal": EIKONAL_WEIGHT}

_LOSS_FIELDS = {
    "sobolev": dict(grad_weight=SOBOLEV_WEIGHT),
    "eikonal": dict(sdf="circle", eikonal=EIKONAL_WEIGHT),
}


def app_fields(loss: str) -> dict:
    """The app's Config fields for one of LOSSES (precision and batch are the row's): the same
    network for both, raw (x, y) in and one output (the one target, or the distance)."""
    network = dict(encoding="raw", hidden=list(HIDDEN), activation="softplus", targets=[TARGET])
    return {**network, **_LOSS_FIELDS[loss]}
