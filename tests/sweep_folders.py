"""Sweep folders written as `visual-trainer sweep --out DIR` writes them (docs/formats.md, "A
sweep's folder"), for the sweep viewer's tests: trials.csv, best.json and space.json written here
from rows given, each trial's run folder by a real headless run where a test needs one."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from helpers import run_headless_here

SPACE = {
    "base": {"hidden": [16], "iterations": 300},
    "search": {"lr": {"loguniform": [1e-4, 0.1]}, "hidden": {"choice": [[16], [32, 32]]}},
    "metric": "eval_loss",
    "trials": 8,
}


def trial_row(
    trial: int,
    state: str,
    metric: float | None,
    parameters: dict,
    seed: int = 0,
    error: str = "",
    steps: int = 300,
    wall_s: float = 1.5,
    gpu: str = "llvmpipe",
) -> dict:
    """One trial as trials.csv has it, with its parameters as values (written as JSON text)."""
    return dict(
        trial=f"{trial:04d}",
        state=state,
        metric=metric,
        steps=steps,
        wall_s=wall_s,
        gpu=gpu,
        seed=seed,
        parameters=parameters,
        error=error,
    )


def trials_csv(rows: list[dict], metric: str = "eval_loss") -> str:
    searched = list(rows[0]["parameters"])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["trial", "state", metric, "steps", "wall_s", "gpu", "seed", *searched, "error"])
    for row in rows:
        value = "" if row["metric"] is None else repr(row["metric"])
        figures = [row["steps"], row["wall_s"], row["gpu"], row["seed"]]
        writer.writerow(
            [
                row["trial"],
                row["state"],
                value,
                *figures,
                *(json.dumps(row["parameters"][f]) for f in searched),
                row["error"],
            ]
        )
    return out.getvalue()


def write_sweep(folder: Path, rows: list[dict], metric: str = "eval_loss", mode: str = "min", space=SPACE) -> Path:
    """trials.csv, best.json (the best complete trial by `mode`) and space.json in `folder`;
    trials/<id>/ folders already there are kept."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trials.csv").write_text(trials_csv(rows, metric))
    complete = [row for row in rows if row["state"] == "complete" and row["metric"] is not None]
    best = (min if mode == "min" else max)(complete, key=lambda row: row["metric"])
    summary = folder / "trials" / best["trial"] / "summary.json"
    # the whole config where the trial ran; else what the rows know of it
    config = (
        json.loads(summary.read_text())["config"] if summary.is_file() else {**best["parameters"], "seed": best["seed"]}
    )
    best_json = dict(
        trial=best["trial"],
        metric=metric,
        mode=mode,
        value=best["metric"],
        iterations=best["steps"],
        seed=best["seed"],
        config=config,
    )
    (folder / "best.json").write_text(json.dumps(best_json, indent=2))
    if space is not None:
        (folder / "space.json").write_text(json.dumps(space, indent=2))
    (folder / "study.journal").write_text("")  # Optuna's: the viewer does not read it
    return folder


def run_trial(gpu, tmp_path: Path, folder: Path, trial: int, *options: str) -> dict:
    """A real headless run (in this process, on the session's `gpu`) into folder/trials/<trial>/;
    returns its summary.json."""
    out = folder / "trials" / f"{trial:04d}"
    run = run_headless_here(gpu, tmp_path, *options, "--out", str(out))
    assert run.returncode == 0, run.stderr
    return json.loads((out / "summary.json").read_text())


def screenshot_rows() -> list[dict]:
    """Eight trials of the guide's example space (docs/guide/sweeps.md): five complete, two pruned, one failed."""
    return [
        trial_row(0, "complete", 0.0213, {"lr": 0.00031, "hidden": [16]}, seed=0),
        trial_row(1, "complete", 0.0041, {"lr": 0.0072, "hidden": [32, 32]}, seed=1),
        trial_row(
            2, "pruned", 0.094, {"lr": 0.00012, "hidden": [16]}, seed=2, steps=100, error="below the median at step 100"
        ),
        trial_row(3, "complete", 0.0012, {"lr": 0.0035, "hidden": [32, 32]}, seed=3),
        trial_row(
            4,
            "failed",
            None,
            {"lr": 0.089, "hidden": [32, 32]},
            seed=4,
            steps=0,
            error="UserError: cannot write --out: No space left on device",
        ),
        trial_row(5, "complete", 0.0068, {"lr": 0.0019, "hidden": [16]}, seed=5),
        trial_row(6, "pruned", 0.51, {"lr": 0.085, "hidden": [16]}, seed=6, steps=212, error="diverged at step 212"),
        trial_row(7, "complete", 0.0029, {"lr": 0.012, "hidden": [16]}, seed=7),
    ]
