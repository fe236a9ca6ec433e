"""Frames from the GPU to JPEG (libjpeg-turbo through simplejpeg) in a thread of its own, so that
encoding runs beside the next frame's training. Only the newest frame waits to be encoded, and one
that encodes to the bytes last sent (the same pixels) is not sent: a paused, idle window sends nothing."""

from __future__ import annotations

import threading
import time

import numpy as np
import simplejpeg

from .hub import Hub

QUALITY = 85  # the codecs and qualities measured: docs/benchmarks.md, 'Frames to the browser'


class FrameEncoder:
    def __init__(self, hub: Hub, quality: int = QUALITY):
        self.hub, self.quality = hub, quality
        self._waiting: np.ndarray | None = None
        self._last: np.ndarray | None = None  # the pixels of the last frame sent
        self._last_data: bytes | None = None  # and their JPEG
        self._ready = threading.Condition()
        self._stopped = False
        self.encoded = 0  # frames sent
        self.unchanged = 0  # frames skipped as equal to the last one sent
        self.encode_seconds = 0.0  # spent in the codec, all frames sent together (app/bench/serve.py)
        self._thread = threading.Thread(target=self._run, name="frame encoder", daemon=True)
        self._thread.start()

    def submit(self, pixels: np.ndarray) -> None:
        """`pixels`: RGBA, height x width x 4, uint8; replaces a frame still waiting."""
        with self._ready:
            self._waiting = pixels
            self._ready.notify()

    def resend(self) -> None:
        """The next frame goes out even if unchanged (a viewer joined, the size changed)."""
        with self._ready:
            self._last_data = None

    @property
    def last_sent(self) -> np.ndarray | None:
        """The pixels of the last frame sent (the benchmark's codec figures use real frames)."""
        with self._ready:
            return self._last

    def stop(self) -> None:
        with self._ready:
            self._stopped = True
            self._ready.notify()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._ready:
                while self._waiting is None and not self._stopped:
                    self._ready.wait()
                if self._stopped:
                    return
                pixels, self._waiting = self._waiting, None
                last = self._last_data
            began = time.perf_counter()
            data = simplejpeg.encode_jpeg(pixels, quality=self.quality, colorspace="RGBA", colorsubsampling="444")
            self.encode_seconds += time.perf_counter() - began
            # The same pixels encode to the same bytes: comparing those holds the GIL a tenth as long
            # as comparing the pixels did (docs/benchmarks.md, 'Frames to the browser').
            if data == last:
                self.unchanged += 1
                continue
            with self._ready:
                self._last, self._last_data = pixels, data
            self.hub.publish(data, pixels.shape[1], pixels.shape[0])
            self.encoded += 1
