"""Network panel: edits the structural fields as a draft; "Apply" rebuilds the network."""

from __future__ import annotations

from imgui_bundle import imgui

from ...config.checks import MAX_HIDDEN_LAYERS, MAX_WIDTH
from ...config.config import FIELDS, fields_of
from ...config.spec import STRUCTURE
from ...errors import UserError
from ...kernels.planning import plan_for
from ...model.encodings import grid_spec, playground_features
from ..fields import draw_field, widget_fields
from ..sliders import typed_slider, whole
from ..style import BAD, MUTED, WARN, em, field_error
from . import step_warning


def _edit(app, field: str, **changes) -> None:
    """A change to the draft; a refused one is reported under `field`'s widget."""
    try:
        app.draft = app.draft.replace(**changes)
    except UserError as error:
        app.field_errors[field] = str(error)
        return
    app.field_errors.pop(field, None)


def draw(app) -> None:
    # Apply, the rebuild's progress and the slow-step warning first: below eight layers' widths
    # they were out of sight in the panel's default height.
    _apply_row(app)
    imgui.separator()
    d = app.draft
    imgui.push_item_width(-em(8.6))
    hidden = list(d.hidden)
    for k in range(len(hidden)):
        _width_slider(app, hidden, k)
    half = (imgui.get_content_region_avail().x - imgui.get_style().item_spacing.x) / 2
    imgui.begin_disabled(len(hidden) >= MAX_HIDDEN_LAYERS)
    if imgui.button("+ layer", imgui.ImVec2(half, 0)):
        _edit(app, "network", hidden=hidden + [hidden[-1]])
    app.remember("add layer")
    imgui.end_disabled()
    imgui.same_line()
    imgui.begin_disabled(len(hidden) <= 1)
    if imgui.button("- layer", imgui.ImVec2(half, 0)):
        _edit(app, "network", hidden=hidden[:-1])
    imgui.end_disabled()
    for name in widget_fields(STRUCTURE, d):  # activations, encoding and its settings, precision
        draw_field(app, name, d, lambda value, name=name: _edit(app, FIELDS[name].label, **_changes(d, name, value)))
    imgui.pop_item_width()
    _grid_line(d)


def _changes(draft, name: str, value) -> dict:
    """The draft's fields that setting `name` to `value` changes. Switching the encoding to
    `features` starts from the inputs the network has now (from poly2: x, y, x2, y2; it started
    from x, y whatever the network had), or from Fourier or a grid, the features last chosen."""
    changes = {name: value}
    if name == "encoding" and value == "features":
        changes["features"] = playground_features(draft.encoding_settings) or draft.features
    return changes


def _grid_line(draft) -> None:
    """A grid encoding's resolutions (set by --grid-base-resolution and --grid-level-scale) and size."""
    grid = grid_spec(draft.encoding_settings, draft.dims)
    if grid is None:
        return
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(
        MUTED,
        f"{grid.levels} levels from {grid.base_resolution} to {grid.finest_resolution:.0f} cells across "
        f"(x{grid.per_level_scale:g} a level), {grid.param_count:,} table values",
    )
    imgui.pop_text_wrap_pos()


def _width_slider(app, hidden: list[int], k: int) -> None:
    name = f"layer {k + 1} width"

    def set_width(width: int) -> None:
        _edit(app, name, hidden=hidden[:k] + [width] + hidden[k + 1 :])

    imgui.push_id(k)
    slider = lambda flags: imgui.slider_int(name, hidden[k], 1, MAX_WIDTH, "%d", flags)  # noqa: E731
    typed_slider(app, name, name, slider, str(hidden[k]), whole(name), set_width)
    imgui.pop_id()


def _apply_row(app) -> None:
    pending = any(getattr(app.draft, f) != getattr(app.config, f) for f in fields_of(STRUCTURE))
    job = app.session.rebuild
    if job is not None:
        imgui.progress_bar(job.fraction, imgui.ImVec2(-1, 0), f"{job.label}... {job.seconds:.1f} s")
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(
            MUTED, f"{network_title(plan_for(job.config).sizes)}: the current network trains on until it is ready"
        )
        imgui.pop_text_wrap_pos()
        return
    imgui.begin_disabled(not pending)
    if imgui.button("Apply (rebuild)", imgui.ImVec2(em(9), 0)):
        app.start_rebuild()
    app.remember("apply")
    imgui.end_disabled()
    imgui.same_line()
    imgui.begin_disabled(not pending)
    if imgui.button("Revert", imgui.ImVec2(em(5), 0)):
        app.draft = app.config
    imgui.end_disabled()
    # The line under the buttons is there either way, so that an edit does not move the widgets
    # below it (the slider being typed into, say) by a line.
    if pending:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(WARN, pending_text(app.config, app.draft))
        imgui.pop_text_wrap_pos()
        app.remember("pending")
        step_warning.draw(app)
    else:
        imgui.text_colored(MUTED, f"{app.session.trainer.plan.param_count:,} parameters")
    field_error(app, "network")
    if app.session.rebuild_error:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(BAD, app.session.rebuild_error)
        imgui.pop_text_wrap_pos()


def network_title(sizes) -> str:
    """ "4 -> 256 x 8 -> 4": the layer sizes, a run of equal hidden widths counted once."""
    parts, hidden = [str(sizes[0])], list(sizes[1:-1])
    while hidden:
        run = next((k for k, width in enumerate(hidden) if width != hidden[0]), len(hidden))
        parts.append(f"{hidden[0]} x {run}" if run > 1 else str(hidden[0]))
        hidden = hidden[run:]
    return " -> ".join([*parts, str(sizes[-1])])


def pending_text(config, draft) -> str:
    """What Apply would change: the new layer sizes, and each other structural field changed."""
    old, new = plan_for(config).sizes, plan_for(draft).sizes
    changes = [f"{network_title(new)} (was {network_title(old)})"] if new != old else []
    for name in fields_of(STRUCTURE):
        before, after = getattr(config, name), getattr(draft, name)
        if name != "hidden" and before != after:
            changes.append(f"{FIELDS[name].label} {after} (was {before})")
    return "pending: " + "; ".join(changes)
