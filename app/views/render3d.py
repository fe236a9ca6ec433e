"""The 3D view's pictures: the learned surface (a network output's zero set) and the truth's, sphere
traced (shaders/views/render3d.slang) from one orbit camera into an atlas, learned | truth. A pass
renders into the atlas not shown, whole or in ranges of pixels over frames, on a copy of the weights
taken when it began, and is shown once complete; the truth is rendered again only for a new view."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import slangpy as spy

from ..kernels.surface_constants import PARTS
from ..train.trainer import Trainer
from .orbit_camera import FOV, OrbitCamera
from .slices import box

LEARNED, TRUTH = range(len(PARTS))
MAX_DISPATCH_PIXELS = 1 << 21  # 32,768 workgroups of 64


@dataclass(frozen=True)
class RenderView:
    """What a picture shows: from where, at how many pixels a side, and which output's zero set."""

    camera: OrbitCamera = field(default_factory=OrbitCamera)
    side: int = 256
    output: int = 0


@dataclass
class _Atlas:
    texture: spy.Texture
    depths: spy.Buffer  # the learned pixels' depths, then the truth's
    learned: tuple | None = None  # what its halves hold: (weights version, view, box)...
    truth: tuple | None = None  # ...and (view, box)


class SurfaceRender:
    def __init__(self, trainer: Trainer, most_side: int):
        self.trainer, self.most_side = trainer, most_side
        self.kernel = trainer.kernels.render_surface
        device, gpu = trainer.gpu.device, trainer.gpu
        usage = spy.TextureUsage.unordered_access | spy.TextureUsage.shader_resource | spy.TextureUsage.copy_source
        usage |= spy.TextureUsage.copy_destination
        self._atlases = [
            _Atlas(
                device.create_texture(
                    format=spy.Format.rgba16_float, width=2 * most_side, height=most_side, usage=usage
                ),
                gpu.buffer(2 * most_side * most_side * 4),
            )
            for _ in range(2)
        ]
        self.weights = gpu.buffer(trainer.weights.size)
        self._shown = 0  # the atlas with the last complete pass (the UI draws it)
        self.wanted = RenderView(side=min(RenderView().side, most_side))
        self.progress = 0  # pixels of the pass in progress done
        self.passes = 0
        self._pass: tuple = ()  # the pass in progress: (view, its keys, its parts)
        # Timestamps around each part's dispatches of the last range; seconds a pixel, by part
        self._timer = (
            device.create_query_pool(type=spy.QueryType.timestamp, count=2 * len(PARTS)) if _timed(device) else None
        )
        self._timed: dict[int, int] = {}  # the parts' pixels the last range recorded, not read yet
        self.seconds_per_pixel: dict[int, float] = {}
        # Builds the pipeline now, by a dispatch that renders nothing: a CPU driver builds it when
        # it first runs, which would count as the first range's time
        with trainer.gpu.submit() as encoder:
            self._dispatch(encoder, self._atlases[0], self.wanted, LEARNED, 0, 0)

    # ---- what is shown -------------------------------------------------------------------
    @property
    def shown(self) -> _Atlas:
        return self._atlases[self._shown]

    @property
    def texture(self) -> spy.Texture:
        return self.shown.texture

    @property
    def shown_view(self) -> RenderView | None:
        """The view the shown atlas was rendered for (None before the first pass)."""
        return None if self.shown.learned is None else self.shown.learned[1]

    def _box(self) -> tuple:
        config = self.trainer.config
        return (*config.domain, *config.z_range)

    def _keys(self, view: RenderView) -> tuple[tuple, tuple]:
        return (self.trainer.version, view, self._box()), (view, self._box())

    def stale(self) -> bool:
        """Whether there is work to do: a pass in progress, or a view or weights not shown yet."""
        learned, truth = self._keys(self.wanted)
        return self.progress > 0 or self.shown.learned != learned or self.shown.truth != truth

    def can_start(self) -> bool:
        """A pass starts only where the weights are one step's (as GridEvaluator's)."""
        return self.progress > 0 or not self.trainer.progress.updating

    # ---- passes --------------------------------------------------------------------------
    @property
    def drawing(self) -> RenderView | None:
        """The view of the pass in progress, if one is."""
        return self._pass[0] if self.progress else None

    @property
    def units(self) -> int:
        """Pixels of the pass in progress (or of one that would start now)."""
        if self.progress:
            view, _, parts = self._pass
            return len(parts) * view.side**2
        return 2 * self.wanted.side**2

    def record(self, encoder: spy.CommandEncoder, pixels: int | None = None) -> bool:
        """Records the next `pixels` pixels of the pass (all the rest when None); True when this
        completes it and it is shown (its commands run before anything later draws it)."""
        self.take_timing()
        if self.progress and self._pass[0] != self.wanted and self.wanted.side < self._pass[0].side:
            self.progress = 0  # a drag began: its coarser view goes first
        if self.progress == 0:
            self._start(encoder)
        view, keys, parts = self._pass
        back, per_part = self._atlases[1 - self._shown], view.side**2
        total = len(parts) * per_part
        count = total - self.progress if pixels is None else max(1, min(pixels, total - self.progress))
        start, end = self.progress, self.progress + count
        if self._timer is not None:
            self._timer.reset()
        for index, part in enumerate(parts):
            first, last = max(start, index * per_part), min(end, (index + 1) * per_part)
            if first < last:
                self._mark(encoder, 2 * part)
                self._dispatch(encoder, back, view, part, first - index * per_part, last - first)
                self._mark(encoder, 2 * part + 1)
                self._timed[part] = last - first
        self.progress = end
        if end < total:
            return False
        back.learned, back.truth = keys
        self._shown, self.progress, self.passes = 1 - self._shown, 0, self.passes + 1
        return True

    def _mark(self, encoder: spy.CommandEncoder, index: int) -> None:
        if self._timer is not None:
            encoder.write_timestamp(self._timer, index)

    def _remaining(self) -> list[tuple[int, int]]:
        """(part, pixels) still to render of the pass in progress, or of the next (its truth may yet
        be copied rather than rendered)."""
        if self.progress:
            view, _, parts = self._pass
        else:
            view, parts = self.wanted, (LEARNED, TRUTH)
        per_part, remaining = view.side**2, []
        for k, part in enumerate(parts):
            left = min(per_part, (k + 1) * per_part - self.progress)
            if left > 0:
                remaining.append((part, left))
        return remaining

    def pixels_within(self, seconds: float, guess: dict[int, float]) -> int:
        """How many pixels of the pass in progress (or of the next) take about `seconds` of GPU
        time, at the parts' measured rates, else at `guess` (seconds a pixel, by part)."""
        count = 0
        for part, pixels in self._remaining():
            rate = self.seconds_per_pixel.get(part, guess[part])
            take = min(pixels, int(seconds / rate))
            count, seconds = count + take, seconds - take * rate
            if take < pixels:
                break  # the seconds ran out within this part
        return max(count, 1)

    def seconds_left(self) -> float | None:
        """GPU seconds the rest of the pass in progress (or the next) takes at the measured rates;
        None before the learned picture's rate is measured."""
        if LEARNED not in self.seconds_per_pixel:
            return None
        rates = self.seconds_per_pixel
        return sum(pixels * rates.get(part, rates[LEARNED]) for part, pixels in self._remaining())

    def _start(self, encoder: spy.CommandEncoder) -> None:
        """A pass of the wanted view on the weights as they are now; the truth's half is copied from
        the shown atlas where that holds the view's, else rendered too."""
        view, t = self.wanted, self.trainer
        keys = self._keys(view)
        back, shown = self._atlases[1 - self._shown], self.shown
        encoder.global_barrier()
        encoder.copy_buffer(self.weights, 0, t.weights, 0, t.weights.size)
        encoder.global_barrier()
        parts = (LEARNED,)
        if back.truth != keys[1]:
            if shown.truth == keys[1]:
                area = view.side**2
                region = spy.uint3(view.side, 0, 0)
                encoder.copy_texture(
                    back.texture, 0, 0, region, shown.texture, 0, 0, region, spy.uint3(view.side, view.side, 1)
                )
                encoder.copy_buffer(back.depths, area * 4, shown.depths, area * 4, area * 4)
                back.truth = keys[1]
            else:
                parts, back.truth = (LEARNED, TRUTH), None
        back.learned = None  # until the pass completes (a pass dropped midway leaves a half drawn)
        self._pass = (view, keys, parts)

    def _dispatch(self, encoder, atlas: _Atlas, view: RenderView, part: int, first: int, count: int) -> None:
        """Pixels [first, first + count) of one part's picture, in dispatches of at most
        MAX_DISPATCH_PIXELS (a dispatch takes at most 65,535 workgroups)."""
        t, side = self.trainer, view.side
        eye, target, up = view.camera.pose(box(t.config.domain, t.config.z_range))
        for start in range(first, first + max(count, 1), MAX_DISPATCH_PIXELS):
            size = min(MAX_DISPATCH_PIXELS, first + count - start)
            self.kernel.dispatch(
                [max(size, 1), 1, 1],
                command_encoder=encoder,
                weights=self.weights.device_address,
                truthPixels=t.truth_pixels.device_address,
                depths=atlas.depths.device_address + part * side * side * 4,
                image=atlas.texture,
                origin=spy.uint2(part * side, 0),
                size=spy.uint2(side, side),
                rowStride=row_stride(side),
                eye=spy.float3(*eye),
                target=spy.float3(*target),
                up=spy.float3(*up),
                fovY=float(np.radians(FOV)),
                domain=spy.float4(*t.config.domain),
                depthRange=spy.float2(*t.config.z_range),
                part=part,
                output=view.output,
                pixelOffset=start,
                pixelEnd=start + max(size, 0),
            )
        encoder.global_barrier()

    def take_timing(self) -> None:
        """Once the last recorded range has run: each part's GPU seconds a pixel, into its rate. A
        range takes rows from all over the picture (renderSurface's rowStride), so its rate is the
        whole picture's; the truth's formula may cost far less than the network."""
        timed, self._timed = self._timed, {}
        if not timed or self._timer is None:
            return
        for part, pixels in timed.items():
            begin, end = self._timer.get_timestamp_results(2 * part, 2)  # only what the range wrote
            sample = max(end - begin, 0.0) / pixels
            rate = self.seconds_per_pixel.get(part)
            if sample > 0:  # halfway in ratio: a range that built the pipeline is soon forgotten
                self.seconds_per_pixel[part] = sample if rate is None else math.sqrt(rate * sample)

    # ---- now, whole (tests, screenshots) -------------------------------------------------
    def render(self, view: RenderView) -> None:
        """A whole pass of `view` of the current weights, now; shown once it returns."""
        self.wanted, self.progress = view, 0
        with self.trainer.gpu.submit() as encoder:
            self.record(encoder)

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """The shown pass: its pictures (2, side, side, 4: learned, truth; linear RGBA, row 0 at
        the top) and depths (2, side, side: along each unit ray from the eye, -1 where it
        misses, NaN where the field is not finite)."""
        side = self.shown_view.side
        gpu = self.trainer.gpu
        depths = gpu.read(self.shown.depths, 2 * side * side).reshape(2, side, side)
        gpu.device.wait()
        pixels = self.texture.to_numpy()[:side, : 2 * side].astype(np.float32)
        pictures = np.stack([pixels[:, :side], pixels[:, side : 2 * side]])
        return pictures, depths


def row_stride(side: int) -> int:
    """renderSurface's step between the rows a range takes: prime to `side`, near its golden section."""
    stride = max(1, round(0.618 * side))
    while math.gcd(stride, side) != 1:
        stride += 1
    return stride


def _timed(device: spy.Device) -> bool:
    return device.has_feature(spy.Feature.timestamp_query) and device.info.timestamp_frequency > 0
