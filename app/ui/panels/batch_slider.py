"""The Training panel's batch-size slider: powers of two, a dataset's ending at its whole
training set."""

from __future__ import annotations

import math

from imgui_bundle import imgui

BATCH_SIZES = [2**k for k in range(4, 21)]
# A dataset's batches go down to one point, as the Playground's do (the whole set at most)
POINT_BATCH_SIZES = [2**k for k in range(0, 21)]


def batch_slider(batch_size: int, trainer):
    """The batch-size slider runs over powers of two (from 1 for a dataset's points, as the
    Playground's) and gives the size. A dataset's ends at the first that holds its training set,
    where the slider says it trains on the whole set: any larger batch is that set too, and at
    the slider's end the grab is clear of its text (halfway along, it covered it)."""
    sizes, whole = BATCH_SIZES, False
    if trainer.data is not None:
        count = trainer.data.train_count
        top = next((k for k, size in enumerate(POINT_BATCH_SIZES) if size >= count), len(POINT_BATCH_SIZES) - 1)
        sizes, whole = POINT_BATCH_SIZES[: top + 1], batch_size >= count
    index = min(range(len(sizes)), key=lambda k: abs(math.log2(sizes[k] / batch_size)))
    shown = f"the whole set, {trainer.batch_size:,}" if whole else f"{batch_size:,}"

    def draw(flags: int) -> tuple[bool, int]:
        changed, k = imgui.slider_int("batch size", len(sizes) - 1 if whole else index, 0, len(sizes) - 1, shown, flags)
        return changed, sizes[k]

    return draw
