"""Encodings: how a point (x, y) becomes the network's input vector, each one object owning its
settings (its Config fields, network.json entry, width, labels, numpy twin, the lines of the
generated encodeInput and its Slang for the export): the Playground's features, Fourier features
and the trained grids (hashgrid.py). Adding one: docs/extending.md, 'An encoding'."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UserError
from .features import FEATURES, Z_FEATURES
from .hashgrid import MAX_GRID_PARAMETERS, GridSettings, GridSpec, grid_units

# An encoding's setting: the feature names of a feature encoding, the Fourier frequencies K, or
# a grid's GridSpec.
Setting = tuple[str, ...] | int | GridSpec


@dataclass(frozen=True)
class EncodingSettings:
    """The encoding section of a Config (or of its Structure): which encoding, and the fields
    that each one's setting comes from."""

    encoding: str
    frequencies: int
    features: Sequence[str]
    grid: GridSettings

    @property
    def setting(self) -> Setting:
        return ENCODINGS[self.encoding].setting(self)


class Encoding(ABC):
    """How (x, y) becomes the network's input vector, given its setting; or (x, y, z), for the
    encodings of ENCODINGS_3D (encoding_for)."""

    name: str
    point = "xy"  # the point's name in the export's expressions (app/files/export_slang.py)
    fields: tuple[str, ...] = ()  # the Config fields that set it (the Network panel shows them)
    trained = False  # parameters of its own, trained with the network's (a grid's tables)

    @abstractmethod
    def setting(self, settings: EncodingSettings) -> Setting:
        """Its setting from a Config's encoding section."""

    @abstractmethod
    def entry_setting(self, entry: dict[str, Any]) -> Setting:
        """Its setting from its network.json entry (already checked by loading it as a config)."""

    @abstractmethod
    def config_fields(self, entry: dict[str, Any]) -> dict[str, Any]:
        """The Config fields its network.json entry sets (--load-network checks them)."""

    @abstractmethod
    def schema(self, setting: Setting) -> dict[str, Any]:
        """Its network.json entry."""

    @abstractmethod
    def dim(self, setting: Setting) -> int:
        """The input's width."""

    @abstractmethod
    def names(self, setting: Setting) -> list[str]:
        """One label per input (the network diagram, the neuron views)."""

    @abstractmethod
    def numpy(self, x: np.ndarray, y: np.ndarray, setting: Setting, domain=None, tables=None, z=None) -> np.ndarray:
        """(N,) x, y (and z, in 3D) -> (N, dim) in float64; a grid reads the domain and its tables."""

    @abstractmethod
    def body(self, setting: Setting) -> list[str]:
        """The lines of the generated module's encodeInput(float2 p)."""

    def expressions(self, setting: Setting) -> list[str]:
        """Each input as a standalone Slang expression of `xy`, for the export
        (app/files/export_slang.py), which cannot include shaders/. An encoding with trained tables
        has none: its export reads the tables from a file (app/files/export_grid.py)."""
        raise TypeError(f"the {self.name} encoding is exported with its tables, not as expressions")

    def header(self, setting: Setting) -> str:
        """What the generated module's header says after the encoding's name."""
        return ""


class FeatureEncoding(Encoding):
    """Feeds the network the listed features, in FEATURES' order: the config's (`features`), or a
    fixed set (poly2, raw)."""

    def __init__(self, name: str, fixed: tuple[str, ...] | None = None):
        self.name, self.fixed = name, fixed
        self.fields = () if fixed is not None else ("features",)
        if fixed is not None and "z" in fixed:
            self.point = "xyz"

    def setting(self, settings: EncodingSettings) -> tuple[str, ...]:
        return self.fixed if self.fixed is not None else tuple(settings.features)

    def entry_setting(self, entry: dict[str, Any]) -> tuple[str, ...]:
        return self.fixed if self.fixed is not None else tuple(entry.get("features", ()))

    def config_fields(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {} if self.fixed is not None else {"features": entry.get("features")}

    def schema(self, setting: tuple[str, ...]) -> dict[str, Any]:
        return {"kind": self.name} if self.fixed is not None else {"kind": self.name, "features": list(setting)}

    def dim(self, setting: tuple[str, ...]) -> int:
        return len(setting)

    def names(self, setting: tuple[str, ...]) -> list[str]:
        return [_feature(f).label for f in setting]

    def numpy(self, x, y, setting: tuple[str, ...], domain=None, tables=None, z=None) -> np.ndarray:
        return np.stack(
            [FEATURES[f].numpy(x, y) if f in FEATURES else Z_FEATURES[f].numpy(x, y, z) for f in setting], axis=1
        )

    def expressions(self, setting: tuple[str, ...]) -> list[str]:
        return [_feature(f).slang_of(self.point) for f in setting]

    def body(self, setting: tuple[str, ...]) -> list[str]:
        values = ", ".join(f"NFloat({_feature(f).slang_of('p')})" for f in setting)
        return [f"NFloat v[INPUT_DIM] = {{ {values} }};", "return MLVec<INPUT_DIM>.fromArray(v);"]

    def header(self, setting: tuple[str, ...]) -> str:
        return "" if self.fixed is not None else f" ({', '.join(setting)})"


def _feature(name: str):
    return FEATURES[name] if name in FEATURES else Z_FEATURES[name]


# shaders/model/encodings.slang's PI, in float32: the shader scales by float(1 << k) * PI
FOURIER_PI = np.float32(3.14159265358979)


class FourierEncoding(Encoding):
    """x and y, then sin and cos of 2^k pi x and 2^k pi y for k < K (shaders/model/encodings.slang);
    in 3D x, y and z, then sin and cos of each coordinate's 2^k pi multiple."""

    name = "fourier"
    fields = ("frequencies",)

    def __init__(self, dims: int = 2):
        self.axes = "xyz"[:dims]
        self.point = "xy" if dims == 2 else "xyz"

    def setting(self, settings: EncodingSettings) -> int:
        return settings.frequencies

    def entry_setting(self, entry: dict[str, Any]) -> int:
        return int(entry.get("frequencies", 0))

    def config_fields(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {"frequencies": entry.get("frequencies")}

    def schema(self, frequencies: int) -> dict[str, Any]:
        return {"kind": self.name, "frequencies": frequencies}

    def dim(self, frequencies: int) -> int:
        return len(self.axes) * (1 + 2 * frequencies)

    def names(self, frequencies: int) -> list[str]:
        names = list(self.axes)
        for k in range(frequencies):
            names += [f"{f} {2**k}π{a}" for a in self.axes for f in ("sin", "cos")]
        return names

    def numpy(self, x, y, frequencies: int, domain=None, tables=None, z=None) -> np.ndarray:
        axes = [x, y, z][: len(self.axes)]
        columns = list(axes)
        for k in range(frequencies):
            scale = (2.0**k) * np.pi
            columns += [f(scale * a) for a in axes for f in (np.sin, np.cos)]
        return np.stack(columns, axis=1)

    def expressions(self, frequencies: int) -> list[str]:
        terms = [f"{self.point}.{a}" for a in self.axes]
        for k in range(frequencies):
            scale = repr(float(np.float32(2.0**k) * FOURIER_PI))  # exact: a power of two times a float
            terms += [f"{f}({scale} * {self.point}.{a})" for a in self.axes for f in ("sin", "cos")]
        return terms

    def body(self, frequencies: int) -> list[str]:
        return [f"return encodeFourier{'' if len(self.axes) == 2 else '3'}<INPUT_DIM>(p);"]

    def header(self, frequencies: int) -> str:
        return f" ({frequencies} frequencies)"


# A grid's Config fields and the names its network.json entry gives them
GRID_ENTRY_NAMES = {
    "grid_levels": "levels",
    "grid_features": "features",
    "grid_log2_size": "log2_table_size",
    "grid_base_resolution": "base_resolution",
    "grid_level_scale": "per_level_scale",
}


class GridEncoding(Encoding):
    """A multiresolution grid (app/model/hashgrid.py, shaders/model/hashgrid.slang): its setting is the
    GridSpec, and its tables follow the MLP's parameters. Its standalone Slang for the export is
    app/files/export_grid.py's, which binds the tables from a file."""

    fields = tuple(GRID_ENTRY_NAMES)
    trained = True

    def __init__(self, name: str, hashed: bool, dims: int = 2):
        self.name, self.hashed, self.dims = name, hashed, dims

    def setting(self, settings: EncodingSettings) -> GridSpec:
        return settings.grid.spec(self.hashed, self.dims)

    def entry_setting(self, entry: dict[str, Any]) -> GridSpec:
        return GridSpec(
            levels=entry["levels"],
            features=entry["features"],
            log2_size=entry["log2_table_size"],
            base_resolution=entry["base_resolution"],
            per_level_scale=float(entry["per_level_scale"]),
            hashed=self.hashed,
            dims=self.dims,
        )

    def config_fields(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {field: entry.get(key) for field, key in GRID_ENTRY_NAMES.items()}

    def schema(self, spec: GridSpec) -> dict[str, Any]:
        return spec.schema(self.name)

    def dim(self, spec: GridSpec) -> int:
        return spec.dim

    def names(self, spec: GridSpec) -> list[str]:
        return spec.names()

    def numpy(self, x, y, spec: GridSpec, domain=None, tables=None, z=None) -> np.ndarray:
        """In 3D the domain is the box [x0, x1, y0, y1, z0, z1] the grid spans (z0, z1: z_range)."""
        return spec.encode(grid_units(domain, x, y, z), tables)

    def body(self, spec: GridSpec) -> list[str]:
        return ["return encodeGrid(p);"]

    def header(self, spec: GridSpec) -> str:
        return f" ({spec.levels} levels of {spec.features}, {spec.param_count} table values)"


POLY2_FEATURES = ("x", "y", "x2", "y2")  # the tutorial's encoding
ENCODINGS: dict[str, Encoding] = {
    e.name: e
    for e in (
        FeatureEncoding("poly2", POLY2_FEATURES),
        FeatureEncoding("raw", ("x", "y")),
        FourierEncoding(),
        FeatureEncoding("features"),
        GridEncoding("hashgrid", hashed=True),
        GridEncoding("densegrid", hashed=False),
    )
}


# The encodings of functions of (x, y, z) (--dims 3), by name: each one's 3D twin.
ENCODINGS_3D: dict[str, Encoding] = {
    e.name: e
    for e in (
        FeatureEncoding("poly2", ("x", "y", "z", "x2", "y2", "z2")),
        FeatureEncoding("raw", ("x", "y", "z")),
        FourierEncoding(dims=3),
        GridEncoding("hashgrid", hashed=True, dims=3),
        GridEncoding("densegrid", hashed=False, dims=3),
    )
}


def encoding_for(name: str, dims: int) -> Encoding:
    """The encoding named `name` of points of `dims` coordinates (app/truth/space.py refuses the
    ones that have no 3D twin)."""
    return ENCODINGS[name] if dims == 2 else ENCODINGS_3D[name]


def playground_features(settings: EncodingSettings) -> list[str] | None:
    """The Playground features that an encoding feeds the network (poly2: x, y, x2, y2), or None
    where its inputs are no such features (Fourier's sines of 2^k pi x, a grid's tables)."""
    return list(settings.setting) if isinstance(ENCODINGS[settings.encoding], FeatureEncoding) else None


def grid_spec(settings: EncodingSettings, dims: int = 2) -> GridSpec | None:
    """The grid of a grid encoding of points of `dims` coordinates, else None (also for an
    encoding with no 3D twin: app/truth/space.py refuses it)."""
    encoding = ENCODINGS[settings.encoding] if dims == 2 else ENCODINGS_3D.get(settings.encoding)
    return encoding.setting(settings) if encoding is not None and encoding.trained else None


def check_size(settings: EncodingSettings, dims: int = 2) -> None:
    """A grid whose tables would be too large is a UserError naming its size."""
    spec = grid_spec(settings, dims)
    if spec is not None and spec.param_count > MAX_GRID_PARAMETERS:
        raise UserError(
            f"the {settings.encoding} would hold {spec.param_count:,} table values, more than "
            f"{MAX_GRID_PARAMETERS:,}: use fewer levels or features, a smaller table or per-level scale"
        )
