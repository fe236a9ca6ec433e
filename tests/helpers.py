"""Reading what the GPU computed without debug kernels: one SGD step with lr = 1 and no
momentum moves the parameters by exactly minus the gradient."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np


def _sgd_probe_step(trainer, step: int, lr: float) -> tuple[float, np.ndarray]:
    """Runs one plain-SGD step on `step`'s batch and puts everything back (parameters,
    optimizer state, step counters, config). Returns the loss and the parameters after."""
    saved_config, snapshot = trainer.config, trainer.snapshot()
    trainer.apply(saved_config.replace(optimizer="sgd", lr=lr, beta1=0.0))
    trainer.step = step
    loss = float(trainer.train(1)[0])
    after = trainer.parameters()
    trainer.apply(saved_config)
    trainer.restore(snapshot)
    return loss, after


def gpu_loss_and_gradient(trainer, step: int = 0):
    """Loss and mean-loss gradient the kernels compute for the batch of `step`, at the current
    parameters; the trainer is left as it was."""
    params = trainer.parameters()
    loss, after = _sgd_probe_step(trainer, step, 1.0)
    return loss, params.astype(np.float64) - after.astype(np.float64)


def gpu_loss(trainer, params: np.ndarray, step: int = 0) -> float:
    """The training loss of `step`'s batch at `params`, as the GPU computes it."""
    saved = trainer.snapshot()
    trainer.set_parameters(params)
    loss, _ = _sgd_probe_step(trainer, step, 1e-30)
    trainer.restore(saved)
    return loss


def exported_network(trainer) -> dict:
    """network.json of the trainer's network as it computes: half precision's weights rounded."""
    from app.files.network_io import export_network

    params = trainer.parameters()
    if trainer.config.precision == "half":
        params = params.astype(np.float16).astype(np.float32)
    return export_network(trainer.plan, trainer.config, params)


ROOT = Path(__file__).resolve().parent.parent


def run_headless(tmp_path: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """`python -m app --headless --quiet ARGS` from the checkout, with a cache folder of its own
    under `tmp_path` (no saved settings or autosave of the user's), its output captured."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "app", "--headless", "--quiet", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
