"""A Slang struct's layout as a numpy structured dtype, read from SlangPy's reflection of a
compiled module. The host fills records that kernels read through a pointer (StepArgs,
shaders/common/step_args.slang): their layout is the struct's alone, not a second table kept in step by
hand. Field names become snake_case (sampleEnd: sample_end); a nested struct becomes a nested
dtype, an array a subarray, a pointer its 8-byte address."""

from __future__ import annotations

import re

import numpy as np
import slangpy as spy

Kind = spy.TypeReflection.Kind
Scalar = spy.TypeReflection.ScalarType
SCALARS = {
    Scalar.float16: "<f2",
    Scalar.float32: "<f4",
    Scalar.float64: "<f8",
    Scalar.int32: "<i4",
    Scalar.uint32: "<u4",
    Scalar.int64: "<i8",
    Scalar.uint64: "<u8",
}


def snake_case(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def struct_dtype(module: spy.SlangModule, name: str) -> np.dtype:
    """The dtype of struct `name` as `module` lays it out."""
    layout = module.layout.find_type_by_name(name)
    if layout is None:
        raise ValueError(f"the module defines no struct {name}")
    return _struct(module.layout.get_type_layout(layout))


def _struct(layout: spy.TypeLayoutReflection) -> np.dtype:
    fields = list(layout.fields)
    return np.dtype(
        {
            "names": [snake_case(f.name) for f in fields],
            "formats": [_format(f.type_layout) for f in fields],
            "offsets": [f.offset for f in fields],
            "itemsize": layout.size,
        }
    )


def _format(layout: spy.TypeLayoutReflection):
    kind = layout.kind
    if kind == Kind.pointer:
        return "<u8"
    if kind == Kind.scalar:
        return SCALARS[layout.type.scalar_type]
    if kind == Kind.array:
        return (_format(layout.element_type_layout), (layout.type.element_count,))
    if kind == Kind.struct:
        return _struct(layout)
    raise TypeError(f"no numpy layout for a {kind} field")
