"""Which adapter (GPU) the device is made on: the one --gpu names, else the first GPU of
CUDA_VISIBLE_DEVICES, as Ray sets it for a trial; Vulkan ignores that variable, so the app matches
the adapter itself (docs/guide/headless.md, 'Several GPUs'). The functions are pure, taking the
adapter list, the variable and nvidia-smi's table, so tests give fake ones; read_nvidia_smi alone
runs a program. Imports: errors."""

from __future__ import annotations

import shutil
import string
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import UserError

VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
# Fewer hex digits of a UUID could match an adapter by chance; 8 are nvidia-smi's first group.
MIN_UUID_DIGITS = 8
NVIDIA_SMI_QUERY = ["--query-gpu=index,uuid", "--format=csv,noheader"]
NVIDIA_SMI_SECONDS = 30  # it answers in well under a second; a hung driver must not hang the app


@dataclass(frozen=True)
class Adapter:
    index: int  # its position in SlangPy's enumerate_adapters for the device type in use
    name: str
    uuid: str  # its LUID as SlangPy reports it, as lowercase hex (16 bytes: 32 digits)

    def to_dict(self) -> dict:
        return {"index": self.index, "name": self.name, "uuid": self.uuid}

    def text(self) -> str:
        return f"{self.index}: {self.name}, UUID {self.uuid}"

    @property
    def gpu_uuid(self) -> str | None:
        """The UUID as nvidia-smi prints one (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx); None where
        the identifier is printable text, as a CPU driver's is (lavapipe's reads "mesa25.0.7-...")."""
        raw = bytes.fromhex(self.uuid)
        if all(32 <= byte < 127 or byte == 0 for byte in raw):
            return None
        if len(raw) != 16:  # a LUID of another length: its hex as it is
            return self.uuid
        digits = self.uuid
        return f"GPU-{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"

    def label(self) -> str:
        """Its name, with its UUID where it has one: what tells a run's GPU apart in a table."""
        uuid = self.gpu_uuid
        return self.name if uuid is None else f"{self.name} ({uuid})"


def adapters_from(infos: Sequence) -> list[Adapter]:
    """SlangPy's AdapterInfo list (each with .name and .luid, a list of byte values) as Adapters."""
    return [Adapter(index, info.name, bytes(info.luid).hex()) for index, info in enumerate(infos)]


def uuid_digits(text: str) -> str | None:
    """The hex digits of a GPU UUID typed as nvidia-smi prints it (GPU-xxxxxxxx-xxxx-...) or as
    plain hex, dashes allowed; None where `text` is not one of at least MIN_UUID_DIGITS digits."""
    digits = text.strip()
    if digits[:4].lower() == "gpu-":
        digits = digits[4:]
    digits = digits.replace("-", "").lower()
    if len(digits) < MIN_UUID_DIGITS or any(c not in string.hexdigits for c in digits):
        return None
    return digits


def parse_gpu_option(text: str) -> int | str:
    """--gpu's value: an adapter index (digits, fewer than MIN_UUID_DIGITS of them, so that a
    UUID of decimal digits alone still reads as a UUID), else a UUID's hex digits."""
    text = text.strip()
    if text.isdigit() and len(text) < MIN_UUID_DIGITS:
        return int(text)
    digits = uuid_digits(text)
    if digits is None:
        raise UserError(
            f"--gpu takes an adapter index or a GPU UUID (GPU-xxxxxxxx-..., or at least "
            f"{MIN_UUID_DIGITS} hex digits), not {text!r}"
        )
    return digits


def listing(adapters: Sequence[Adapter], device_type: str) -> str:
    """Every adapter on one line, for a message that found none to take."""
    if not adapters:
        return f"SlangPy lists no {_of(device_type)}adapter"
    return f"the {_of(device_type)}adapters are " + "; ".join(adapter.text() for adapter in adapters)


def _of(device_type: str) -> str:
    """The device type as a message names its adapters ("auto" names no API)."""
    return "" if device_type == "auto" else f"{device_type} "


def by_index(adapters: Sequence[Adapter], index: int, asked: str, device_type: str) -> Adapter:
    if not 0 <= index < len(adapters):
        raise UserError(f"{asked}: there is no {_of(device_type)}adapter {index}; {listing(adapters, device_type)}")
    return adapters[index]


def by_uuid(adapters: Sequence[Adapter], digits: str, asked: str, device_type: str) -> Adapter:
    """The one adapter whose UUID and `digits` agree as far as the shorter of the two goes. Where a
    Vulkan driver gives no LUID (NVIDIA's on Linux), slang-rhi reports the adapter's deviceUUID in
    its place, which begins with the GPU's UUID as nvidia-smi prints it: hence a prefix."""
    found = [adapter for adapter in adapters if _same_prefix(adapter.uuid, digits)]
    if not found:
        raise UserError(f"{asked}: no {_of(device_type)}adapter has this UUID; {listing(adapters, device_type)}")
    if len(found) > 1:
        raise UserError(
            f"{asked} begins the UUIDs of {len(found)} {_of(device_type)}adapters "
            f"({'; '.join(adapter.text() for adapter in found)}): give more of its digits"
        )
    return found[0]


def _same_prefix(uuid: str, digits: str) -> bool:
    shorter = min(len(uuid), len(digits))
    return uuid[:shorter] == digits[:shorter]


def first_visible_device(value: str | None) -> str | None:
    """CUDA_VISIBLE_DEVICES's first entry; None where it is unset or empty (Ray gives trials that
    asked for no GPU an empty value: they are no constraint here, lavapipe being no CUDA device)."""
    if value is None or not value.strip():
        return None
    return value.split(",")[0].strip()


def parse_nvidia_smi(text: str) -> dict[int, str]:
    """`nvidia-smi --query-gpu=index,uuid --format=csv,noheader`'s lines, "0, GPU-...", as a table."""
    table = {}
    for line in text.splitlines():
        index, _, uuid = line.partition(",")
        if index.strip().isdigit() and uuid.strip():
            table[int(index)] = uuid.strip()
    return table


def read_nvidia_smi() -> dict[int, str] | None:
    """nvidia-smi's GPU indices and UUIDs; None where it is not installed or does not answer. It
    lists every GPU whatever CUDA_VISIBLE_DEVICES says (it reads NVML, which ignores it)."""
    program = shutil.which("nvidia-smi")
    if program is None:
        return None
    try:
        done = subprocess.run(
            [program, *NVIDIA_SMI_QUERY], capture_output=True, text=True, timeout=NVIDIA_SMI_SECONDS, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_nvidia_smi(done.stdout) or None


def choose_adapter(
    adapters: Sequence[Adapter],
    device_type: str,
    gpu_option: str | None,
    visible: str | None,
    nvidia_smi: Callable[[], dict[int, str] | None],
) -> Adapter | None:
    """The adapter to make a device of `device_type` on; None: no constraint, SlangPy picks.

    `gpu_option` is --gpu as typed (it wins); `visible` is CUDA_VISIBLE_DEVICES's value (None if
    unset), whose first entry is the GPU a CUDA program of the process would take. CUDA applies
    the variable itself, so on the CUDA device type it is not applied again (--gpu then indexes
    the adapters CUDA shows). `nvidia_smi` gives read_nvidia_smi's table; it is called only for
    an index in the variable, so that a run never waits on nvidia-smi for nothing."""
    if gpu_option is not None:
        choice = parse_gpu_option(gpu_option)
        asked = f"--gpu {gpu_option.strip()}"
        if isinstance(choice, int):
            return by_index(adapters, choice, asked, device_type)
        return by_uuid(adapters, choice, asked, device_type)
    entry = first_visible_device(visible)
    if entry is None or device_type == "cuda":
        return None
    asked = f"{VISIBLE_DEVICES}={visible.strip()}"
    if entry.isdigit():
        return _visible_index(adapters, device_type, int(entry), asked, nvidia_smi())
    digits = uuid_digits(entry) if entry[:4].lower() == "gpu-" else None  # CUDA's UUIDs start so
    if digits is not None:
        return by_uuid(adapters, digits, asked, device_type)
    raise UserError(
        f"{asked}: its first entry is neither a GPU index nor a GPU-... UUID, so it names no GPU to "
        "run on (MIG instances have no Vulkan adapter); unset it or choose one with --gpu"
    )


def _visible_index(
    adapters: Sequence[Adapter], device_type: str, index: int, asked: str, table: dict[int, str] | None
) -> Adapter:
    """CUDA's device `index` (Ray's indices are CUDA's) as an adapter, through nvidia-smi's UUID of
    its GPU `index`. nvidia-smi numbers GPUs in NVML's order, by PCI bus; CUDA's default order puts
    the fastest GPU first, and for identical GPUs that is the same order (for any GPUs under
    CUDA_DEVICE_ORDER=PCI_BUS_ID). Where nvidia-smi is missing, the index is the adapter index:
    there is no NVIDIA driver to ask."""
    if table is None:
        return by_index(adapters, index, f"{asked} (no nvidia-smi: an adapter index)", device_type)
    if index not in table:
        shown = ", ".join(str(known) for known in sorted(table))
        raise UserError(f"{asked}: nvidia-smi lists no GPU {index} (it lists {shown})")
    return by_uuid(adapters, uuid_digits(table[index]) or "", f"{asked} ({table[index]})", device_type)


def adapter_named(adapters: Sequence[Adapter], name: str) -> Adapter | None:
    """The adapter SlangPy took when none was asked for, known only by its name (its DeviceInfo
    has no LUID): the first one of that name. slang-rhi takes the first discrete adapter, else the
    first; adapters of one name are one model, of one type, so none comes before the one taken."""
    return next((adapter for adapter in adapters if adapter.name == name), None)
