"""Optimizers as Python/Slang twins: each is one object here and one struct in
shaders/model/optimizers.slang. Everything else follows from the object: the --optimizer choices, the
Training panel's controls, the floats of state the trainer keeps per parameter (and a checkpoint
saves), the step's hyper-parameter values (StepArgs' optimizer.hyper) and optimizerUpdate, the
generated function that picks an optimizer's struct at run time.

The Slang struct has one float field per hyper-parameter, named as the Config field that stores
it, and a method

    float update(float param, float grad, float learningRate, uint stepNumber, inout float state[W])

that returns the new parameter, with W = state_width. Hyper-parameters are hot Config fields
(app/config/config.py), which carry their range and command-line option, gathered in the Config's
OptimizerSettings; optimizers may share one (SGD's momentum is beta1). Adding an optimizer is its
object in OPTIMIZERS, its struct, and a Config and OptimizerSettings field for each new
hyper-parameter."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

HYPER_SLOTS = 6  # hyper-parameter floats in StepArgs (OptimizerSettings.hyper)


@dataclass(frozen=True)
class OptimizerSettings:
    """The optimizer section of a Config: which optimizer, its learning rate and every
    optimizer's hyper-parameters (each optimizer reads its own)."""

    optimizer: str
    lr: float
    beta1: float
    beta2: float
    epsilon: float
    weight_decay: float


@dataclass(frozen=True)
class Hyper:
    """A hyper-parameter as an optimizer uses it: the hot Config field that stores it (its
    field's name in the Slang struct too) and how the Training panel shows it: a slider over
    `slider`, rounded to `digits` decimals, or a typed field."""

    field: str
    label: str = ""  # the panel's label; the field's name when empty
    slider: tuple[float, float] | None = None
    format: str = "%.6g"
    digits: int = 2

    @property
    def name(self) -> str:
        return self.label or self.field


@dataclass(frozen=True)
class Optimizer:
    name: str
    slang: str  # its struct in shaders/model/optimizers.slang
    state_width: int  # floats of state per parameter, the size of update()'s `state`
    hypers: tuple[Hyper, ...] = ()

    @property
    def id(self) -> int:
        """StepArgs' optimizer.kind: its place in OPTIMIZERS."""
        return list(OPTIMIZERS).index(self.name)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(h.field for h in self.hypers)

    def hyper_values(self, settings: OptimizerSettings) -> list[float]:
        """StepArgs' optimizer.hyper: its hyper-parameters in order, then zeros."""
        values = [float(getattr(settings, field)) for field in self.fields]
        return values + [0.0] * (HYPER_SLOTS - len(values))


OPTIMIZERS: dict[str, Optimizer] = {
    o.name: o
    for o in (
        Optimizer("sgd", "Sgd", 1, (Hyper("beta1", "momentum", slider=(0.0, 0.99), format="%.2f"),)),
        Optimizer("adam", "Adam", 2, (Hyper("beta1"), Hyper("beta2"), Hyper("epsilon"))),
        Optimizer(
            "adamw",
            "AdamW",
            2,
            (Hyper("beta1"), Hyper("beta2"), Hyper("epsilon"), Hyper("weight_decay", "weight decay")),
        ),
    )
}
# The trainer's state buffer holds this many floats a parameter whatever the optimizer, so that
# switching optimizers between steps needs no new buffers (nor new snapshot buffers).
STATE_WIDTH = max(o.state_width for o in OPTIMIZERS.values())

_SETTINGS_FIELDS = {field.name for field in dataclasses.fields(OptimizerSettings)}
for _optimizer in OPTIMIZERS.values():
    if len(_optimizer.hypers) > HYPER_SLOTS:
        raise ValueError(f"optimizer {_optimizer.name} has more than {HYPER_SLOTS} hyper-parameters")
    if not set(_optimizer.fields) <= _SETTINGS_FIELDS:
        raise ValueError(f"optimizer {_optimizer.name}'s hyper-parameters must be OptimizerSettings fields")


def settings(optimizer_settings: OptimizerSettings, step_number: int) -> dict:
    """OptimizerSettings as a kernel argument (the atomic reference kernel of app/bench)."""
    optimizer = OPTIMIZERS[optimizer_settings.optimizer]
    return {
        "kind": optimizer.id,
        "learningRate": optimizer_settings.lr,
        "stepNumber": step_number,
        "hyper": optimizer.hyper_values(optimizer_settings),
    }


def _case(optimizer: Optimizer) -> str:
    width = optimizer.state_width
    fields = "".join(f"\n        optimizer.{h.field} = s.hyper[{k}];" for k, h in enumerate(optimizer.hypers))
    loads = ", ".join(f"state[{k} * stride]" for k in range(width))
    stores = "".join(f"\n        state[{k} * stride] = local[{k}];" for k in range(width))
    return f"""    case OPTIMIZER_{optimizer.name.upper()}:
    {{
        {optimizer.slang} optimizer;{fields}
        float local[{width}] = {{ {loads} }};
        float updated = optimizer.update(param, grad, s.learningRate, s.stepNumber, local);{stores}
        return updated;
    }}"""


def slang_source() -> str:
    """The optimizers for a generated module: shaders/model/optimizers.slang and optimizerUpdate, which
    applies the step's optimizer to one parameter whose state is state[k * stride], k < its
    state width."""
    ids = "".join(f"static const uint OPTIMIZER_{o.name.upper()} = {o.id};\n" for o in OPTIMIZERS.values())
    cases = "\n".join(_case(o) for o in OPTIMIZERS.values())
    return f"""static const int OPTIMIZER_HYPER_SLOTS = {HYPER_SLOTS};
{ids}#include "model/optimizers.slang"

// Generated by app/model/optimizers.py: one case per optimizer.
float optimizerUpdate(OptimizerSettings s, float param, float grad, float* state, uint stride)
{{
    switch (s.kind)
    {{
{cases}
    default:
        return param;
    }}
}}"""
