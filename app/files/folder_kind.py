"""Which kind of output folder a path is, told by the files each kind writes there
(docs/formats.md): a headless run's, a race's or a sweep's. A run or a race writes only into a
folder of its own kind, never over another's files (app/entry/cli_checks.py)."""

from __future__ import annotations

from pathlib import Path

RUN, RACE, SWEEP = "run", "race", "sweep"
# Each kind's own files: a sweep's (app/sweep/), a race's (app/entry/race_run.py), a run's
# (app/run/output.py; a race writes summary.json too, so its race.csv tells them apart).
SWEEP_FILES = ("space.json", "study.journal", "trials.csv")
RACE_FILES = ("race.csv", "racers")
RUN_FILES = ("network.json", "loss.csv", "summary.json")
KIND_NAMES = {RUN: "a headless run", RACE: "a race", SWEEP: "a sweep"}


def folder_kind(path: str | Path) -> str | None:
    """RUN, RACE or SWEEP for a folder holding that kind's files; None for anything else (a
    folder of other files, an empty or missing one, a file)."""
    folder = Path(path)
    if not folder.is_dir():
        return None
    for kind, names in ((SWEEP, SWEEP_FILES), (RACE, RACE_FILES), (RUN, RUN_FILES)):
        if any((folder / name).exists() for name in names):
            return kind
    return None


def is_sweep_folder(path: str | Path) -> bool:
    return folder_kind(path) == SWEEP
