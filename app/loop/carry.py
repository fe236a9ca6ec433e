"""Weights carried into a rebuilt network whose outputs differ (one added or removed): a grid's
tables and every hidden layer are copied, and each last-layer row comes from the old output it continues or stays fresh.
Only within one problem (problem_of): another problem's weights and steps mean nothing, so it
starts a fresh network at step 0. carry_trainer puts the weights, step and samples seen in."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..kernels.plan import NetworkPlan

if TYPE_CHECKING:
    from ..train.trainer import Trainer


def problem_of(plan: NetworkPlan) -> tuple:
    """What a network is asked: targets (expressions or a Slang file, whose edits keep the
    weights, outputs added or removed included), an image, or a dataset's problem: its loss and
    output count (two classes, three classes, two value columns...)."""
    if plan.truth_kind == "points":
        return plan.truth_kind, plan.loss_name, plan.output_dim
    return plan.truth_kind, plan.loss_name


def problem_name(plan: NetworkPlan) -> str:
    """problem_of as the text a run keeps (and a checkpoint saves): "points/squared/2"."""
    return "/".join(map(str, problem_of(plan)))


def default_rows(old_outputs: int, new_outputs: int) -> list[int | None]:
    """Output j continues old output j where there is one: an output added at the end is new."""
    return [j if j < old_outputs else None for j in range(new_outputs)]


def carry_weights(
    old: NetworkPlan, old_params: np.ndarray, new: NetworkPlan, fresh: np.ndarray, rows: list[int | None]
) -> np.ndarray:
    """`fresh` (the new network's initial parameters) with `old_params` carried over: a grid
    encoding's tables and the hidden layers whole, and output row j from old output rows[j] (None:
    kept fresh)."""
    if old.sizes[:-1] != new.sizes[:-1] or old.grid != new.grid or len(rows) != new.output_dim:
        raise ValueError("only the output count may differ when weights are carried")
    params = fresh.copy()
    params[new.mlp_param_count :] = old_params[old.mlp_param_count :]  # a grid's tables, whole
    for old_layer, new_layer in zip(old.layers[:-1], new.layers[:-1]):
        params[new_layer.offset : new_layer.end] = old_params[old_layer.offset : old_layer.end]
    old_out, new_out = old.layers[-1], new.layers[-1]
    weights, biases = new_out.weights(params), new_out.biases(params)
    for j, source in enumerate(rows):
        if source is not None:
            weights[j] = old_out.weights(old_params)[source]
            biases[j] = old_out.biases(old_params)[source]
    return params


def carry_trainer(old: Trainer, new: Trainer, rows: list[int | None]) -> None:
    """A rebuilt network goes on from `old`'s weights (carry_weights), step and samples seen, with
    a fresh optimizer."""
    params = carry_weights(old.plan, old.parameters(), new.plan, new.parameters(), rows)
    new.load(params, None, np.zeros(0, np.float32), old.step, 0, old.samples_seen)
