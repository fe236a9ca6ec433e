"""The one loop over a plan's layers that every generated chain of per-layer Slang is printed
from: the Network struct, the differentiable and neuron-storing chains, and the workgroup-tile
kernel's forward pass, backward pass and gradient accumulators. Plus the indentation helper
that keeps the printed module readable."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the plan's types only: this module stays below app.kernels.plan in the import chain
    from ..plan import LayerPlan, NetworkPlan


@dataclass(frozen=True)
class LayerStep:
    """Layer `k` of a plan as the generated Slang names it."""

    k: int
    layer: LayerPlan
    count: int  # the plan's number of layers

    @property
    def last(self) -> bool:
        return self.k == self.count - 1

    @property
    def activation(self) -> str:
        """The typealias the module defines for this layer's activation."""
        return "OutputActivation" if self.last else "HiddenActivation"

    @property
    def source(self) -> str:
        """The variable holding the layer's input: the encoded input x, then h0, h1, ..."""
        return "x" if self.k == 0 else f"h{self.k - 1}"

    @property
    def result(self) -> str:
        return f"h{self.k}"

    @property
    def sizes(self) -> str:
        """`In, Out`: the first template arguments of every layer function."""
        return f"{self.layer.fan_in}, {self.layer.fan_out}"

    @property
    def block(self) -> int:
        """Backward passes over tiles: shared-memory gradient blocks 0 and 1 take turns holding
        dZ and dH, the output layer's dZ in block 0."""
        return (self.count - 1 - self.k) % 2


def layer_steps(plan: NetworkPlan, backward: bool = False) -> list[LayerStep]:
    """Every layer of `plan`, first to last, or last to first with `backward`."""
    steps = [LayerStep(k, layer, len(plan.layers)) for k, layer in enumerate(plan.layers)]
    return steps[::-1] if backward else steps


def layer_lines(
    plan: NetworkPlan, line: Callable[[LayerStep], str | Sequence[str]], backward: bool = False
) -> list[str]:
    """The lines `line` prints for each layer (one, or several), in layer order or backward."""
    lines: list[str] = []
    for step in layer_steps(plan, backward):
        printed = line(step)
        lines += [printed] if isinstance(printed, str) else list(printed)
    return lines


def indent(lines: Sequence[str], depth: int) -> str:
    """`lines` as one block, each indented by `depth` levels of four spaces."""
    return "\n".join(f"{'    ' * depth}{line}" if line else "" for line in lines)


def inlined(comment: str, signature: str, lines: Sequence[str]) -> str:
    """A helper of a kernel written in .slang, printed for one network: its lines are the kernel's
    own, unrolled by layer, so it is inlined where the kernel calls it."""
    body = indent(lines, 1)
    return f"// {comment}\n[ForceInline]\n{signature}\n{{\n{body}{chr(10) if body else ''}}}"
