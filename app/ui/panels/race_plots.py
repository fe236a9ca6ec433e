"""The Race panel's two views of the racers, each in its own colour: their curves on one plot, against
steps or each racer's own training time; and a block per racer of its learned function and |error|
at the chosen output. The values are on the truth's scale, the same for every racer; each |error|
on its own scale, from 0 to its largest, which its bar states."""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from ...views.heatmaps import VIEWS, shown_range
from ..clamped_image import clamped_image
from ..heatmap_view import BAR_COLUMNS, colorbar
from ..style import MUTED, em, px
from .loss_plot import curve

IMAGE_EM = 6.0
BAR_EM = 0.7
BAR_LABELS_EM = 3.6


def draw_curves(app, race, colour, height: float) -> None:
    metric = race.race.metric
    changed, race.by_time = imgui.checkbox("against training time", race.by_time)
    imgui.same_line(0, em(1.5))
    what = "PSNR (right axis)" if metric.higher_is_better else metric.name.replace("_", " ")
    thin = "" if race.by_time else "thin: batch loss; "
    squares = "; squares: test accuracy (right axis)" if _has_accuracy(race) else ""
    imgui.text_colored(MUTED, f"{thin}thick with points: {what} at each evaluation{squares}")
    if not implot.begin_plot("##race curves", imgui.ImVec2(-1, height)):
        return
    implot.setup_axes("training seconds" if race.by_time else "step", "loss")
    implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
    implot.setup_legend(implot.Location_.north_east, implot.LegendFlags_.outside)  # inside, it covered the curves
    accuracy = _has_accuracy(race)
    if metric.higher_is_better:
        implot.setup_axis(implot.ImAxis_.y2, "PSNR (dB)", implot.AxisFlags_.opposite | implot.AxisFlags_.auto_fit)
    elif accuracy:
        implot.setup_axis(implot.ImAxis_.y2, "test accuracy", implot.AxisFlags_.opposite)
        implot.setup_axis_limits(implot.ImAxis_.y2, 0.0, 1.02, implot.Cond_.always)
    x1, y0, y1 = _limits(race.racers, race.by_time, metric.higher_is_better)
    implot.setup_axes_limits(0, x1, y0, y1, implot.Cond_.always)
    for racer in race.racers:
        _racer_curves(racer, colour(race, racer), race.by_time, metric.higher_is_better)
    plot = implot.internal.get_current_plot()
    implot.end_plot()
    for name, rect in (("race axes", plot.plot_rect), ("race legend", plot.items.legend.rect)):  # tests
        app.rects[name] = (rect.min.x, rect.min.y, rect.max.x, rect.max.y)


def _has_accuracy(race) -> bool:
    return any(m.accuracy is not None for r in race.racers for m in r.marks)


def _limits(racers, by_time: bool, metric_on_right: bool) -> tuple[float, float, float]:
    """(last x, lowest loss, highest loss) over the racers not stopped by a divergence (a
    diverged racer's 1e30 would flatten every other curve), with a margin on the log scale."""
    xs, losses = [1.0], []
    for racer in racers:
        if racer.marks:
            xs.append(racer.marks[-1].seconds if by_time else racer.marks[-1].step)
        if racer.diverged_at is not None:
            continue
        if not by_time:
            xs.append(racer.step)
            train = racer.session.history.current.train
            if train.count:
                losses.append(curve(train, 400)[4])
        if not metric_on_right:
            losses.append(np.array([m.value for m in racer.marks], np.float64))
    values = np.concatenate(losses) if losses else np.zeros(0)
    values = values[np.isfinite(values) & (values > 0)]
    if not len(values):
        return max(xs), 1e-4, 1.0
    return max(xs), float(values.min()) / 1.5, float(values.max()) * 1.5


def _spec(colour: imgui.ImVec4, weight: float, alpha: float = 1.0, points: bool = False) -> implot.Spec:
    spec = implot.Spec()
    spec.line_color = imgui.ImVec4(colour.x, colour.y, colour.z, alpha)
    spec.line_weight = px(weight)
    if points:
        spec.marker = implot.Marker_.circle
        spec.marker_size = px(3.0)
        spec.marker_fill_color = spec.line_color
    return spec


def _racer_curves(racer, colour: imgui.ImVec4, by_time: bool, on_right: bool) -> None:
    """The racer's batch loss (against steps only: its time is known at its evaluations) and its
    metric at each evaluation, labelled with its name for the legend."""
    train = racer.session.history.current.train
    if not by_time and train.count:
        first, last, _, _, mean, _ = curve(train, 400)
        x = np.ascontiguousarray((first + last) / 2, np.float64)
        implot.plot_line(f"##{racer.name} train", x, np.ascontiguousarray(mean, np.float64), _spec(colour, 1.0, 0.55))
    if not racer.marks:
        return
    x = np.array([m.seconds if by_time else m.step for m in racer.marks], np.float64)
    y = np.array([m.value for m in racer.marks], np.float64)
    if on_right:
        implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
    implot.plot_line(racer.name, x, y, _spec(colour, 2.5, points=len(x) <= 60))
    if on_right:
        implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y1)
    accuracy = [(x_, m.accuracy) for x_, m in zip(x, racer.marks) if m.accuracy is not None]
    if accuracy and not on_right:
        implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y2)
        spec = _spec(colour, 1.5, 0.8, points=True)
        spec.marker = implot.Marker_.square
        ax, ay = (np.array(v, np.float64) for v in zip(*accuracy))
        implot.plot_line(f"##{racer.name} accuracy", ax, ay, spec)
        implot.set_axes(implot.ImAxis_.x1, implot.ImAxis_.y1)


def draw_heatmap_rows(app, race, colour) -> None:
    """A block per racer, learned | |error| with their bars, as many to a line as fit."""
    drawn = [r for r in race.racers if r.session.heatmaps is not None and r.session.heatmaps.drawn >= 0]
    if not drawn:
        return
    output = min(race.output, race.race.base.output_dim - 1)
    size, bar = em(IMAGE_EM), em(BAR_EM)
    spacing = imgui.get_style().item_spacing.x
    block = 2 * (size + bar + em(BAR_LABELS_EM)) + 3 * spacing
    per_line = max(1, int((imgui.get_content_region_avail().x + spacing) // block))
    imgui.text_colored(MUTED, f"learned | |error| at output {output + 1} (each |error| from 0 to its own largest)")
    for index, racer in enumerate(drawn):
        if index % per_line:
            imgui.same_line()
        imgui.begin_group()
        imgui.text_colored(colour(race, racer), racer.name)
        _block(app, racer.session.heatmaps, output, float(racer.session.error_max[0][output]), size, bar)
        imgui.end_group()


def _block(app, images, output: int, error_top: float, size: float, bar: float) -> None:
    atlas, outputs, width = app.renderer.texture(images.atlas), images.evaluator.trainer.plan.output_dim, 3 * len(VIEWS)
    v0, v1 = output / outputs, (output + 1) / outputs
    lo, hi = shown_range(images.value_ranges, 0, output, images.contours)
    for panel, column, top in ((1, "values" if not images.contours.shown else "signed", None), (2, "error", error_top)):
        uv0, uv1 = imgui.ImVec2(panel / width, v0), imgui.ImVec2((panel + 1) / width, v1)
        clamped_image(atlas, imgui.ImVec2(size, size), uv0, uv1, (images.grid, images.grid))
        imgui.same_line()
        if top is None:
            colorbar(app.renderer, images, BAR_COLUMNS[column], lo, hi, size, bar)
        else:
            colorbar(app.renderer, images, BAR_COLUMNS[column], 0.0, top, size, bar)
        imgui.same_line(0, 0)
        imgui.dummy(imgui.ImVec2(em(BAR_LABELS_EM), size))
        if panel == 1:
            imgui.same_line()
