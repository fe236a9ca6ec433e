"""The dataset as the window edits it (no drawing here; panels/data.py draws it): a generator or
formulas, a CSV read in the background, and the live settings. A change the compiled network can
take applies at the next step; one it cannot (formulas to points, two classes to three) rebuilds
it; a rejected change is a message, and nothing changes (docs/guide/data.md, 'In the window')."""

from __future__ import annotations

import random
import threading

from .. import datasets
from ..config.config import Config
from ..config.truths import with_dataset
from ..datasets.csv_data import CsvData
from ..errors import UserError, first_line
from ..model.derivative_loss import DERIVATIVE_TERMS, derivatives_on


class DataEdits:
    # Holds the session, not the AppState (see TargetEdits: a cycle would outlive the window).
    def __init__(self, session):
        self.session = session
        self.error = ""  # why the last change was not taken
        self.note = ""  # what the last change turned off to be taken
        self.loading: str | None = None  # a CSV being read
        self._read: tuple[CsvData | None, UserError | None] | None = None
        self.formula_domain: list[float] | None = None  # the formulas' domain, for going back

    def _change(self, make) -> bool:
        try:
            self.session.change(make())
        except UserError as error:
            self.error, self.note = first_line(error), ""
            return False
        self.error = ""
        return True

    def choose(self, name: str) -> None:
        """A generator by name, or datasets.NO_DATASET for the formulas (on their own domain)."""
        self._change(lambda: self._configure(datasets.entry_for(name)))

    def _configure(self, entry: dict | None) -> Config:
        base = self.session.building
        self.note = ""
        if base.dataset is None:
            self.formula_domain = list(base.domain)
        if entry is None:
            return with_dataset(base, None).replace(domain=self.formula_domain or Config().domain)
        if derivatives_on(base.loss_settings):  # a shape's eikonal term, say: points have no gradient to fit
            self.note = "derivative loss terms off: a dataset's points have no gradient between them"
            base = base.replace(**dict.fromkeys(DERIVATIVE_TERMS, 0.0))
        return with_dataset(base, entry)

    def set(self, **changes) -> bool:
        """Points, noise, train ratio or data seed: new points at the next step."""
        return self._change(lambda: self.session.building.replace(**changes))

    def regenerate(self) -> None:
        self.set(data_seed=random.randrange(2**32))

    # ---- a CSV, read in the background ------------------------------------------------------
    def load_csv(self, path: str) -> None:
        if self.loading is not None:
            return
        self.loading, self._read = path, None

        def read() -> None:
            try:
                self._read = (datasets.read_csv(path), None)
            except UserError as error:
                self._read = (None, error)

        threading.Thread(target=read, name="read CSV", daemon=True).start()

    def poll(self) -> None:
        """Once a frame: takes a CSV once it has been read."""
        if self.loading is None or self._read is None:
            return
        data, error = self._read
        self.loading = self._read = None
        if error is not None:
            self.error = f"not loaded: {first_line(error)}"
            return
        datasets.remember_csv(data)
        self._change(lambda: self._configure(data.source))
