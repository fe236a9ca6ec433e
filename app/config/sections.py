"""A Config's sections, each a frozen dataclass beside the component it configures, built from the
table's fields of the same names: a section's fields are the Config's, never a copy kept by hand.
A section inside another reads the fields named after it: the encoding's `grid`, GridSettings,
takes `levels` from grid_levels."""

from __future__ import annotations

import dataclasses
import functools
import typing
from typing import Any, Generic, TypeVar

S = TypeVar("S")


@functools.cache
def _parts(cls: type) -> tuple[tuple[str, type | None], ...]:
    """Each field of section `cls`, with its class where that field is a section in turn."""
    hints = typing.get_type_hints(cls)
    return tuple(
        (field.name, hints[field.name] if dataclasses.is_dataclass(hints[field.name]) else None)
        for field in dataclasses.fields(cls)
    )


def section_of(cls: type[S], record: Any, prefix: str = "") -> S:
    """Section `cls` of `record`, a Config or a Structure: each field is the record's own."""
    return cls(
        **{
            name: section_of(part, record, f"{prefix}{name}_") if part else getattr(record, prefix + name)
            for name, part in _parts(cls)
        }
    )


def field_names(cls: type, prefix: str = "") -> tuple[str, ...]:
    """The record's fields that section `cls` is built from, in the section's order."""
    names: list[str] = []
    for name, part in _parts(cls):
        names += field_names(part, f"{prefix}{name}_") if part else [prefix + name]
    return tuple(names)


class Section(Generic[S]):
    """A record's section as its attribute (`config.loss_settings`), built on each read: the
    record is frozen, and the section is a few fields."""

    def __init__(self, cls: type[S]) -> None:
        self.cls = cls

    def __get__(self, record: Any, owner: type | None = None) -> S:
        if record is None:  # on the class: the descriptor itself
            return self  # type: ignore[return-value]
        return section_of(self.cls, record)
