"""Column names in other scripts (issue 42, item 5): a CSV's columns 高さ and 重さ were drawn as
"��" in the data view's titles, the diagram's output names, the loss legend and heatmaps.png, the
two alike. A system font that has the characters is merged into the UI's font (app/ui/fonts.py,
app/ui/font_search.py): the titles' pixels then differ, as the names do. Where no font has them
(the search pointed at an empty folder), each name carries its output's number instead.
The CJK font is scripts/setup.sh's fonts-wqy-microhei."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import slangpy as spy
from imgui_bundle import imgui

from app import datasets
from app.config.config import Config, validate
from app.config.truths import with_dataset
from app.loop.session import Session
from app.ui import data_images
from app.ui.font_search import FOLDERS_VARIABLE, Face, faces_for
from app.ui.offscreen import OffscreenApp
from app.ui.report import write_run_heatmaps

NAMES = ("高さ", "重さ")
FALLBACK = ("output 1 (??)", "output 2 (??)")


@pytest.fixture
def session(gpu, tmp_path):
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-1, 1, (2, 120))
    path = tmp_path / "weights.csv"
    rows = "".join(f"{a:.4f},{b:.4f},{a * b:.4f},{a - b:.4f}\n" for a, b in zip(x, y))
    path.write_text(f"x,y,{','.join(NAMES)}\n{rows}", encoding="utf-8")
    config = with_dataset(validate(Config(hidden=[8], batch_size=64)), datasets.entry_for(str(path)))
    session = Session(gpu, config, grid=32, heatmaps=True)
    for _ in range(2):
        session.advance(10)
        session.evaluate()
    return session


@pytest.fixture
def titles(monkeypatch):
    """The data view's titles as drawn, each its text's pixel rectangle, the latest last."""
    boxes = []
    draw = data_images._title

    def recording(name: str, side: float) -> None:
        draw(name, side)
        low, high = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        boxes.append((int(low.x), int(low.y), int(np.ceil(high.x)), int(np.ceil(high.y))))

    monkeypatch.setattr(data_images, "_title", recording)
    return boxes


def _crops(pixels: np.ndarray, boxes: list) -> list[np.ndarray]:
    """The two titles' pixels, cut to the narrower one's width."""
    width = min(x1 - x0 for x0, _, x1, _ in boxes)
    return [pixels[y0:y1, x0 : x0 + width].astype(np.int32) for x0, y0, _, y1 in boxes]


def _drawn_apart(pixels: np.ndarray, boxes: list) -> None:
    """Each title has ink, and the two differ: U+FFFD, the stand-in, is one glyph for all."""
    first, second = _crops(pixels, boxes)
    for crop in (first, second):
        background = np.median(crop.reshape(-1, 3), axis=0)
        assert np.sum(np.abs(crop - background).max(axis=2) > 100) >= 10, "the title is drawn"
    assert np.sum(np.abs(first - second).max(axis=2) > 100) >= 10, "the two titles are drawn apart"


def _window(session, titles) -> tuple[OffscreenApp, np.ndarray]:
    ui = OffscreenApp(session, 1280, 800)
    ui.app.running = False
    ui.frame(2, force=True)
    titles.clear()
    ui.frame(force=True)
    return ui, np.asarray(ui.target.to_bitmap().convert(spy.Bitmap.PixelFormat.rgb, spy.Bitmap.ComponentType.uint8))


def _names_in_the_window(ui) -> tuple[list[str], list[str], list[str]]:
    """The data view's titles, the diagram's output names and the columns' lines in the legend."""
    plan = ui.session.trainer.plan
    first = plan.neuron_offset(len(plan.sizes) - 1)
    diagram = [ui.app.diagram_labels[first + k][0] for k in range(2)]
    legend = [series.name for series in ui.app.loss_series if series.name.startswith("test: ")]
    return [scale.name for scale in ui.app.data_scales], diagram, legend


def test_a_system_font_is_found_for_cjk_and_none_in_an_empty_folder(tmp_path, monkeypatch):
    found = faces_for("高重さ")
    assert set(found) == set("高重さ"), "no font with CJK glyphs here: scripts/setup.sh installs fonts-wqy-microhei"
    face = found["高"]
    folder = tmp_path / "fonts"
    copy = folder / "deep" / Path(face.path).name
    copy.parent.mkdir(parents=True)
    copy.symlink_to(face.path)
    (folder / "broken.ttf").write_bytes(b"\x00\x01\x00\x00" + bytes(200))  # a font's signature, no font
    (folder / "short.ttc").write_bytes(b"ttcf")
    monkeypatch.setenv(FOLDERS_VARIABLE, str(folder))
    assert faces_for("高重さ") == dict.fromkeys("高重さ", Face(str(copy), face.index))
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(FOLDERS_VARIABLE, str(tmp_path / "empty"))
    assert faces_for("高重さ") == {}


def test_cjk_column_names_are_drawn_in_the_window_and_heatmaps_png(session, titles, tmp_path):
    ui, pixels = _window(session, titles)
    try:
        scales, diagram, legend = _names_in_the_window(ui)
        assert scales == list(NAMES) and diagram == list(NAMES)
        assert legend == [f"test: {name}" for name in NAMES]
        _drawn_apart(pixels, titles[-2:])
    finally:
        ui.close()
    titles.clear()
    assert [scale.name for scale in write_run_heatmaps(session, tmp_path / "heatmaps.png")] == list(NAMES)
    _drawn_apart(np.asarray(spy.Bitmap(str(tmp_path / "heatmaps.png"))), titles[-2:])


def test_without_a_font_each_name_has_its_number(session, titles, tmp_path, monkeypatch):
    (tmp_path / "no fonts").mkdir()
    monkeypatch.setenv(FOLDERS_VARIABLE, str(tmp_path / "no fonts"))
    ui, pixels = _window(session, titles)
    try:
        scales, diagram, legend = _names_in_the_window(ui)
        assert scales == list(FALLBACK) and diagram == list(FALLBACK)
        assert legend == [f"test: {name}" for name in FALLBACK]
        _drawn_apart(pixels, titles[-2:])
    finally:
        ui.close()
    titles.clear()
    assert [scale.name for scale in write_run_heatmaps(session, tmp_path / "heatmaps.png")] == list(FALLBACK)
    _drawn_apart(np.asarray(spy.Bitmap(str(tmp_path / "heatmaps.png"))), titles[-2:])
