"""The shape whose signed distance the network learns, as the window edits it (panels/shapes.py draws
its row). A shape is read before anything is rebuilt, so a file that is no shape is refused with
its own line and the network trains on; a shape after another goes on from the current weights,
after another problem it starts afresh on the shape preset's settings (app/loop/carry.py;
docs/guide/shapes.md, 'In the window')."""

from __future__ import annotations

from pathlib import Path

from ..config.config import Config
from ..config.files import load_preset, shape_preset
from ..config.truths import with_shape
from ..errors import UserError, first_line
from ..truth.mesh_truth import is_mesh_spec, load_mesh_field
from ..truth.sdf_truth import load_field


def shape_of(config: Config) -> str | None:
    """The shape `config` learns: its sdf, unless points or an image take precedence (the plan's
    order: app/kernels/planning.py)."""
    return config.sdf if not (config.dataset or config.image) else None


class ShapeEdits:
    # Holds the session, not the AppState (see TargetEdits: a cycle would outlive the window).
    def __init__(self, session):
        self.session = session
        self.error = ""  # why the last shape was not taken, one line

    def choose(self, spec: str | None) -> str | None:
        """Rebuilds to learn `spec` (a built-in's name or a file's path), or the targets again
        (None, over the default domain). Returns None when the rebuild started, else why not."""
        try:
            base = self.session.building
            if spec is None:
                config = base.replace(sdf=None, domain=list(Config().domain))
            else:
                config = with_shape(base, spec)
                if shape_of(base) is None:  # another problem: a new network, on the shape preset's settings
                    config = load_preset(shape_preset(spec), config)
                if is_mesh_spec(spec):  # its own line, now
                    load_mesh_field(spec, (*map(float, config.domain), *map(float, config.z_range)))
                else:
                    load_field(spec, tuple(float(v) for v in config.domain))
            self.session.start_rebuild(config)
        except UserError as error:
            self.error = first_line(error)
            return self.error
        self.error = ""
        return None

    def building_note(self) -> str:
        """What the notice says of the rebuild just started."""
        job = self.session.rebuild
        spec = shape_of(job.config) if job is not None else None
        if spec is None:
            return "building the network for the targets..."
        name = Path(spec).name
        if job.keep_weights:
            return f"building the network for {name}: it goes on from the current weights"
        return (
            f"building a new network for {name}: a signed distance is another problem, so it starts afresh"
            f" on the {shape_preset(spec)} preset's settings"
        )
