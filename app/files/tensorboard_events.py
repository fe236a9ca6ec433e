"""A run's TensorBoard event files (--tensorboard DIR), through tensorboardX (the optional
`tensorboard` extra): at each evaluation the run's figures as scalars, named as summary.json and
loss.csv name them; every K-th evaluation's heatmaps (and the last's) as images; the config's
fields as hparams, with the run's metric, for the HParams view. The format: docs/formats.md."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserError
from .tensorboard_images import images, png_bytes
from .writable import check_output_dir

if TYPE_CHECKING:  # the command line reads IMAGE_EVERY and check_installed before any of the app's GPU side
    from ..loop.session import Session

INSTALL_HINT = (
    "pip install 'slang-visual-trainer[tensorboard]' (in a checkout: .venv/bin/pip install -e '.[tensorboard]')"
)
# The heatmaps of every 10th evaluation and the last: a default run's (1,000 steps, an evaluation
# every 100) at steps 100 and 1,000, a 100,000-step run's about 100 of them.
IMAGE_EVERY = 10
FLUSH_SECONDS = 5  # TensorBoard, watching a run, sees its figures this late at most
# The HParams view's statuses: a run stopped before its end (Ctrl+C, a sweep's pruner) has none of its own.
STATUSES = {"complete": "STATUS_SUCCESS", "diverged": "STATUS_FAILURE", "interrupted": "STATUS_UNKNOWN"}
EVENT_FILES = "events.out.tfevents.*"


def installed() -> bool:
    try:
        return importlib.util.find_spec("tensorboardX") is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
        return False


def check_installed(option: str = "--tensorboard") -> None:
    if not installed():
        raise UserError(f"{option} needs tensorboardX, which is not installed: {INSTALL_HINT}")


def check_options(folder: str | None, image_every: int | None) -> None:
    """--tensorboard DIR: a folder that can be written, and tensorboardX installed (the optional
    extra); --tensorboard-images K only with it, K 0 or more."""
    if folder is None:
        if image_every is not None:
            raise UserError("--tensorboard-images is for --tensorboard DIR, which is not given")
        return
    if image_every is not None and image_every < 0:
        raise UserError(f"--tensorboard-images must be 0 or more (got {image_every})")
    check_output_dir(Path(folder), "--tensorboard")
    check_installed()


@dataclass(frozen=True)
class TensorboardOptions:
    """Where a run's event files go and what they hold besides its figures."""

    folder: str
    image_every: int = IMAGE_EVERY  # the heatmaps of every K-th evaluation, and of the last; 0: none
    fields: tuple[str, ...] | None = None  # the config fields written as hparams; None: all of them
    metric: str | None = None  # the HParams view's metric (a sweep's); None: the run's own (metric_for)

    @classmethod
    def of(cls, folder: str | None, image_every: int | None) -> TensorboardOptions | None:
        """--tensorboard DIR and --tensorboard-images K as given (None: not asked for)."""
        if folder is None:
            return None
        return cls(str(Path(folder).resolve()), IMAGE_EVERY if image_every is None else image_every)

    def within(self, name: str, fields: tuple[str, ...] | None, metric: str | None = None) -> TensorboardOptions:
        """One of several runs side by side (a racer, a trial): DIR/<name>, with their hparams."""
        return dataclasses.replace(self, folder=str(Path(self.folder) / name), fields=fields, metric=metric)


def status_of(diverged_at: int | None, interrupted_at: int | None) -> str:
    """A run's end as the HParams view's status (a key of STATUSES)."""
    if diverged_at is not None:
        return "diverged"
    return "interrupted" if interrupted_at is not None else "complete"


def figures(session: Session, samples_per_second: float) -> dict[str, float]:
    """The scalars of the session's last evaluation, by the names of summary.json and loss.csv
    (a dataset's training-set loss is loss.csv's train_set_loss); those not finite are left out."""
    values = {"train_loss": session.train_loss, "eval_loss": session.eval_loss}
    if session.trainer.data is None and session.image is None:  # summary.json has it for formulas only
        values["eval_grad_loss"] = session.eval_grad_loss
    if session.image is not None:
        values.update(psnr=session.image.psnr, image_loss=session.image.loss)
    for name, value in (session.metrics or {}).items():
        values["train_set_loss" if name == "train_loss" else name] = value
    values["samples_per_second"] = samples_per_second
    return {name: float(value) for name, value in values.items() if value is not None and math.isfinite(value)}


def hparams(session: Session, fields: tuple[str, ...] | None) -> dict[str, bool | float | str]:
    """The config's fields as hparams: numbers, flags and names as they are, lists and objects as
    their JSON text (as trials.csv writes them); unset fields left out."""
    config = session.config.to_dict()
    chosen = config if fields is None else {name: config[name] for name in fields}
    return {
        name: value if isinstance(value, (bool, int, float, str)) else json.dumps(value)
        for name, value in chosen.items()
        if value is not None
    }


class RunEvents:
    """One run's event files, in options.folder. A run from step 0 replaces the event files an
    earlier one left there; a resumed run hides their events past its step (purge_step), and
    keeps their hparams and status, TensorBoard reading a tag's first."""

    def __init__(self, options: TensorboardOptions, session: Session):
        from tensorboardX import SummaryWriter

        from ..loop.race import metric_for

        self.options = options
        step = session.trainer.step
        folder = Path(options.folder)
        try:
            if step == 0:
                for stale in folder.glob(EVENT_FILES):
                    stale.unlink(missing_ok=True)
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UserError(f"cannot write --tensorboard {str(folder)!r}: {error.strerror or error}") from None
        # A resumed run's events go on from its step (TensorBoard hides the earlier ones past it),
        # in a file of their own even within the second of the last (a file's name has the second).
        purge, suffix = (step + 1, f".resumed-at-{step:012d}") if step > 0 else (None, "")
        self.writer = SummaryWriter(str(folder), purge_step=purge, flush_secs=FLUSH_SECONDS, filename_suffix=suffix)
        self.metric = options.metric or metric_for(session.config).name
        self._evaluations = 0
        self.written_step: int | None = None  # the last evaluation's step
        self._imaged_step: int | None = None  # the last step whose images were written
        self._write_hparams(session, step)
        self.writer.add_text("config", _config_text(session.config.to_dict()), step)

    def evaluation(self, session: Session, samples_per_second: float) -> None:
        """The session's last evaluation (once a step), its images every image_every-th."""
        step = session.trainer.step
        if step == self.written_step:
            return
        from tensorboardX.proto.summary_pb2 import Summary

        values = [
            Summary.Value(tag=name, simple_value=value) for name, value in figures(session, samples_per_second).items()
        ]
        self.writer.file_writer.add_summary(Summary(value=values), step)  # one event, not one a scalar
        every = self.options.image_every
        if every and self._evaluations % every == 0:
            self._write_images(session, step)
        self._evaluations += 1
        self.written_step = step

    def close(self, session: Session, status: str) -> None:
        """The last evaluation's images (where they are not written yet), the run's status for
        the HParams view (a key of STATUSES), and the files flushed."""
        try:
            last = self.written_step
            if self.options.image_every and last is not None and self._imaged_step != last:
                self._write_images(session, last)
            self._add_hparams_summary("session_end_info", _session_end(status), self.written_step or 0)
        finally:
            self.writer.close()

    def abandon(self) -> None:
        """The events written so far flushed, nothing more (a run stopped at once)."""
        self.writer.close()

    def _write_hparams(self, session: Session, step: int) -> None:
        from tensorboardX.summary import hparams as hparams_summaries

        experiment, start, _ = hparams_summaries(hparams(session, self.options.fields), {self.metric: 0.0})
        self.writer.file_writer.add_summary(experiment, step)
        self.writer.file_writer.add_summary(start, step)

    def _add_hparams_summary(self, tag: str, content: bytes, step: int) -> None:
        from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata

        plugin = SummaryMetadata.PluginData(plugin_name="hparams", content=content)
        value = Summary.Value(tag=f"_hparams_/{tag}", metadata=SummaryMetadata(plugin_data=plugin))
        self.writer.file_writer.add_summary(Summary(value=[value]), step)

    def _write_images(self, session: Session, step: int) -> None:
        from tensorboardX.proto.summary_pb2 import Summary

        for tag, pixels in images(session):
            height, width, _ = pixels.shape
            image = Summary.Image(height=height, width=width, colorspace=3, encoded_image_string=png_bytes(pixels))
            self.writer.file_writer.add_summary(Summary(value=[Summary.Value(tag=tag, image=image)]), step)
        self._imaged_step = step


def _session_end(status: str) -> bytes:
    from tensorboardX.proto.api_pb2 import Status
    from tensorboardX.proto.plugin_hparams_pb2 import HParamsPluginData, SessionEndInfo

    end = SessionEndInfo(status=Status.Value(STATUSES[status]))
    return HParamsPluginData(session_end_info=end, version=0).SerializeToString()


def _config_text(config: dict) -> str:
    """The whole config as the text tab shows it: its JSON, indented as a block of code."""
    return "\n".join("    " + line for line in json.dumps(config, indent=2).splitlines())
