"""Host memory left behind per command buffer by SlangPy (sgl + slang-rhi), with no app code.

    python docs/slangpy-memory/repro.py --suite [--device vulkan] [--scale 1.0] [--markdown]
    python docs/slangpy-memory/repro.py --case dispatch --per 64 --count 2000 \
        [--wait-every 1000 | --max-in-flight 2] [--device vulkan]

Each case records `--count` command buffers, each holding `--per` operations of one kind, and
submits them. After each submit the script keeps at most `--max-in-flight` submits unfinished
(waiting on the oldest with device.wait_for_submit), and calls device.wait() after every
`--wait-every` submits; 0 disables either. Before measuring, `--warmup` buffers of the same
case are submitted one at a time (a wait after each), so that what fills once whatever the
submission pattern (pipelines, the first staging page, Python's and malloc's arenas) is full,
but not what grows with the number of buffers in flight.

It prints, over the measured buffers, the growth of:
  rss      resident host memory (/proc/self/statm), per command buffer and per operation;
  malloc   bytes malloc has handed out and not had back (glibc mallinfo2: uordblks + hblkhd),
           which includes memory reserved but never touched (so it can exceed rss);
and the largest number of submits seen unfinished right after a submit (`peak in flight`),
and what the growth was in the second half of the run alone (`late`): a figure near zero there
means the memory went into something that filled up (a pool), a figure like the whole run's
means it grows without bound. `KB/peak buffer` divides the whole growth by the peak number in
flight: what each command buffer that slang-rhi had to create (its pool never shrinks) holds.

--suite runs the standard matrix, each case in a fresh process so that none inherits another's
pools, and prints one table. Only slangpy and numpy are used."""

from __future__ import annotations

import argparse
import collections
import ctypes
import gc
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PAGE = 4096
CASES = ("empty", "dispatch", "barrier", "upload", "timestamp", "copy", "step")


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()
    ]


def _libc():
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        return libc
    except (OSError, AttributeError):
        return None


LIBC = _libc()


def rss_bytes() -> int:
    gc.collect()
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE


def malloc_bytes() -> int:
    if LIBC is None:
        return 0
    info = LIBC.mallinfo2()
    return info.uordblks + info.hblkhd


class Recorder:
    """What one command buffer of each case holds."""

    def __init__(self, spy, device, per: int):
        self.spy, self.device, self.per = spy, device, per
        usage = (
            spy.BufferUsage.unordered_access
            | spy.BufferUsage.shader_resource
            | spy.BufferUsage.copy_source
            | spy.BufferUsage.copy_destination
        )
        self.data = device.create_buffer(size=64 * 4, usage=usage)
        self.args = device.create_buffer(size=max(per, 1) * 16, usage=usage)
        self.readback = device.create_buffer(
            size=64 * 4, usage=spy.BufferUsage.copy_destination, memory_type=spy.MemoryType.read_back
        )
        program = device.load_program(str(HERE / "kernel.slang"), ["touch"])
        self.pipeline = device.create_compute_kernel(program).pipeline
        record = np.zeros(max(per, 1), [("data", "<u8"), ("count", "<u4"), ("pad", "<u4")])
        record["data"], record["count"] = self.data.device_address, 64
        self.records = record.view(np.uint8)
        self.queries = device.create_query_pool(type=spy.QueryType.timestamp, count=max(per, 1))
        encoder = device.create_command_encoder()
        encoder.upload_buffer_data(self.args, 0, self.records)
        device.submit_command_buffer(encoder.finish())
        device.wait()

    def dispatch(self, encoder, index: int) -> None:
        compute = encoder.begin_compute_pass()
        root = self.spy.ShaderCursor(compute.bind_pipeline(self.pipeline))
        root.find_entry_point(0).find_field("args").write(self.args.device_address + 16 * index)
        compute.dispatch([64, 1, 1])
        compute.end()

    def record(self, encoder, case: str) -> None:
        per = self.per
        if case == "dispatch":
            for i in range(per):
                self.dispatch(encoder, i)
        elif case == "barrier":
            for _ in range(per):
                encoder.global_barrier()
        elif case == "upload":  # 16 bytes each, as many small uploads
            for i in range(per):
                encoder.upload_buffer_data(self.args, 16 * i, self.records[16 * i : 16 * i + 16])
        elif case == "timestamp":  # the pool reset on the host first, as a frame timer does
            self.queries.reset()
            for i in range(per):
                encoder.write_timestamp(self.queries, i)
        elif case == "copy":
            for _ in range(per):
                encoder.copy_buffer(self.readback, 0, self.data, 0, 64 * 4)
        elif case == "step":  # the app's headless shape: one upload, then dispatch + barrier pairs
            encoder.global_barrier()
            encoder.upload_buffer_data(self.args, 0, self.records)
            encoder.global_barrier()
            for i in range(per):
                self.dispatch(encoder, i)
                encoder.global_barrier()


def run_case(args) -> dict:
    import slangpy as spy

    device = spy.Device(type=getattr(spy.DeviceType, args.device), enable_hot_reload=False)
    recorder = Recorder(spy, device, args.per)
    in_flight: collections.deque[int] = collections.deque()
    peak = [0]

    def submit_many(count: int, wait_every: int, max_in_flight: int) -> None:
        for i in range(count):
            encoder = device.create_command_encoder()
            recorder.record(encoder, args.case)
            in_flight.append(device.submit_command_buffer(encoder.finish()))
            while in_flight and device.is_submit_finished(in_flight[0]):
                in_flight.popleft()
            peak[0] = max(peak[0], len(in_flight))
            if max_in_flight and len(in_flight) > max_in_flight:
                device.wait_for_submit(in_flight[-1 - max_in_flight])
            if wait_every and (i + 1) % wait_every == 0:
                device.wait()
                in_flight.clear()
        device.wait()
        in_flight.clear()

    submit_many(args.warmup, 1, 0)
    peak[0] = 0
    start_rss, start_malloc = rss_bytes(), malloc_bytes()
    begin = time.perf_counter()
    half = args.count // 2
    submit_many(half, args.wait_every, args.max_in_flight)
    mid_rss, mid_malloc = rss_bytes(), malloc_bytes()
    submit_many(args.count - half, args.wait_every, args.max_in_flight)
    seconds = time.perf_counter() - begin
    end_rss, end_malloc = rss_bytes(), malloc_bytes()
    late = max(args.count - half, 1)
    return {
        "device": device.info.adapter_name,
        "case": args.case,
        "per": args.per,
        "count": args.count,
        "wait_every": args.wait_every,
        "max_in_flight": args.max_in_flight,
        "peak_in_flight": peak[0],
        "us_per_buffer": 1e6 * seconds / args.count,
        "rss_per_buffer": (end_rss - start_rss) / args.count,
        "malloc_per_buffer": (end_malloc - start_malloc) / args.count,
        "late_rss_per_buffer": (end_rss - mid_rss) / late,
        "late_malloc_per_buffer": (end_malloc - mid_malloc) / late,
        "rss_growth": end_rss - start_rss,
        "malloc_growth": end_malloc - start_malloc,
    }


# case, operations per buffer, buffers, wait every, most in flight
SUITE = [
    ("empty", 0, 50_000, 0, 0),
    ("empty", 0, 50_000, 1, 0),
    ("empty", 0, 50_000, 1000, 0),
    ("empty", 0, 50_000, 0, 2),
    ("dispatch", 64, 2_000, 1, 0),
    ("dispatch", 64, 2_000, 100, 0),
    ("dispatch", 64, 2_000, 0, 2),
    ("barrier", 64, 20_000, 1000, 0),
    ("upload", 64, 5_000, 1000, 0),
    ("upload", 64, 5_000, 0, 2),
    ("timestamp", 4, 20_000, 1000, 0),
    ("copy", 64, 5_000, 1000, 0),
    ("step", 64, 1_000, 100, 0),
    ("step", 64, 1_000, 0, 2),
    ("step", 2048, 60, 20, 0),
    ("step", 2048, 60, 0, 2),
]


def suite(args) -> list[dict]:
    rows = []
    for case, per, count, wait_every, most in SUITE:
        count = max(10, int(count * args.scale))
        command = [
            sys.executable,
            __file__,
            "--json-line",
            f"--device={args.device}",
            f"--case={case}",
            f"--per={per}",
            f"--count={count}",
            f"--wait-every={wait_every}",
            f"--max-in-flight={most}",
        ]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        rows.append(json.loads(output.strip().splitlines()[-1]))
        _print_row(rows[-1], args.markdown, header=len(rows) == 1)
    return rows


def _print_row(row: dict, markdown: bool, header: bool) -> None:
    ops = max(row["per"], 1)
    if row["wait_every"]:
        sync = f"wait every {row['wait_every']}"
    elif row["max_in_flight"]:
        sync = f"at most {row['max_in_flight']} in flight"
    else:
        sync = "no wait"
    cells = [
        f"{row['case']} x{row['per']}" if row["case"] != "empty" else "empty",
        sync,
        f"{row['count']:,}",
        str(row["peak_in_flight"]),
        f"{row['rss_per_buffer']:.1f}",
        f"{row['rss_per_buffer'] / ops:.2f}",
        f"{row['late_rss_per_buffer']:.1f}",
        f"{row['malloc_per_buffer']:.1f}",
        f"{row['late_malloc_per_buffer']:.1f}",
        f"{row['rss_growth'] / max(row['peak_in_flight'], 1) / 1024:.0f}",
        f"{row['malloc_growth'] / max(row['peak_in_flight'], 1) / 1024:.0f}",
        f"{row['us_per_buffer']:.0f}",
    ]
    titles = [
        "case",
        "sync",
        "buffers",
        "peak in flight",
        "rss B/buffer",
        "rss B/op",
        "late rss B/buffer",
        "malloc B/buffer",
        "late malloc B/buffer",
        "rss KB/peak buffer",
        "malloc KB/peak buffer",
        "us/buffer",
    ]
    if markdown:
        if header:
            print("| " + " | ".join(titles) + " |")
            print("|" + "---|" * len(titles))
        print("| " + " | ".join(cells) + " |", flush=True)
    else:
        if header:
            print("  ".join(f"{t:>14}" for t in titles))
        print("  ".join(f"{c:>14}" for c in cells), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="store_true", help="run the standard matrix, one process per case")
    parser.add_argument("--scale", type=float, default=1.0, help="--suite: multiply every buffer count")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--device", default="vulkan", help="a slangpy.DeviceType name (vulkan, cuda, ...)")
    parser.add_argument("--case", choices=CASES, default="empty")
    parser.add_argument("--per", type=int, default=64, help="operations per command buffer")
    parser.add_argument("--count", type=int, default=10_000, help="command buffers measured")
    parser.add_argument("--warmup", type=int, default=100, help="buffers submitted one at a time first")
    parser.add_argument("--wait-every", type=int, default=0)
    parser.add_argument("--max-in-flight", type=int, default=0)
    parser.add_argument("--json-line", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args()
    if args.suite:
        suite(args)
        return 0
    row = run_case(args)
    if args.json_line:
        print(json.dumps(row))
    else:
        print(f"device: {row['device']}")
        _print_row(row, args.markdown, header=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
