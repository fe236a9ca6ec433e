"""Training on derivatives: the loss terms on the network's input gradient (Sobolev, eikonal, normal
alignment) and which runs may take them: the per-thread paths and the fused trainer, with any
encoding, but no dataset (its points have no gradient between them). What each term is:
docs/guide/shapes.md, 'Training on derivatives'; how the kernel differentiates it: 'How the kernel
differentiates a derivative' there."""

from __future__ import annotations

from ..errors import UserError
from .activations import ACTIVATIONS
from .losses import LossSettings

# With the normal alignment term, every NORMAL_EVERY-th sample of a step is a boundary point: a
# quarter of the batch fits the boundary's normals, the rest the value and the other terms over
# the domain.
NORMAL_EVERY = 4
SMOOTH_ACTIVATIONS = ("softplus", "silu", "sin", "tanh")  # what the hint of a piecewise-linear one offers
DERIVATIVE_TERMS = ("grad_weight", "eikonal", "normal_weight")  # the Config fields that weight them


def derivatives_on(loss: LossSettings) -> bool:
    """Whether the loss has a derivative term: the compiled step differs where it does."""
    return any(getattr(loss, term) > 0 for term in DERIVATIVE_TERMS)


def check_derivative_loss(loss: LossSettings, dataset: dict | None) -> None:
    """A one-line UserError where a derivative term is asked of a run that cannot take it: one
    that learns a dataset's points."""
    if not derivatives_on(loss):
        return
    term = _term(loss)
    if dataset:
        raise UserError(
            f"{term} needs a truth with derivatives (targets, a Slang file or an image): "
            "a dataset's points have no gradient between them"
        )


def _term(loss: LossSettings) -> str:
    """The option of the loss's first derivative term."""
    return "--grad-weight" if loss.grad_weight > 0 else "--eikonal" if loss.eikonal > 0 else "--normal-weight"


def smooth_activation_hint(loss: LossSettings, activation: str) -> str | None:
    """A hint, not an error, where derivative terms train through a piecewise-linear activation:
    its second derivative is zero, so the network's gradient is piecewise constant and the terms
    never move the kinks (docs/guide/shapes.md, "Which activation"). None where the activation is smooth."""
    if not derivatives_on(loss) or not ACTIVATIONS[activation].piecewise_linear:
        return None
    return (
        f"{_term(loss)} fits the network's input gradient, which {activation} makes piecewise constant "
        f"(its second derivative is zero); a smooth activation fits it far better: --activation "
        f"{', '.join(SMOOTH_ACTIVATIONS[:-1])} or {SMOOTH_ACTIVATIONS[-1]}"
    )
