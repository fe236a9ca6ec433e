"""The data, in the heatmaps panel: the choice of formulas or points (a generator, or a CSV
through File > Load CSV), and for points their live settings, what is shown of them, and the
data view itself (app/views/data_view.py): the points over the learned function, with its titles
and legends (app/ui/data_images.py). The state and its rules are in app/ui/data_edits.py."""

from __future__ import annotations

import math
from pathlib import Path

from imgui_bundle import imgui

from ... import datasets
from ...datasets.source import MAX_ROWS
from ...truth.eval_grid import cell_centre
from ...views.data_view import DataView
from .. import fonts
from ..data_images import draw_data_images, image_layout
from ..style import BAD, MUTED, em

FORMULAS = "formulas (the targets)"
SLIDER_EM = 7.0  # the points settings' sliders


def truth_entry(config) -> str:
    """The combo's first entry: the truth when no points are chosen. An image, a shape or a Slang
    file is named, as the truth row above names it ("formulas" there read as if the image were not used)."""
    if config.image is not None:
        return f"image: {Path(config.image['file']).name}"
    if config.sdf is not None:
        return f"shape: {Path(config.sdf).name}"
    if config.slang_target is not None:
        return f"Slang file: {Path(config.slang_target['file']).name}"
    return FORMULAS


def _choices(app) -> list[tuple[str, str]]:
    """(label, name) of the combo's entries: the truth without points (formulas, an image or a
    Slang file), the generators, a loaded CSV."""
    entries = [(truth_entry(app.config), datasets.NO_DATASET)]
    entries += [(f"{name}: {g.description}", name) for name, g in datasets.GENERATORS.items()]
    source = app.config.dataset
    if source and "csv" in source:
        entries.append((f"CSV: {Path(source['csv']).name}", "csv"))
    return entries


def _current(app) -> str:
    source = app.config.dataset
    return datasets.NO_DATASET if source is None else source.get("generator", "csv")


def draw_source(app) -> None:
    """The data row: formulas or which points, Load CSV, and why a change was not taken."""
    edits = app.data
    imgui.align_text_to_frame_padding()
    imgui.text_colored(MUTED, "data")
    imgui.same_line()
    entries, current = _choices(app), _current(app)
    labels = [label for label, _ in entries]
    index = next(k for k, (_, name) in enumerate(entries) if name == current)
    imgui.set_next_item_width(em(17))
    changed, index = imgui.combo("##dataset", index, labels)
    app.remember("dataset")
    if changed and entries[index][1] not in (current, "csv"):
        edits.choose(entries[index][1])
    imgui.same_line()
    imgui.begin_disabled(edits.loading is not None or app.files.pending is not None)
    if imgui.button("Load CSV..."):
        app.files.request("csv")
    imgui.end_disabled()
    app.remember("load csv")
    if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
        imgui.set_tooltip("columns x, y, then a label column (classes) or value columns;\nwith or without a header")
    if edits.loading is not None:
        imgui.same_line()
        imgui.text_colored(MUTED, f"reading {Path(edits.loading).name}...")
    if edits.error or edits.note:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(BAD if edits.error else MUTED, edits.error or edits.note)
        imgui.pop_text_wrap_pos()
        app.remember("data error" if edits.error else "data note")


def _slider(app, name: str, label: str, value: float, low: float, high: float, shown, apply) -> None:
    """A slider whose value is taken when it is let go (new points at every frame of a drag
    would remake a million points sixty times a second); `shown(value)` is its text."""
    drafts = app.data_drafts
    current = drafts.get(name, value)
    _, current = imgui.slider_float(label, current, low, high, shown(current), imgui.SliderFlags_.always_clamp)
    app.remember(name, label)
    if imgui.is_item_active():
        drafts[name] = current
    else:
        drafts.pop(name, None)
        if imgui.is_item_deactivated_after_edit():
            apply(current)


def _percent(value: float) -> str:
    return f"{value:.0f}%%"  # ImGui reads it as a printf format: %% is one %


def _beside(right: float, width: float) -> None:
    """The next item, `width` wide, on the line of the last one where it fits left of `right`,
    else on a line of its own: at 1024 x 640 the third slider's label ran past the panel's edge,
    behind a horizontal scroll."""
    if imgui.get_item_rect_max().x + imgui.get_style().item_spacing.x + width <= right:
        imgui.same_line()


def _slider_width(label: str) -> float:
    return em(SLIDER_EM) + imgui.get_style().item_inner_spacing.x + imgui.calc_text_size(label).x


def _settings(app) -> None:
    edits, config = app.data, app.config
    right = imgui.get_cursor_screen_pos().x + imgui.get_content_region_avail().x
    imgui.push_item_width(em(SLIDER_EM))
    if "generator" in config.dataset:
        _slider(app, "points", "points", math.log10(config.points), 1.0, math.log10(MAX_ROWS),
                lambda v: f"{max(2, round(10**v)):,}", lambda v: edits.set(points=max(2, round(10**v))))  # fmt: skip
        _beside(right, _slider_width("noise"))
        _slider(
            app, "noise", "noise", 100 * config.noise, 0.0, 50.0, _percent, lambda v: edits.set(noise=round(v) / 100)
        )
        _beside(right, _slider_width("train"))
    _slider(app, "train ratio", "train", 100 * config.train_ratio, 10.0, 90.0, _percent,
            lambda v: edits.set(train_ratio=round(v) / 100))  # fmt: skip
    if imgui.is_item_hovered():
        imgui.set_tooltip("the share of the points that trains; the rest only tests")
    imgui.pop_item_width()
    _beside(right, imgui.calc_text_size("Regenerate").x + 2 * imgui.get_style().frame_padding.x)
    if imgui.button("Regenerate"):
        edits.regenerate()
    app.remember("regenerate")
    if imgui.is_item_hovered():
        imgui.set_tooltip("new points and a new split (a new data seed); the network trains on")


def _toggles(app, view: DataView) -> None:
    right = imgui.get_cursor_screen_pos().x + imgui.get_content_region_avail().x
    box = imgui.get_frame_height() + imgui.get_style().item_inner_spacing.x  # a checkbox's square
    for label, attribute, after in (
        ("training points", "show_train", "test points"),
        ("test points", "show_test", "discretize output"),
    ):
        changed, on = imgui.checkbox(label, getattr(view, attribute))
        app.remember(label)
        if changed:
            setattr(view, attribute, on)
        _beside(right, box + imgui.calc_text_size(after).x)
    changed, view.discretize = imgui.checkbox("discretize output", view.discretize)
    app.remember("discretize")
    if imgui.is_item_hovered():
        imgui.set_tooltip("each place takes its likeliest class's colour (or its value's sign): the decision boundary")


def _counts(app) -> None:
    t = app.session.trainer
    dataset = t.data.dataset
    kind = {"binary": "two classes", "classes": f"{len(dataset.problem.names)} classes", "regression": "regression"}
    imgui.text_colored(
        MUTED,
        f"{dataset.count:,} points: {dataset.train_count:,} train, {dataset.test_count:,} test; "
        f"{kind[dataset.problem.kind]}; epoch {t.epochs:,.1f}",
    )


def _tooltip(app, origin: imgui.ImVec2, side: float, image: int) -> None:
    mouse = imgui.get_mouse_pos()
    ev = app.evaluation()
    grid = ev.predictions.shape[0]
    i = int((mouse.x - origin.x) / side * grid)
    j = grid - 1 - int((mouse.y - origin.y) / side * grid)
    if not (0 <= i < grid and 0 <= j < grid):
        return
    x, y = cell_centre(app.config.domain, grid, i, j)
    outputs = ev.predictions[j, i]
    problem = app.session.trainer.data.dataset.problem
    loss = app.session.trainer.plan.loss
    values = loss.predict(outputs[None, :].astype(float))[0]
    kind = "class" if problem.classify else "output"
    names = [fonts.label(name, k + 1, kind) for k, name in enumerate(problem.names)]
    if problem.kind == "binary":
        text = f"p({fonts.label(problem.names[1], 2, 'class', named=True)}) = {values[0]:.3f}"
    elif problem.kind == "classes":
        text = "\n".join(f"p({name}) = {p:.3f}" for name, p in zip(names, values))
    else:
        text = f"{names[image]} = {values[image]:.4g}"
    imgui.set_tooltip(f"x = {x:.3f}   y = {y:.3f}\n{text}")


def draw_view(app) -> None:
    """The settings, toggles and the data view with its titles and legends."""
    images = app.session.heatmaps
    view = images.data_view if images is not None else None
    if view is None or app.session.trainer.data is None:
        imgui.text_colored(MUTED, "building the network for these points...")
        return
    _settings(app)
    _toggles(app, view)
    _counts(app)
    imgui.separator()
    margin = em(2.2)  # the y axis' labels
    layout = image_layout(view, imgui.get_content_region_avail(), margin)
    imgui.set_cursor_pos_x(imgui.get_cursor_pos_x() + margin)

    def hovered(image: int, origin: imgui.ImVec2, side: float) -> None:
        app.remember(f"data view {image}")
        if imgui.is_item_hovered():
            _tooltip(app, origin, side, image)

    app.data_scales = draw_data_images(app.renderer, view, app.config.domain, layout, hovered)
    if not layout.below:
        imgui.dummy(imgui.ImVec2(0, imgui.get_text_line_height()))
