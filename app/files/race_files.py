"""What a headless race leaves in --out besides each racer's own run files
(racers/<name>/, as a headless run writes them): race.csv, one row at each evaluation with
every racer's figures, and summary.json, the race's result."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from ..loop.race import Race, Racer
from ..views.point_metrics import finite_or_none


@dataclass
class RaceTable:
    """race.csv's rows, taken as the race goes: step, wall seconds since the start, then for
    each racer its training seconds so far, train loss and the race's metric (eval_loss,
    test_loss or psnr; empty for a racer stopped by a divergence)."""

    names: list[str]
    metric: str
    rows: list[list] = field(default_factory=list)

    def header(self) -> list[str]:
        columns = ["step", "wall_s"]
        for name in self.names:
            columns += [f"{name}:train_s", f"{name}:train_loss", f"{name}:{self.metric}"]
        return columns

    def take(self, race: Race, step: int, wall: float) -> None:
        row: list = [step, f"{wall:.4f}"]
        for name in self.names:
            racer = race.find(name)
            figures = (racer.train_seconds, racer.session.train_loss, racer.value_at(step=step))
            if racer.diverged_at is not None and racer.diverged_at <= step:
                figures = (racer.train_seconds, None, None)
            row += [_number(value) for value in figures]
        self.rows.append(row)

    def text(self) -> bytes:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.header())
        writer.writerows(self.rows)
        return out.getvalue().encode()


def _number(value) -> str:
    value = finite_or_none(value)
    return "" if value is None else f"{value:.6g}"


def racer_entry(racer: Racer, metric: str) -> dict:
    return {
        "name": racer.name,
        "variant": racer.variant.text,
        "steps": racer.step,
        "train_loss": finite_or_none(racer.session.train_loss),
        metric: finite_or_none(racer.value_at()),
        "train_seconds": racer.train_seconds,
        "ms_per_step": finite_or_none(racer.ms_per_step),
        "samples_per_second": finite_or_none(racer.samples_per_second),
        "diverged_at_step": racer.diverged_at,
        "folder": f"racers/{racer.name}",
        "config": racer.session.config.to_dict(),
    }


def race_summary(race: Race, iterations: int, wall: float, interrupted_at: int | None) -> dict:
    metric = race.metric.name
    by_steps, by_time = race.leader("steps"), race.leader("time")
    return {
        "race": {
            "mode": race.mode,
            "iterations": iterations,
            "metric": metric,
            "higher_is_better": race.metric.higher_is_better,
            "wall_seconds": wall,
            "interrupted_at_step": interrupted_at,
            "leader": {
                "equal_steps": by_steps.name if by_steps else None,
                "equal_time": by_time.name if by_time else None,
            },
        },
        "racers": [racer_entry(racer, metric) for racer in race.racers],
        "base_config": race.base.to_dict(),
    }
