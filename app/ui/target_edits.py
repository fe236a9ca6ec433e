"""The targets as the window edits them (no drawing here; panels/targets.py draws them): one text an
output, checked on Enter; presets and the user's own expressions; a Slang target file, watched. A
rejected expression or file changes nothing and its message stays by its field; an accepted change
rebuilds the network from the current weights where only the expressions changed
(docs/guide/targets.md)."""

from __future__ import annotations

from ..config.config import Config
from ..errors import UserError
from ..gpu import target_probe
from ..truth.slang_file import FileWatch, SlangTargetError
from ..truth.targets import MAX_TARGETS, TargetError, parse_target, target_presets

MAX_MINE = 12  # the user's own expressions remembered, most recent first
NEW_TARGET = "x * y"  # what "+ output" starts the new output with


class TargetEdits:
    # Holds the session, not the AppState that holds this: a reference cycle would leave the
    # old window state (and its renderer's ImGui context) to the cyclic collector, which freed
    # it in the middle of a later frame and crashed SlangPy's UI renderer.
    def __init__(self, session):
        self.session = session
        self.texts: list[str] = []
        self.errors: dict[int, UserError] = {}  # by output: the last rejected expression's error
        self.unapplied: set[int] = set()  # outputs whose field holds text typed, not entered
        self.mine: list[str] = []
        self.presets = target_presets()
        self.file_path = ""  # the Slang file field
        self.file_messages: list[str] = []  # why the file was not taken (compiler lines)
        self.watch: FileWatch | None = None
        self.sync()

    # ---- state ---------------------------------------------------------------------------
    def _base(self) -> Config:
        """The config a change builds on: the one being built, if a rebuild is under way."""
        job = self.session.rebuild
        return job.config if job is not None else self.session.config

    def sync(self) -> None:
        """After start-up or a rebuild: the fields follow the network's targets, except fields
        that hold a rejected expression the user is still fixing, or one not entered yet."""
        config = self.session.config
        texts = list(config.targets)
        for k in {*self.errors, *self.unapplied}:
            if k < len(texts) and k < len(self.texts):
                texts[k] = self.texts[k]
        self.errors = {k: e for k, e in self.errors.items() if k < len(texts)}
        self.unapplied = {k for k in self.unapplied if k < len(texts) and texts[k] != config.targets[k]}
        self.texts = texts
        if config.slang_target:
            self.file_path = self.file_path or config.slang_target["file"]
            if self.watch is None or self.watch.path != config.slang_target["file"]:
                self.watch = FileWatch(config.slang_target["file"])
        else:
            self.watch = None

    @property
    def using_file(self) -> bool:
        return bool(self._base().slang_target)

    def _rebuild(self, rows: list[int | None] | None = None, **changes) -> UserError | None:
        """Rebuilds for `changes`; output j goes on from old output rows[j] (default: the same)."""
        try:
            self.session.start_rebuild(self._base().replace(**changes), rows=rows)
        except UserError as error:
            return error
        return None

    # ---- expressions ---------------------------------------------------------------------
    def edit(self, output: int, text: str) -> None:
        """The field of `output` holds `text`, typed and not entered: it stays there (a click
        elsewhere loses nothing), marked unapplied while it differs from the target."""
        self.texts[output] = text
        if text != self._base().targets[output]:
            self.unapplied.add(output)
        else:
            self.unapplied.discard(output)

    def revert(self, output: int) -> None:
        """Escape: the field goes back to the target it applies, its message with it."""
        self.texts[output] = self._base().targets[output]
        self.unapplied.discard(output)
        self.errors.pop(output, None)

    def submit(self, output: int, text: str) -> None:
        """The field of `output` was entered: a valid expression replaces that target."""
        self.texts[output] = text
        self.unapplied.discard(output)
        try:
            parse_target(text, self._base().dims)
        except TargetError as error:
            self.errors[output] = error
            return
        targets = list(self._base().targets)
        if targets[output] != text or self.using_file:
            targets[output] = text
            error = self._rebuild(targets=targets, slang_target=None)
            if error is not None:
                self.errors[output] = error
                return
        self.errors.pop(output, None)
        self._remember(text)

    def choose(self, output: int, expressions: list[str]) -> None:
        """A preset or a remembered expression: one replaces `output`'s target, several all."""
        if len(expressions) == 1:
            self.submit(output, expressions[0])
            return
        self.texts = list(expressions)
        self.errors = {}
        self.unapplied = set()
        error = self._rebuild(targets=list(expressions), slang_target=None)
        if error is not None:
            self.errors[output] = error

    def add(self) -> None:
        targets = list(self._base().targets)
        if len(targets) < MAX_TARGETS:
            self.texts = targets + [NEW_TARGET]
            self.errors = {}
            self.unapplied = set()
            self._rebuild(targets=self.texts, slang_target=None)

    def remove(self, output: int) -> None:
        targets = list(self._base().targets)
        if len(targets) > 1:
            del targets[output]
            self.texts = targets
            self.errors = {}
            self.unapplied = set()
            kept = [j for j in range(len(targets) + 1) if j != output]  # the others keep their weights
            self._rebuild(kept, targets=targets, slang_target=None)

    def _remember(self, text: str) -> None:
        if any(text in expressions for _, expressions in self.presets):
            return
        self.mine = [text] + [t for t in self.mine if t != text][: MAX_MINE - 1]

    # ---- a Slang file ----------------------------------------------------------------------
    def load_file(self, path: str) -> None:
        """Reads and compiles the file at `path` and rebuilds with it; on an error nothing
        changes and the compiler's lines are kept for the panel."""
        self.file_path = path
        try:
            target = target_probe.load(self.session.gpu, path, self._base().dims)
            same = target == self._base().slang_target  # touched, not changed
            error = None if same else self._rebuild(slang_target=target)
        except UserError as failure:
            error = failure
        if error is not None:
            self.file_messages = error.messages if isinstance(error, SlangTargetError) else [str(error)]
            return
        self.file_messages = []
        self.watch = FileWatch(path)

    def use_expressions(self) -> None:
        self.file_messages = []
        self._rebuild(slang_target=None)
        self.watch = None

    def poll(self) -> bool:
        """Once a frame: recompiles the watched file when it changed on disk. Returns whether it
        tried (the new file is then building, or its errors are kept)."""
        if self.watch is None or not self.watch.changed():
            return False
        self.load_file(self.watch.path)
        return True
