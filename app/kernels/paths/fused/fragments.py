"""Where NVIDIA's tensor cores hold each element of a 16x16 tile among a subgroup's 32 lanes (lane *
8 + component), as mma.sync's m16n8k16 fragments do. The fused trainer relies on it twice: its
weight copies are stored in the B operands' order (layout.py), and on CUDA its loads and stores
move each lane's own elements (fused_registers.slang). app/gpu/gpu.py checks the device holds its
tiles so (fragment_probe.slang) before a plan relies on either."""

from __future__ import annotations

from pathlib import Path

# The kernel that reports where a device holds each element (app/gpu/gpu.py: fused_fragments)
FRAGMENT_PROBE = Path(__file__).with_name("fragment_probe.slang")


def fragment_slot(k, n):
    """Where element (k, n) of a 16x16 half B operand sits in a tile stored fragment-native:
    lane * 8 + component, as NVIDIA's cooperative matrices hold it (lane (n % 8) * 4 + (k % 8) / 2;
    components k % 2, + 2 for k >= 8, + 4 for n >= 8). A lane then reads its whole operand in one
    16-byte load. app/gpu/gpu.py checks the device holds B operands so before a plan relies on it.
    Works on ints and on numpy arrays."""
    lane = (n % 8) * 4 + (k % 8) // 2
    return lane * 8 + k % 2 + 2 * (k // 8) + 4 * (n // 8)


def operand_slot(r, c):
    """Where element (r, c) of a 16x16 A operand or accumulator sits, as lane * 8 + component: as
    mma.sync's m16n8k16 fragments hold them, and SlangPy's CUDA cooperative matrices with them (lane
    (r % 8) * 4 + (c % 8) / 2; components c % 2, + 2 for r >= 8, + 4 for c >= 8).
    fused_registers.slang reads and writes them there on CUDA; app/gpu/gpu.py checks the
    device first. Works on ints and on numpy arrays."""
    lane = (r % 8) * 4 + (c % 8) // 2
    return lane * 8 + c % 2 + 2 * (r // 8) + 4 * (c // 8)
