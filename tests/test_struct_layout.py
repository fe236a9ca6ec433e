"""Records the host fills for kernels take their numpy layout from the Slang struct itself
(app/gpu/struct_layout.py): checked by a kernel that reads every field of such a record through a
pointer, and on the StepArgs of a generated module."""

from __future__ import annotations

import numpy as np

from app.config.config import Config, validate
from app.gpu.struct_layout import snake_case, struct_dtype

PROBE = """
struct Inner
{
    uint kind;
    float rate;
    float values[3];
}

struct Record
{
    float* address;
    float x0, y0;
    uint countOfThings;
    half small;
    Inner inner;
    int64_t wide;
}

[shader("compute")]
[numthreads(1, 1, 1)]
void readRecord(uniform Record* record, uniform float* out)
{
    let r = *record;
    out[0] = r.x0;
    out[1] = r.y0;
    out[2] = float(r.countOfThings);
    out[3] = float(r.small);
    out[4] = float(r.inner.kind);
    out[5] = r.inner.rate;
    out[6] = r.inner.values[0];
    out[7] = r.inner.values[2];
    out[8] = float(r.wide >> 33);
    out[9] = r.address[1];
}
"""


def test_a_kernel_reads_every_field_of_a_record_laid_out_from_its_struct(gpu):
    device = gpu.device
    module = device.load_module_from_source("struct_layout_probe", PROBE)
    dtype = struct_dtype(module, "Record")
    assert dtype.names == ("address", "x0", "y0", "count_of_things", "small", "inner", "wide")
    assert dtype["inner"].names == ("kind", "rate", "values") and dtype["inner"]["values"].shape == (3,)
    assert dtype.fields["wide"][1] % 8 == 0, "the 64-bit field sits where Slang aligns it, past padding"
    data = gpu.buffer(8)
    gpu.write(data, np.array([0.0, 7.25], np.float32))
    record = np.zeros(1, dtype)
    record["address"], record["x0"], record["y0"], record["count_of_things"] = data.device_address, 1.5, -2.0, 41
    record["small"] = 0.5
    record["inner"]["kind"], record["inner"]["rate"], record["inner"]["values"] = 3, 0.125, [10.0, 20.0, 30.0]
    record["wide"] = 5 << 33
    buffer, out = gpu.buffer(dtype.itemsize), gpu.buffer(10 * 4)
    gpu.write(buffer, record.view(np.uint8))
    kernel = device.create_compute_kernel(device.link_program([module], [module.entry_point("readRecord")]))
    kernel.dispatch([1, 1, 1], record=buffer.device_address, out=out.device_address)
    read = gpu.read(out, 10)
    assert read.tolist() == [1.5, -2.0, 41.0, 0.5, 3.0, 0.125, 10.0, 30.0, 5.0, 7.25]


def test_step_args_come_from_the_generated_module(gpu):
    kernels = gpu.kernels.get(gpu.plan(validate(Config())))
    dtype = kernels.step_args
    for name in ("weights", "master_weights", "x0", "y1", "sample_end", "grid_end", "reg_rate", "optimizer"):
        assert name in dtype.names, name
    assert dtype["optimizer"].names == ("kind", "learning_rate", "step_number", "hyper")
    assert dtype.itemsize % 8 == 0


def test_snake_case():
    assert [snake_case(n) for n in ("x0", "sampleEnd", "gradientSlotCount", "grid2D")] == [
        "x0",
        "sample_end",
        "gradient_slot_count",
        "grid2_d",
    ]
