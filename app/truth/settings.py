"""The truth section of a Config: which ground truth a network learns (the target formulas, or
instead a Slang file, a dataset, an image or a shape), the domain it spans and the evaluation
grid it is judged on; and what that makes of the network's outputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..datasets.source import problem_of
from .image_truth import CHANNEL_NAMES


@dataclass(frozen=True)
class TruthSettings:
    targets: Sequence[str]  # kept when another truth replaces them, for going back
    slang_target: dict | None
    dataset: dict | None
    image: dict | None
    sdf: str | None
    domain: Sequence[float]  # x0, x1, y0, y1
    eval_grid: int
    dims: int  # 2: functions of (x, y); 3: of (x, y, z), z in z_range (app/truth/space.py)
    z_range: Sequence[float]

    @property
    def outputs(self) -> int:
        """The network's outputs: one a target, a channel, a class (two classes share one)."""
        if self.dataset:
            return problem_of(self.dataset).outputs
        if self.image:
            return self.image["channels"]
        if self.sdf:
            return 1
        return self.slang_target["count"] if self.slang_target else len(self.targets)

    def labels(self) -> list[str]:
        """What each output learns, as the UI and reports name it."""
        if self.dataset:
            return problem_of(self.dataset).output_labels()
        if self.image:
            return [f"{name} of {Path(self.image['file']).name}" for name in CHANNEL_NAMES[self.image["channels"]]]
        if self.sdf:
            return [f"signed distance to {Path(self.sdf).name}"]
        if self.slang_target:
            return [f"target(p, {k})" for k in range(self.slang_target["count"])]
        return list(self.targets)
