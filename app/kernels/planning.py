"""A config's NetworkPlan on a device: the layers, encoding and truth its structural fields
describe, and the first gradient path (app/kernels/paths/) that fits them there."""

from __future__ import annotations

import functools

from ..config.config import Config, Structure
from ..datasets.source import problem_of
from ..model.activations import ACTIVATIONS
from ..model.derivative_loss import derivatives_on
from ..model.encodings import encoding_for
from ..truth.image_truth import ImageTruth
from ..truth.mesh_truth import MESH_RESOLUTION, MeshTruth, is_mesh_spec
from ..truth.sdf_truth import sdf_truth
from .paths import PathRequest, choose_path
from .plan import LayerPlan, NetworkPlan, SlangTruth


@functools.lru_cache(maxsize=64)
def _plan(
    s: Structure,
    tensor_cores: bool,
    fused: bool,
    cpu: bool = False,
    derivatives: bool = False,
    emulated: bool = False,
    normals: bool = False,
) -> NetworkPlan:
    enc = encoding_for(s.encoding, s.dims)
    setting = enc.setting(s.encoding_settings)
    problem = problem_of(dict(s.dataset)) if s.dataset else None
    image = ImageTruth(**dict(s.image)) if s.image and not problem else None
    mesh = MeshTruth(s.sdf, MESH_RESOLUTION) if is_mesh_spec(s.sdf) and not (problem or image) else None
    sdf = sdf_truth(s.sdf) if s.sdf and not (problem or image or mesh) else None
    slang_truth = (
        SlangTruth(**dict(s.slang_target)) if s.slang_target and not (problem or image or sdf or mesh) else None
    )
    inputs = enc.dim(setting)
    outputs = (
        problem.outputs
        if problem
        else image.channels
        if image
        else 1
        if sdf or mesh
        else slang_truth.count
        if slang_truth
        else len(s.targets)
    )
    sizes = (inputs, *s.hidden, outputs)
    layers, offset, z_offset = [], 0, 0
    for k, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        act = ACTIVATIONS[s.output_activation if k == len(sizes) - 2 else s.activation]
        layers.append(LayerPlan(fan_in, fan_out, act, offset, z_offset))
        offset += fan_in * fan_out + fan_out
        z_offset += fan_out
    common = dict(
        sizes=sizes,
        layers=tuple(layers),
        encoding=enc,
        encoding_setting=setting,
        precision=s.precision,
        targets=() if slang_truth or problem or image or sdf or mesh else s.targets,
        slang_truth=slang_truth,
        truth_kind="points" if problem else "image" if image else "sdf" if sdf else "mesh" if mesh else "formula",
        loss_name=problem.loss if problem else "squared",
        image=image,
        sdf=sdf,
        derivatives=derivatives,
        normals=normals and sdf is not None,
        mesh=mesh,
        point_dim=s.dims,
    )
    request = PathRequest(
        sizes=sizes,
        layers=tuple(layers),
        precision=s.precision,
        matmul=s.matmul,
        squared=common["loss_name"] == "squared",
        points=problem is not None,
        grid_params=setting.param_count if enc.trained else 0,
        image=image is not None or sdf is not None or mesh is not None,  # each reads a grid of values
        tensor_cores=tensor_cores,
        fused=fused,
        cpu=cpu,
        derivatives=derivatives,
        point_dim=s.dims,
    )
    path, fields = choose_path(request)
    emulated_mma = emulated and any(fields.get("mma", ()))
    return NetworkPlan(
        **common,
        gradient_path=path.name,
        thread_accumulators=path.thread_accumulators,
        emulated_mma=emulated_mma,
        **fields,
    )


def plan_for(
    config: Config, tensor_cores: bool = False, fused: bool | None = None, cpu: bool = False, emulated: bool = False
) -> NetworkPlan:
    """The plan of `config`'s structure on a device with or without cooperative matrices, and on a
    CPU driver or not (cached: configs that differ only in hot fields share it). `fused`: whether
    the fully fused trainer may run there (its weight copies assume NVIDIA's fragment layout:
    app/gpu/gpu.py checks it); by default wherever there are cooperative matrices. A derivative
    loss (app/model/derivative_loss.py) is the one hot setting that picks the kernel: whether it is
    on, not its weights, which stay kernel arguments; and whether a shape's boundary points are
    sampled for the normal alignment term. `emulated`: the tensor cores are emulated with plain
    loops (app/gpu/gpu.py: emulated_tensor_cores)."""
    fused = tensor_cores if fused is None else fused
    normals = config.normal_weight > 0
    derivatives = derivatives_on(config.loss_settings)
    return _plan(config.structure(), tensor_cores, fused, cpu, derivatives, emulated, normals)
