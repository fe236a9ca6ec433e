"""File > Open image in the offscreen UI: a bad file is a notice and the running network stays; a
good one becomes the truth, and the Heatmaps panel shows it at its own resolution, pixel-exact
when zoomed (each image pixel a uniform block of the view's texture, in the pixel's colour), with
the PSNR beside the loss."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
import slangpy as spy
from test_images import BAD, sharp_edges
from test_ui_files import _choose, install_fake_dialogs
from test_ui_offscreen import _centre

from app.ui.offscreen import OffscreenApp


@pytest.fixture
def dialogs(monkeypatch):
    return install_fake_dialogs(monkeypatch)


@pytest.fixture(scope="module")
def ui(gpu):
    from app.config.config import Config, validate
    from app.loop.session import Session

    app = OffscreenApp(Session(gpu, validate(Config()), grid=64, heatmaps=True), 1280, 800)
    app.frame(3)
    yield app
    app.close()


@pytest.mark.parametrize("kind", ["corrupt", "16384x16384", "text named .png", "a folder"])
def test_a_bad_image_leaves_the_network_as_it_was(ui, dialogs, tmp_path, kind):
    path = tmp_path / "bad.png"
    BAD[kind](path)
    trainer, config = ui.session.trainer, ui.session.config
    dialogs.answers.append(str(path))
    _choose(ui, "image")
    assert dialogs.opened[-1] == "Open image"
    assert ui.session.rebuild is None and ui.session.trainer is trainer and ui.session.config == config
    assert ui.app.notice[0].startswith("image not opened: ") and "\n" not in ui.app.notice[0]


def _linear(srgb: np.ndarray) -> np.ndarray:
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def test_an_image_is_shown_pixel_exact_with_its_psnr(gpu, tmp_path):
    """The window as File > Open image leaves it (that path's rebuild is the one every network
    change takes; started here directly, to spare a staged compile)."""
    from app.config.config import Config, validate
    from app.loop.session import Session
    from app.truth import image_truth

    truth = sharp_edges(32)
    spy.Bitmap(truth).write(str(tmp_path / "edges.png"))
    info, _ = image_truth.load(tmp_path / "edges.png")
    config = validate(Config(image=info, domain=image_truth.aspect_domain(32, 32), encoding="hashgrid", grid_levels=6,
                             grid_log2_size=12, grid_base_resolution=4, hidden=[6]))  # fmt: skip
    ui = OffscreenApp(Session(gpu, config, grid=64, heatmaps=True), 1280, 800)
    try:
        _show_pixel_exact(ui, truth)
    finally:
        ui.close()


def _show_pixel_exact(ui, truth: np.ndarray) -> None:
    for _ in range(100):
        ui.frame()
        if ui.session.image.passes > 1:
            break
    image = ui.session.image
    assert ui.session.config.image["width"] == 32 and np.isfinite(image.psnr) and image.history.steps
    assert "image view" in ui.app.rects and "image to expressions" in ui.app.rects
    state = ui.app.image_view
    state.zoom, state.centre = 4.0, (16.0, 16.0)  # 4x4 screen pixels an image pixel, centred
    ui.app.running = False
    ui.frame(2)
    rows = ui.app.figure_rows  # the image's own figures, paused; no derivatives of a photo on a grid
    assert rows["image loss"] == f"{image.loss:.4g}  (32x32 pixels)" and rows["PSNR"] == f"{image.psnr:.2f} dB"
    assert "eval ∂ loss" not in rows and "eval loss" not in rows
    side = state.drawn[-1]
    view = state.texture.to_numpy()[: side[1], : side[0], :3].astype(np.float64)  # the truth panel
    origin = (16.0 - side[0] / 8, 16.0 - side[1] / 8)
    rows, columns = np.mgrid[0 : side[1], 0 : side[0]]
    at_x = np.floor(origin[0] + (columns + 0.5) / 4).astype(int)
    at_y = np.floor(origin[1] + (rows + 0.5) / 4).astype(int)
    inside = (at_x >= 0) & (at_x < 32) & (at_y >= 0) & (at_y < 32)
    assert inside.sum() >= 0.9 * min(side[0], 128) * min(side[1], 128)
    expected = _linear(truth[at_y[inside], at_x[inside]] / 255.0)
    np.testing.assert_allclose(view[inside][:, 0], expected, atol=2e-3)  # rgba16f rounding
    np.testing.assert_allclose(view[inside][:, 1], expected, atol=2e-3)
    ui.move(*_centre(ui, "image view"))  # the hover tooltip reads the learned values back
    assert state.learned[1] is not None and state.learned[1].shape == (32, 32, 1)


def test_formulas_keep_their_grid_figures(ui):
    ui.frame(2)
    rows = ui.app.figure_rows
    assert rows["eval loss"].endswith("(64x64 grid)") and rows["eval ∂ loss"].endswith("(∂/∂x, ∂/∂y)")
    assert "image loss" not in rows and "PSNR" not in rows


def test_file_load_checkpoint_brings_back_the_psnr_curve(ui, dialogs, gpu, tmp_path):
    """File > Load checkpoint of an image run (another network: built first) puts its PSNR curve
    back, the one the loss panel plots on its right axis, point for point; training goes on
    from it, adding points after the checkpoint's."""
    from test_image_runs import image_run_with_psnr

    from app.files import checkpoint as ckpt

    source = image_run_with_psnr(gpu, tmp_path)
    ckpt.save(tmp_path / "image.ckpt", ckpt.capture(source))
    dialogs.answers.append(str(tmp_path / "image.ckpt"))
    ui.app.running = False
    _choose(ui, "load")
    loaded = lambda: ui.session.rebuild is None and ui.session.image is not None and ui.session.trainer.step == 20  # noqa: E731
    assert ui.frames_until(loaded, 120), "the checkpoint's network is built and loaded"
    history = ui.session.image.history
    assert (history.steps, history.values) == (source.image.history.steps, source.image.history.values)
    ui.app.running = True
    assert ui.frames_until(lambda: len(ui.session.image.history.steps) > 4, 60), "the curve goes on"
    assert history.steps[:4] == [5, 10, 15, 20] and history.steps[4] > 20


def test_the_data_row_names_the_truth_it_trains_on(tmp_path):
    """The Heatmaps panel's data row, without points, names what the network learns: an image or
    a Slang file by its file's name (it said "formulas (the targets)" while an image was the truth)."""
    from app.config.config import Config
    from app.truth import image_truth
    from app.ui.panels import data

    spy.Bitmap(sharp_edges(32)).write(str(tmp_path / "golden_gate.png"))
    info, _ = image_truth.load(tmp_path / "golden_gate.png")
    assert data.truth_entry(Config(image=info)) == "image: golden_gate.png"
    mine = {"file": str(tmp_path / "mine.slang"), "source": "", "count": 1}
    assert data.truth_entry(Config(slang_target=mine)) == "Slang file: mine.slang"
    assert data.truth_entry(Config()) == "formulas (the targets)"
