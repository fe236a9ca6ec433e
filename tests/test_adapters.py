"""Which adapter a device is made on (app/gpu/adapters.py), on made-up adapter lists: --gpu's
index or UUID (with or without GPU- and dashes, a prefix, a UUID longer than a LUID), refusals in
one line that list the adapters, CUDA_VISIBLE_DEVICES's first entry mapped through a made-up
nvidia-smi table, and --gpu beating the variable. Each expected adapter is named by its UUID as
written here, not found by the code under test."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.errors import UserError
from app.gpu.adapters import (
    Adapter,
    adapter_named,
    adapters_from,
    choose_adapter,
    parse_gpu_option,
    parse_nvidia_smi,
)

# Two H100s as NVIDIA's Vulkan driver lists them (UUIDs as nvidia-smi prints them, below), and
# lavapipe. Vulkan's order here is not nvidia-smi's: its GPU 0 is adapter 1.
FIRST = "GPU-444e64f4-6348-a1ec-9a4b-1f0c2d3e4f50"
SECOND = "GPU-8a1b2c3d-0000-1111-2222-333344445555"
LAVAPIPE_UUID = "6d65736132352e302e372d327e627000"
ADAPTERS = [
    Adapter(0, "NVIDIA H100 80GB HBM3", "8a1b2c3d000011112222333344445555"),
    Adapter(1, "NVIDIA H100 80GB HBM3", "444e64f46348a1ec9a4b1f0c2d3e4f50"),
    Adapter(2, "llvmpipe (LLVM 15.0.6, 256 bits)", LAVAPIPE_UUID),
]
SMI_TABLE = {0: FIRST, 1: SECOND}  # nvidia-smi's order: GPU 0 is FIRST


def no_smi():
    raise AssertionError("nvidia-smi was asked where nothing needed it")


def choose(gpu=None, visible=None, table=None, device_type="vulkan", adapters=ADAPTERS):
    return choose_adapter(adapters, device_type, gpu, visible, no_smi if table is None else lambda: table)


def refusal(**asked) -> str:
    with pytest.raises(UserError) as caught:
        choose(**asked)
    text = str(caught.value)
    assert "\n" not in text, text
    return text


@pytest.mark.parametrize(
    "typed",
    [
        "1",
        FIRST,
        FIRST.lower().replace("gpu-", "GPU-").upper(),
        FIRST[4:],  # no GPU-
        FIRST[4:].replace("-", ""),  # plain hex
        "GPU-444e64f4",  # nvidia-smi's first group: a prefix
        "444e64f4634",  # a prefix across a dash
        " 1 ",
    ],
)
def test_gpu_option_picks_the_adapter_by_index_or_uuid(typed):
    assert choose(gpu=typed).uuid == "444e64f46348a1ec9a4b1f0c2d3e4f50"


def test_a_uuid_matches_a_shorter_luid_by_its_prefix():
    """A LUID of 8 bytes (Windows): a full UUID matches it over its 16 digits."""
    adapters = [Adapter(0, "A", "0011223344556677"), Adapter(1, "B", "8899aabbccddeeff")]
    assert choose(gpu="GPU-8899aabb-ccdd-eeff-0000-111122223333", adapters=adapters).name == "B"


@pytest.mark.parametrize("typed", ["3", "7", "GPU-deadbeef", "deadbeef00", "12345678"])
def test_no_such_adapter_is_one_line_listing_every_adapter(typed):
    text = refusal(gpu=typed)
    assert text.startswith(f"--gpu {typed}: ")
    for index, name, uuid in [(0, "NVIDIA H100 80GB HBM3", "8a1b2c3d"), (2, "llvmpipe", LAVAPIPE_UUID)]:
        assert f"{index}: {name}" in text and uuid in text, text


def test_an_ambiguous_prefix_is_refused_and_a_longer_one_is_not():
    twins = [Adapter(0, "A", "444e64f4" + "0" * 24), Adapter(1, "B", "444e64f4" + "1" * 24)]
    text = refusal(gpu="GPU-444e64f4", adapters=twins)
    assert "2 vulkan adapters" in text and "more of its digits" in text, text
    assert choose(gpu="GPU-444e64f4-1", adapters=twins).name == "B"


@pytest.mark.parametrize("typed", ["xyz", "GPU-12", "1234567g", "-1", ""])
def test_a_gpu_option_of_no_form_is_refused(typed):
    with pytest.raises(UserError, match="--gpu takes an adapter index or a GPU UUID"):
        parse_gpu_option(typed)


def test_a_short_number_is_an_index_and_eight_digits_a_uuid():
    assert parse_gpu_option("12") == 12 and parse_gpu_option("1234567") == 1234567
    assert parse_gpu_option("12345678") == "12345678"


def test_visible_index_goes_through_nvidia_smis_uuid():
    """CUDA_VISIBLE_DEVICES=0 is nvidia-smi's GPU 0, FIRST, which Vulkan lists second."""
    assert choose(visible="0", table=SMI_TABLE).uuid.startswith("444e64f4")
    assert choose(visible="1,0", table=SMI_TABLE).uuid.startswith("8a1b2c3d")  # the first entry


def test_visible_index_without_nvidia_smi_is_the_adapter_index():
    assert choose_adapter(ADAPTERS, "vulkan", None, "0", lambda: None).index == 0
    assert choose_adapter(ADAPTERS, "vulkan", None, "2", lambda: None).uuid == LAVAPIPE_UUID
    with pytest.raises(UserError, match="CUDA_VISIBLE_DEVICES=5 .no nvidia-smi"):
        choose_adapter(ADAPTERS, "vulkan", None, "5", lambda: None)


def test_visible_index_that_nvidia_smi_lacks_is_refused():
    assert "nvidia-smi lists no GPU 4 (it lists 0, 1)" in refusal(visible="4", table=SMI_TABLE)


def test_visible_uuid_entry_matches_as_gpu_does():
    assert choose(visible=f"{SECOND},{FIRST}").index == 0
    assert "no vulkan adapter has this UUID" in refusal(visible="GPU-deadbeef-0000")


@pytest.mark.parametrize("visible", [None, "", "  "])
def test_unset_or_empty_variable_is_no_constraint(visible):
    """Ray gives a trial that asked for no GPU an empty value; nvidia-smi is not asked."""
    assert choose(visible=visible) is None


@pytest.mark.parametrize("visible", ["-1", "MIG-1b2c3d4e-0000", "NoDevFiles", ",1"])
def test_a_variable_naming_no_gpu_is_refused(visible):
    assert f"CUDA_VISIBLE_DEVICES={visible}: its first entry is neither" in refusal(visible=visible)


def test_gpu_option_beats_the_variable_without_asking_nvidia_smi():
    assert choose(gpu="2", visible="0").uuid == LAVAPIPE_UUID
    assert choose(gpu=FIRST, visible="-1").index == 1  # a variable it overrides is not read


def test_cuda_applies_the_variable_itself():
    """On CUDA's device type the adapters are those CUDA shows: the variable is not applied
    again, and --gpu indexes that list."""
    assert choose(visible="1", device_type="cuda") is None
    assert choose(gpu="1", visible="1", device_type="cuda").index == 1


def test_nvidia_smi_lines_and_luid_bytes():
    text = f"0, {FIRST}\n1, {SECOND}\n\n"
    assert parse_nvidia_smi(text) == SMI_TABLE
    luid = [0x44, 0x4E, 0x64, 0xF4, 0x63, 0x48, 0xA1, 0xEC, 0x9A, 0x4B, 0x1F, 0x0C, 0x2D, 0x3E, 0x4F, 0x50]
    listed = adapters_from([SimpleNamespace(name="H100", luid=luid), SimpleNamespace(name="lp", luid=[0] * 16)])
    assert listed[0] == Adapter(0, "H100", "444e64f46348a1ec9a4b1f0c2d3e4f50")
    assert listed[1] == Adapter(1, "lp", "0" * 32)


def test_the_adapter_slangpy_took_is_the_first_of_its_name():
    assert adapter_named(ADAPTERS, "NVIDIA H100 80GB HBM3").index == 0
    assert adapter_named(ADAPTERS, "llvmpipe (LLVM 15.0.6, 256 bits)").index == 2
    assert adapter_named(ADAPTERS, "Radeon") is None


def test_a_gpu_is_labelled_by_its_name_and_uuid_a_cpu_driver_by_its_name_alone():
    """The label a sweep's gpu column shows: lavapipe's identifier is its version as text, not a
    UUID, so its label is its name; an NVIDIA GPU's carries the UUID as nvidia-smi prints it."""
    assert ADAPTERS[1].label() == f"NVIDIA H100 80GB HBM3 ({FIRST})"
    assert ADAPTERS[0].gpu_uuid == SECOND
    assert ADAPTERS[2].gpu_uuid is None and ADAPTERS[2].label() == "llvmpipe (LLVM 15.0.6, 256 bits)"
    assert Adapter(0, "GPU", "8a1b2c3d").label() == "GPU (8a1b2c3d)"  # a shorter LUID: its hex
