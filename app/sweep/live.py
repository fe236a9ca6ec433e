"""`sweep --serve`: the window served beside the sweep, in a process of its own (`--serve ADDR
--open-sweep DIR`: the sweep window open on DIR, paused), so that a browser watches the trials
finish and can train one again. Its URL line is relayed; it is stopped (SIGINT, its exit awaited)
however the sweep ends. A process, not a thread: Ray, Tune's Ctrl+C and the window's own signal
handling each keep their process, and neither's failure ends the other."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from ..errors import UserError
from ..resources import import_root, module_command

URL_PREFIX = "serving: "
START_TIMEOUT_S = 120  # Python, imports and the device: the window prints its URL before it builds a network
STOP_TIMEOUT_S = 60  # its device closed after the frame in progress; then it is killed
STOPPED_LINES = ("interrupted",)  # what the window says of a stop the sweep asked for: not relayed


@dataclass(frozen=True)
class ServeRequest:
    """--serve and its companions as the sweep was given them, and the trials' --device."""

    address: str
    token_file: str | None
    certfile: str | None
    keyfile: str | None
    device: str

    def command(self, folder: Path) -> list[str]:
        command = [sys.executable, *module_command(""), "--serve", self.address, "--open-sweep", str(folder.resolve())]
        for option, path in (("--token-file", self.token_file), ("--certfile", self.certfile)):
            command += [option, str(Path(path).resolve())] if path else []
        command += ["--keyfile", str(Path(self.keyfile).resolve())] if self.keyfile else []
        return [*command, "--device", self.device]


class ServedSweep:
    """The served window of one sweep: start() once the sweep is sure to run trials; leaving the
    `with` block stops it, whatever ended the block."""

    def __init__(self, request: ServeRequest | None, folder: Path):
        self.request, self.folder = request, folder
        self.process: subprocess.Popen | None = None
        self.url: str | None = None
        self._serving = threading.Event()
        self._held: list[str] | None = []  # its stderr until its URL is out (then None): the error where it fails
        self._lock = threading.Lock()
        self._stopping = False
        self._readers: list[threading.Thread] = []

    def __enter__(self) -> ServedSweep:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        """Starts the window and waits for its URL, which it prints; a UserError (its own one
        line) where it cannot serve. Nothing where --serve was not given."""
        if self.request is None or self.process is not None:
            return
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, (str(import_root()), environment.get("PYTHONPATH"))))
        self.process = subprocess.Popen(
            self.request.command(self.folder),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            env=environment,
            start_new_session=True,  # the terminal's Ctrl+C reaches the sweep; the sweep stops the window
            preexec_fn=_end_with_parent if sys.platform.startswith("linux") else None,
        )
        self._readers = [
            threading.Thread(target=self._read_stdout, name="served window stdout", daemon=True),
            threading.Thread(target=self._read_stderr, name="served window stderr", daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        try:
            self._wait_for_url()
        except BaseException:  # its failure, or Ctrl+C while it starts
            self.stop()
            raise

    def _wait_for_url(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._serving.wait(0.05):
            ended = self.process.poll() is not None
            if ended or time.monotonic() > deadline:
                self.stop()
                errors = [line.removeprefix("error: ") for line in self._held if line.startswith("error: ")]
                why = errors[-1] if errors else (self._held[-1] if self._held else f"exit {self.process.returncode}")
                raise UserError(
                    f"--serve: {why}" if ended else f"--serve: the window printed no URL in {START_TIMEOUT_S} s"
                )
        with self._lock:
            print(f"{URL_PREFIX}{self.url}", flush=True)
            for line in self._held:
                _say(line)
            self._held = None

    def stop(self) -> None:
        """SIGINT to the window (its own Ctrl+C: it closes its server and device), its exit
        awaited; killed after STOP_TIMEOUT_S, or at once on a Ctrl+C meanwhile. Its port is closed
        when this returns."""
        process = self.process
        if process is None:
            return
        self._stopping = True
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            except KeyboardInterrupt:
                process.kill()
                process.wait()
                raise
        for reader in self._readers:
            reader.join(timeout=5)

    # ---- its output, read in threads ----------------------------------------------------
    def _read_stdout(self) -> None:
        for line in self.process.stdout:
            line = line.rstrip("\n")
            if self.url is None and line.startswith(URL_PREFIX):
                self.url = line[len(URL_PREFIX) :]
                self._serving.set()
            elif line:
                _say(line, sys.stdout)

    def _read_stderr(self) -> None:
        """The window's own lines (a warning for an address others reach, an autosave, a failure)
        among the sweep's, above its progress bar; held until its URL is out."""
        for line in self.process.stderr:
            line = line.rstrip("\n")
            if not line or (self._stopping and line.startswith(STOPPED_LINES)):
                continue
            with self._lock:
                if self._held is not None:
                    self._held.append(line)
                    continue
            _say(line)
        if not self._stopping and self._held is None:
            _say(f"note: the served window ended (exit {self.process.wait()}); the sweep goes on")


def _say(line: str, file=None) -> None:
    tqdm.write(line, file=file or sys.stderr)


def _end_with_parent() -> None:
    """In the window's process before it runs (Linux): a SIGTERM when the sweep's process ends, so a
    sweep killed outright (SIGKILL) leaves no window serving (prctl's PR_SET_PDEATHSIG)."""
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGTERM)
