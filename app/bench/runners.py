"""One runner per trainer. Each runs `steps` optimizer steps of one batch size and returns
the seconds they took, waiting for the GPU before and after. `measure` sizes a timed run of any
of them, and `app_row` is the app's row of a table; the speed benchmark's network rows
(speed.py) and its derivatives rows (derivative_rows.py) share both."""

from __future__ import annotations

import time

import numpy as np
import slangpy as spy

from ..config.config import Config, validate
from ..gpu.gpu import Gpu
from ..kernels.planning import plan_for
from ..model import optimizers
from ..model.activations import slang_constants
from ..resources import shader_dir
from ..train.loss_ring import LOSS_HISTORY
from ..train.trainer import Trainer

STEPS_PER_SUBMIT = 64  # as the app's headless loop does: many steps per command encoder


def time_app(gpu: Gpu, config: Config, steps: int, warmup: int = 3) -> tuple[float, int]:
    """Returns (seconds, trainer's GPU bytes) for `steps` steps of the app's trainer."""
    trainer = Trainer(gpu, config)
    trainer.train(warmup)
    start = time.perf_counter()
    done = 0
    while done < steps:
        count = min(STEPS_PER_SUBMIT, steps - done, LOSS_HISTORY)
        with gpu.submit(wait=False) as encoder:
            trainer.record_steps(encoder, count)
        done += count
    gpu.device.wait()
    seconds = time.perf_counter() - start
    return seconds, trainer.gpu_bytes()


# Shares of a row's budget, so that the full run keeps to its 8 minutes (docs/benchmarks.md): PyTorch's
# eager rows are a reference line, never the row the app is compared with, and the CUDA column's
# rows are steady (the backend to train on is Vulkan).
EAGER_SHARE = 0.25
CUDA_SHARE = 0.5


def measure(run, batch: int, budget: float, cap: int) -> dict:
    """A 2-step probe sizes the timed run to about `budget` seconds."""
    probe = run(2) / 2
    steps = max(2, min(cap, int(budget / max(probe, 1e-6))))
    seconds = run(steps)
    return {"samples_per_second": batch * steps / seconds, "steps_per_second": steps / seconds}


def app_row(gpu, name: str, batch: int, precision: str, fields: dict, budget: float, cap: int) -> dict:
    """The app's trainer on one network, batch and precision, with its GPU memory."""
    config = validate(Config(batch_size=batch, precision=precision, **fields))
    plan = gpu.plan(config)
    memory = []

    def run(n: int) -> float:
        seconds, trainer_bytes = time_app(gpu, config, n)
        memory.append(trainer_bytes)
        return seconds

    figures = measure(run, batch, budget, cap)
    return dict(
        trainer="app",
        network=name,
        batch=batch,
        precision=precision,
        matmul=plan.matmul,
        gradient_path=plan.gradient_path,
        **figures,
        gpu_mib=memory[-1] / 2**20,
    )


class AtomicReference:
    """The tutorial's kernels: per-sample float atomics into one gradient buffer."""

    def __init__(self, gpu: Gpu):
        self.gpu, device = gpu, gpu.device
        # the constants (LeakyReLU slope, ...) and optimizers the app's generated modules start with
        prefix = slang_constants() + "\n" + optimizers.slang_source() + "\n"
        source = prefix + (shader_dir() / "bench" / "atomic_reference.slang").read_text()
        module = device.load_module_from_source("atomic_reference", source)

        def link(name: str) -> spy.ComputeKernel:
            return device.create_compute_kernel(device.link_program([module], [module.entry_point(name)]))

        self.learn, self.adjust = link("learnGradientAtomic"), link("adjustParametersAtomic")
        usage = spy.BufferUsage.unordered_access | spy.BufferUsage.shader_resource
        self.config = Config()  # Adam at lr 0.01, as the app's default
        params = plan_for(self.config).initial_parameters(0)
        self.count = params.size
        self.params = device.create_buffer(data=params, usage=usage)
        self.grads = device.create_buffer(data=np.zeros_like(params), usage=usage)
        state = np.zeros(optimizers.OPTIMIZERS[self.config.optimizer].state_width * params.size, np.float32)
        self.moments = device.create_buffer(data=state, usage=usage)

    def record(self, encoder: spy.CommandEncoder, batch: int, step: int) -> None:
        self.learn.dispatch(
            [batch, 1, 1],
            command_encoder=encoder,
            params=self.params.device_address,
            grads=self.grads.device_address,
            batchSize=batch,
            seed=0,
            step=step,
            domain=spy.float4(-1, 1, -1, 1),
        )
        encoder.global_barrier()
        self.adjust.dispatch(
            [self.count, 1, 1],
            command_encoder=encoder,
            params=self.params.device_address,
            grads=self.grads.device_address,
            moments=self.moments.device_address,
            count=self.count,
            optimizer=optimizers.settings(self.config.optimizer_settings, step + 1),
        )
        encoder.global_barrier()

    def time(self, batch: int, steps: int) -> float:
        with self.gpu.submit() as encoder:
            self.record(encoder, batch, 0)
        start = time.perf_counter()
        for first in range(0, steps, STEPS_PER_SUBMIT):
            with self.gpu.submit(wait=False) as encoder:
                for step in range(first, min(first + STEPS_PER_SUBMIT, steps)):
                    self.record(encoder, batch, step)
        self.gpu.device.wait()
        return time.perf_counter() - start
