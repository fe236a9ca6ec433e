"""The data, in the heatmaps panel: the choice of formulas or points (a generator, or a CSV
through File > Load CSV), and for points their live settings, what is shown of them, and the
data view itself (app/views/data_view.py): the points over the learned function, with a legend of the
class colours or the value scale. The state and its rules are in app/ui/data_edits.py."""

from __future__ import annotations

import math
from pathlib import Path

from imgui_bundle import imgui

from ... import datasets
from ...datasets.source import MAX_ROWS
from ...kernels.view_constants import CLASS_COLOURS
from ...truth.eval_grid import cell_centre
from ...views.data_view import DataView
from ..heatmap_view import axis_labels
from ..style import BAD, MUTED, em

FORMULAS = "formulas (the targets)"
LEGEND_EM = 9.5  # the legend's width beside the view


def _choices(app) -> list[tuple[str, str]]:
    """(label, name) of the combo's entries: the formulas, the generators, a loaded CSV."""
    entries = [(FORMULAS, datasets.NO_DATASET)]
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
    if edits.error:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(BAD, edits.error)
        imgui.pop_text_wrap_pos()
        app.remember("data error")


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


def _settings(app) -> None:
    edits, config = app.data, app.config
    imgui.push_item_width(em(7))
    if "generator" in config.dataset:
        _slider(app, "points", "points", math.log10(config.points), 1.0, math.log10(MAX_ROWS),
                lambda v: f"{max(2, round(10**v)):,}", lambda v: edits.set(points=max(2, round(10**v))))  # fmt: skip
        imgui.same_line()
        _slider(
            app, "noise", "noise", 100 * config.noise, 0.0, 50.0, _percent, lambda v: edits.set(noise=round(v) / 100)
        )
        imgui.same_line()
    _slider(app, "train ratio", "train", 100 * config.train_ratio, 10.0, 90.0, _percent,
            lambda v: edits.set(train_ratio=round(v) / 100))  # fmt: skip
    if imgui.is_item_hovered():
        imgui.set_tooltip("the share of the points that trains; the rest only tests")
    imgui.pop_item_width()
    imgui.same_line()
    if imgui.button("Regenerate"):
        edits.regenerate()
    app.remember("regenerate")
    if imgui.is_item_hovered():
        imgui.set_tooltip("new points and a new split (a new data seed); the network trains on")


def _toggles(app, view: DataView) -> None:
    for label, attribute in (("training points", "show_train"), ("test points", "show_test")):
        changed, on = imgui.checkbox(label, getattr(view, attribute))
        app.remember(label)
        if changed:
            setattr(view, attribute, on)
        imgui.same_line()
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


def _swatch(colour, ring: bool = False) -> None:
    side = imgui.get_text_line_height()
    start = imgui.get_cursor_screen_pos()
    centre = imgui.ImVec2(start.x + side / 2, start.y + side / 2)
    u32 = imgui.get_color_u32(imgui.ImVec4(*colour, 1.0))
    draw = imgui.get_window_draw_list()
    if ring:
        draw.add_circle(centre, side * 0.32, u32, 0, 2.5)
    else:
        draw.add_circle_filled(centre, side * 0.36, u32)
        draw.add_circle(centre, side * 0.36, imgui.get_color_u32(imgui.ImVec4(1, 1, 1, 1)), 0, 1.0)
    imgui.dummy(imgui.ImVec2(side, side))
    imgui.same_line(0, em(0.2))


def _bar(renderer, view: DataView, length: float, across: bool) -> None:
    """The signed scale (the background's colours), lowest at the bottom or on the left, with
    its two ends' values."""
    problem = view.evaluator.trainer.data.dataset.problem
    top = 1.0 if problem.classify else float(view.value_ranges[0])
    low, high = ("0", "1") if problem.classify else (f"{-top:.3g}", f"{top:.3g}")
    imgui.text_colored(MUTED, f"p(class {problem.names[1]})" if problem.classify else problem.names[0])
    thickness, texture = em(0.8), renderer.texture(view.bar)
    draw, colour = imgui.get_window_draw_list(), imgui.get_color_u32(imgui.Col_.text)
    if across:
        imgui.same_line()
        imgui.text(low)
        imgui.same_line()
        a = imgui.get_cursor_screen_pos()
        b = imgui.ImVec2(a.x + length, a.y + imgui.get_text_line_height())
        top_left, top_right = imgui.ImVec2(a.x, a.y), imgui.ImVec2(b.x, a.y)
        bottom_right, bottom_left = imgui.ImVec2(b.x, b.y), imgui.ImVec2(a.x, b.y)
        lo, hi = imgui.ImVec2(0.5, 1.0), imgui.ImVec2(0.5, 0.0)
        draw.add_image_quad(texture, top_left, top_right, bottom_right, bottom_left, lo, hi, hi, lo)
        imgui.dummy(imgui.ImVec2(length, b.y - a.y))
        imgui.same_line()
        imgui.text(high)
        return
    start = imgui.get_cursor_screen_pos()
    imgui.image(texture, imgui.ImVec2(thickness, length))
    for text, y in ((high, start.y), (low, start.y + length - imgui.get_text_line_height())):
        draw.add_text(imgui.ImVec2(start.x + em(1.2), y), colour, text)


def legend(renderer, view: DataView, length: float, below: bool) -> None:
    """Class colours (filled: training, ring: test), or the value scale, with its bar; in a
    column right of the view, or in lines below it (also heatmaps.png's, app/ui/report.py)."""
    problem = view.evaluator.trainer.data.dataset.problem
    imgui.begin_group()
    if problem.classify:
        if not below:
            imgui.text_colored(MUTED, "classes")
        for k, name in enumerate(problem.names):
            _swatch(CLASS_COLOURS[k])
            _swatch(CLASS_COLOURS[k], ring=True)
            imgui.text(name)
            if below:
                imgui.same_line(0, em(1))
        imgui.text_colored(MUTED, "filled: train, ring: test")
    else:
        imgui.text_colored(MUTED, "points and background: orange < 0 < blue")
    if problem.kind != "classes":
        _bar(renderer, view, min(length * 0.45, em(12)) if below else max(min(length * 0.45, em(10)), em(4)), below)
    imgui.end_group()


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
    if problem.kind == "binary":
        text = f"p(class {problem.names[1]}) = {values[0]:.3f}"
    elif problem.kind == "classes":
        text = "\n".join(f"p({name}) = {p:.3f}" for name, p in zip(problem.names, values))
    else:
        text = f"{problem.names[image]} = {values[image]:.4g}"
    imgui.set_tooltip(f"x = {x:.3f}   y = {y:.3f}\n{text}")


def _side(view: DataView, avail: imgui.ImVec2, margin: float) -> tuple[float, bool]:
    """Each image's side, and whether the legend goes below the view (where that makes the
    images larger) rather than right of it."""
    spacing, line = imgui.get_style().item_spacing.x, imgui.get_text_line_height_with_spacing()
    right = min((avail.x - margin - em(LEGEND_EM)) / view.images - spacing, avail.y - 2 * line)
    below = min((avail.x - margin) / view.images - spacing, avail.y - 5 * line)
    return max(below, right, em(8)), below > right


def draw_view(app) -> None:
    """The settings, toggles and the data view with its legend."""
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
    side, below = _side(view, imgui.get_content_region_avail(), margin)
    texture = app.renderer.texture(view.view)
    imgui.set_cursor_pos_x(imgui.get_cursor_pos_x() + margin)
    for image in range(view.images):
        origin = imgui.get_cursor_screen_pos()
        u0, u1 = image / view.images, (image + 1) / view.images
        imgui.image(texture, imgui.ImVec2(side, side), imgui.ImVec2(u0, 0), imgui.ImVec2(u1, 1))
        app.remember(f"data view {image}")
        if imgui.is_item_hovered():
            _tooltip(app, origin, side, image)
        if image == 0:
            axis_labels(app.config.domain, origin, side, x_axis=False)
        axis_labels(app.config.domain, origin, side, x_axis=True)
        if image < view.images - 1 or not below:
            imgui.same_line()
    if below:
        imgui.dummy(imgui.ImVec2(0, imgui.get_text_line_height()))  # room for x's labels
        imgui.set_cursor_pos_x(imgui.get_cursor_pos_x() + margin)
    legend(app.renderer, view, side, below)
    if not below:
        imgui.dummy(imgui.ImVec2(0, imgui.get_text_line_height()))
