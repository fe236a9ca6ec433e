"""Frames from the GPU to JPEG (libjpeg-turbo through simplejpeg) in a thread of its own, so that
encoding runs beside the next frame's training. Only the newest frame waits to be encoded, and one
whose pixels equal the last one sent is not sent: a paused, idle window sends nothing."""

from __future__ import annotations

import threading

import numpy as np
import simplejpeg

from .hub import Hub

QUALITY = 85  # docs/benchmarks.md, 'Frames to the browser': sharp text, a frame under ~200 kB at 1280x800


class FrameEncoder:
    def __init__(self, hub: Hub, quality: int = QUALITY):
        self.hub, self.quality = hub, quality
        self._waiting: np.ndarray | None = None
        self._last: np.ndarray | None = None
        self._ready = threading.Condition()
        self._stopped = False
        self.encoded = 0  # frames sent
        self.unchanged = 0  # frames skipped as equal to the last one sent
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
            self._last = None

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
                last = self._last
            if last is not None and last.shape == pixels.shape and np.array_equal(last, pixels):
                self.unchanged += 1
                continue
            data = simplejpeg.encode_jpeg(pixels, quality=self.quality, colorspace="RGBA", colorsubsampling="444")
            with self._ready:
                self._last = pixels
            self.hub.publish(data, pixels.shape[1], pixels.shape[0])
            self.encoded += 1
