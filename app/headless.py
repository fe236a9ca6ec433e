"""The fixed-iteration runner: the app without a window. Trains exactly N steps and writes
summary.json, loss.csv, network.json and heatmaps.png into the output folder."""

from __future__ import annotations

import csv
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from app.config import Config
from app.device import describe
from app.heatmaps import HeatmapImages
from app.network_io import export_network
from app.trainer import LOSS_HISTORY, Trainer

EXIT_DIVERGED = 3
CHUNK_STEPS = 250  # steps per submit: enough to hide launch cost, small enough for a live bar


@dataclass
class RunResult:
    steps: int
    train_loss: float
    eval_loss: float
    wall_seconds: float
    diverged_at: int | None = None
    rows: list[tuple[int, float, float | None]] = field(default_factory=list)


def _train(trainer: Trainer, iterations: int, eval_every: int, quiet: bool) -> RunResult:
    """Trains in chunks, evaluating every `eval_every` steps. On a non-finite loss it rolls
    back to the last network whose loss was finite and stops."""
    rows: list[tuple[int, float, float | None]] = []
    start = time.perf_counter()
    bar = tqdm(total=iterations, unit="step", disable=quiet or None, file=sys.stderr, dynamic_ncols=True)
    train_loss, diverged_at = math.nan, None
    previous = None
    while trainer.step < iterations:
        chunk = min(CHUNK_STEPS, LOSS_HISTORY, iterations - trainer.step,
                    eval_every - trainer.step % eval_every)
        before = trainer.snapshot()
        losses = trainer.train(chunk)
        bad = np.flatnonzero(~np.isfinite(losses))
        if bad.size:
            # Loss of step s is measured with the network after s - 1 updates, so the last
            # network with a finite loss is one update before the first bad step.
            diverged_at = before.step + int(bad[0])
            last_good = diverged_at - 1
            origin = before if last_good >= before.step or previous is None else previous
            trainer.restore(origin)
            if last_good > origin.step:
                trainer.train(last_good - origin.step)  # training is deterministic: replay
            losses = losses[: bad[0]]
        previous = before
        for offset, loss in enumerate(losses):
            rows.append((before.step + offset + 1, float(loss), None))
        if losses.size:
            train_loss = float(losses[-1])
        bar.update(len(losses))
        if diverged_at is not None:
            break
        if trainer.step % eval_every == 0 or trainer.step == iterations:
            eval_loss = trainer.evaluate().loss
            rows[-1] = (rows[-1][0], rows[-1][1], eval_loss)
            message = f"step {trainer.step:>7}  train loss {train_loss:.6g}  eval loss {eval_loss:.6g}"
            bar.write(message, file=sys.stderr) if not quiet else None
    bar.close()
    wall = time.perf_counter() - start
    final_eval = trainer.evaluate().loss
    return RunResult(trainer.step, train_loss, final_eval, wall, diverged_at, rows)


def run_headless(trainer: Trainer, iterations: int, out_dir: Path, eval_every: int = 100,
                 quiet: bool = False) -> int:
    """Returns the process exit code: 0, or EXIT_DIVERGED."""
    config = trainer.config
    result = _train(trainer, iterations, max(1, eval_every), quiet)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_outputs(trainer, config, result, out_dir)
    if result.diverged_at is not None:
        print(f"error: loss became non-finite at step {result.diverged_at + 1}; "
              f"network.json holds the last finite network (step {result.steps})", file=sys.stderr)
        return EXIT_DIVERGED
    print(f"done: {result.steps} steps in {result.wall_seconds:.2f} s, train loss {result.train_loss:.6g}, "
          f"eval loss {result.eval_loss:.6g} -> {out_dir}")
    return 0


def _write_outputs(trainer: Trainer, config: Config, result: RunResult, out_dir: Path) -> None:
    samples = result.steps * config.batch_size
    summary = {
        "steps": result.steps,
        "train_loss": result.train_loss if math.isfinite(result.train_loss) else None,
        "eval_loss": result.eval_loss,
        "eval_grid": config.eval_grid,
        "wall_seconds": result.wall_seconds,
        "samples_per_second": samples / result.wall_seconds if result.wall_seconds > 0 else None,
        "device": describe(trainer.device),
        "diverged_at_step": None if result.diverged_at is None else result.diverged_at + 1,
        "config": config.to_dict(),
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    with open(out_dir / "loss.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["step", "train_loss", "eval_loss"])
        for step, train, evaluation in result.rows:
            writer.writerow([step, repr(train), "" if evaluation is None else repr(evaluation)])
    network = export_network(config, trainer.parameters())
    (out_dir / "network.json").write_text(json.dumps(network) + "\n")
    from app.ui.report import write_heatmaps_png  # imgui only when a picture is wanted

    title = f"Slang Visual Trainer - {result.steps} steps, {' -> '.join(map(str, config.layer_sizes))}, " \
            f"{config.activation}, {config.precision}"
    x0, x1, y0, y1 = config.domain
    subtitle = f"eval loss {result.eval_loss:.4g} on a {config.eval_grid}x{config.eval_grid} grid; x in [{x0:g}, {x1:g}] " \
               f"left to right, y in [{y0:g}, {y1:g}] bottom to top\n" \
               f"truth and learned share each row's value scale; |error| has its own"
    write_heatmaps_png(HeatmapImages(trainer, config.eval_grid), title, subtitle, str(out_dir / "heatmaps.png"))
