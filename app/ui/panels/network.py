"""Network panel: edits the structural fields as a draft; "Apply" rebuilds the network."""

from __future__ import annotations

from imgui_bundle import imgui

from ...config import MAX_HIDDEN_LAYERS, MAX_WIDTH, fields_of
from ...config_spec import STRUCTURE
from ...errors import UserError
from ...hashgrid import grid_spec
from ...plan import plan_for
from ...ui.fields import draw_field, widget_fields
from ...ui.panels import step_warning
from ...ui.style import BAD, MUTED, WARN, em, field_error


def _edit(app, **changes) -> None:
    try:
        app.draft = app.draft.replace(**changes)
    except UserError as error:
        app.field_errors["network"] = str(error)
        return
    app.field_errors.pop("network", None)


def draw(app) -> None:
    # Apply, the rebuild's progress and the slow-step warning first: below eight layers' widths
    # they were out of sight in the panel's default height.
    _apply_row(app)
    imgui.separator()
    d = app.draft
    imgui.push_item_width(-em(8.6))
    hidden = list(d.hidden)
    for k, width in enumerate(hidden):
        imgui.push_id(k)
        changed, width = imgui.slider_int(f"layer {k + 1} width", width, 1, MAX_WIDTH)
        if changed:
            hidden[k] = width
            _edit(app, hidden=hidden)
        app.remember(f"layer {k + 1} width", f"layer {k + 1} width")
        imgui.pop_id()
    half = (imgui.get_content_region_avail().x - imgui.get_style().item_spacing.x) / 2
    imgui.begin_disabled(len(hidden) >= MAX_HIDDEN_LAYERS)
    if imgui.button("+ layer", imgui.ImVec2(half, 0)):
        _edit(app, hidden=hidden + [hidden[-1]])
    app.remember("add layer")
    imgui.end_disabled()
    imgui.same_line()
    imgui.begin_disabled(len(hidden) <= 1)
    if imgui.button("- layer", imgui.ImVec2(half, 0)):
        _edit(app, hidden=hidden[:-1])
    imgui.end_disabled()
    for name in widget_fields(STRUCTURE, d):  # activations, encoding and frequencies, precision
        value = draw_field(name, d)
        if value is not None:
            _edit(app, **{name: value})
    imgui.pop_item_width()
    _grid_line(d)


def _grid_line(draft) -> None:
    """A grid encoding's resolutions (set by --grid-base-resolution and --grid-level-scale) and size."""
    grid = grid_spec(draft)
    if grid is None:
        return
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(
        MUTED,
        f"{grid.levels} levels from {grid.base_resolution} to {grid.finest_resolution:.0f} cells across "
        f"(x{grid.per_level_scale:g} a level), {grid.param_count:,} table values",
    )
    imgui.pop_text_wrap_pos()


def _apply_row(app) -> None:
    pending = any(getattr(app.draft, f) != getattr(app.config, f) for f in fields_of(STRUCTURE))
    job = app.session.rebuild
    if job is not None:
        imgui.progress_bar(job.fraction, imgui.ImVec2(-1, 0), f"{job.label}... {job.seconds:.1f} s")
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(MUTED, f"{plan_for(job.config).title}: the current network trains on until it is ready")
        imgui.pop_text_wrap_pos()
        return
    imgui.begin_disabled(not pending)
    if imgui.button("Apply (rebuild)", imgui.ImVec2(em(9), 0)):
        app.start_rebuild()
    app.remember("apply")
    imgui.end_disabled()
    imgui.same_line()
    if pending:
        if imgui.button("Revert", imgui.ImVec2(em(5), 0)):
            app.draft = app.config
        drafted = app.config.replace(**{f: getattr(app.draft, f) for f in fields_of(STRUCTURE)})
        imgui.text_colored(WARN, f"pending: {plan_for(drafted).title}")
        step_warning.draw(app)
    else:
        imgui.text_colored(MUTED, f"{app.session.trainer.plan.param_count:,} parameters")
    field_error(app, "network")
    if app.session.rebuild_error:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(BAD, app.session.rebuild_error)
        imgui.pop_text_wrap_pos()
