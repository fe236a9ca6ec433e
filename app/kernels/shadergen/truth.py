"""The truth source: where each training sample and its truth come from, the one seam between what the
network learns and how the kernels train it. A plan's `truth_kind` picks a source ("formula",
"image", "sdf", "points"), which prints `groundTruth(float2 p)`, the truth anywhere, and
`drawSample(StepArgs a, uint sampleIndex)`, the sample learnGradient trains on; a new kind of truth
is one more entry in TRUTH_SOURCES (docs/architecture.md, 'Where samples come from')."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...model.derivative_loss import NORMAL_EVERY
from ...truth.mesh_truth import SURFACE_BAND
from ...truth.slang_file import TARGET_NAMESPACE, slang_target_block
from ...truth.targets import target_to_slang
from .chain import indent

if TYPE_CHECKING:
    from ..plan import NetworkPlan


@dataclass(frozen=True)
class TruthSlang:
    ground_truth: str  # groundTruth(p), before the losses
    draw_sample: str  # drawSample(a, sampleIndex), after StepArgs
    tail: str = ""  # last in the module (a user's file, so that the lines before keep their numbers)


@dataclass(frozen=True)
class TruthSource:
    kind: str
    header: Callable[[NetworkPlan], str]  # what the generated module's header says of it
    slang: Callable[[NetworkPlan], TruthSlang]


def _truth_function(values: list[str], point: str = "float2") -> str:
    rows = [f"{value}," for value in values[:-1]] + values[-1:]
    return f"""[Differentiable]
float[OUTPUT_DIM] groundTruth({point} p)
{{
    float truth[OUTPUT_DIM] = {{
{indent(rows, 2)}
    }};
    return truth;
}}"""


_FORMULA_SAMPLE = """// Each step samples its points afresh over the domain (sampling.slang) and asks the truth.
TrainingSample drawSample(StepArgs a, uint sampleIndex)
{
    TrainingSample sample;
    sample.p = samplePoint(a.seed, a.step, sampleIndex, float4(a.x0, a.x1, a.y0, a.y1));
    sample.truth = groundTruth(sample.p);
    sample.normal = float2(0.0);
    return sample;
}"""

_FORMULA_SAMPLE_3D = """// Each step samples its points afresh over the box (sampling.slang) and asks the truth.
TrainingSample drawSample(StepArgs a, uint sampleIndex)
{
    TrainingSample sample;
    sample.p = samplePoint3(a.seed, a.step, sampleIndex, float4(a.x0, a.x1, a.y0, a.y1), float2(a.z0, a.z1));
    sample.truth = groundTruth(sample.p);
    sample.normal = float3(0.0);
    return sample;
}"""

_BOUNDARY_SAMPLE = """// Every NORMAL_EVERY-th sample of a step is one of the shape's boundary points, with its outward
// normal, for the normal alignment term (app/model/derivative_loss.py); the others sample the
// domain. The points follow the distance grid in truthData: their count (a uint), 3 words of
// padding, then x, y, nx, ny each (app/truth/sdf_truth.py: boundary_words).
TrainingSample drawSample(StepArgs a, uint sampleIndex)
{
    TrainingSample sample;
    sample.p = samplePoint(a.seed, a.step, sampleIndex, float4(a.x0, a.x1, a.y0, a.y1));
    sample.normal = float2(0.0);
    static const uint BOUNDARY = IMAGE_WIDTH * IMAGE_HEIGHT;
    uint count = asuint(truthData[BOUNDARY]);
    if (sampleIndex % NORMAL_EVERY == 0 && count > 0)  // (a shape with no points in the domain: none)
    {
        float* point = truthData + BOUNDARY + 4 + 4 * boundaryIndex(a.seed, a.step, sampleIndex, count);
        sample.p = float2(point[0], point[1]);
        sample.normal = float2(point[2], point[3]);
    }
    sample.truth = groundTruth(sample.p);
    return sample;
}"""


def _formula(plan: NetworkPlan) -> TruthSlang:
    truth = plan.slang_truth
    if plan.point_dim == 3:  # of x, y and z (app/truth/space.py): formulas, or a file's target(float3 p, k)
        if truth is None:
            return TruthSlang(
                _truth_function([target_to_slang(t, dims=3) for t in plan.targets], "float3"), _FORMULA_SAMPLE_3D
            )
        values = [f"{TARGET_NAMESPACE}::target(p, {k})" for k in range(truth.count)]
        tail = "\n// The user's Slang file, verbatim\n" + slang_target_block(truth.source)
        return TruthSlang(_truth_function(values, "float3"), _FORMULA_SAMPLE_3D, tail)
    if truth is None:
        return TruthSlang(_truth_function([target_to_slang(t) for t in plan.targets]), _FORMULA_SAMPLE)
    values = [f"{TARGET_NAMESPACE}::target(p, {k})" for k in range(truth.count)]
    tail = "\n// The user's Slang file, verbatim\n" + slang_target_block(truth.source)
    return TruthSlang(_truth_function(values), _FORMULA_SAMPLE, tail)


def _formula_header(plan: NetworkPlan) -> str:
    if plan.slang_truth is None:
        variables = "x and y" if plan.point_dim == 2 else "x, y and z"
        return f"{len(plan.targets)} expressions of {variables}, printed as Slang below"
    return f"a Slang file's {plan.slang_truth.count} targets, in namespace {TARGET_NAMESPACE} at the end"


_POINTS_SAMPLE = """// Sample i of a step is training point shuffledIndex(position, trainCount, seed, epoch) of the
// dataset's rows, where position and epoch continue from where the last step stopped: each
// epoch visits every training point once, in an order drawn from (seed, epoch) alone.
TrainingSample drawSample(StepArgs a, uint sampleIndex)
{
    uint position = a.dataOffset + sampleIndex;
    uint index = shuffledIndex(position % a.trainCount, a.trainCount, a.seed, a.dataEpoch + position / a.trainCount);
    float* row = a.points + index * POINT_STRIDE;
    TrainingSample sample;
    sample.p = float2(row[0], row[1]);
    sample.normal = float2(0.0);
    [ForceUnroll]
    for (int o = 0; o < OUTPUT_DIM; o++)
        sample.truth[o] = row[2 + o];
    return sample;
}"""


def _points(plan: NetworkPlan) -> TruthSlang:
    # Points have no truth between them: the grid's truth is 0, and the window shows the points
    # themselves over the learned function instead of a truth panel.
    return TruthSlang(_truth_function(["0.0"] * plan.output_dim), _POINTS_SAMPLE)


def _grid_truth(width: int, height: int, sample: str = _FORMULA_SAMPLE) -> TruthSlang:
    # The values are read through the kernel context (shaders/common/kernel_context.slang), which each
    # kernel sets from its arguments; the bilinear interpolation is shaders/truth/image_truth.slang's.
    ground_truth = f"""static const int IMAGE_WIDTH = {width};
static const int IMAGE_HEIGHT = {height};
#include "truth/image_truth.slang"

[Differentiable]
float[OUTPUT_DIM] groundTruth(float2 p)
{{
    return imageTruth(p);
}}"""
    return TruthSlang(ground_truth, sample)


def _image(plan: NetworkPlan) -> TruthSlang:
    return _grid_truth(plan.image.width, plan.image.height)


def _sdf(plan: NetworkPlan) -> TruthSlang:
    # The distance grid is read as a one-channel image is (app/truth/sdf_truth.py).
    if not plan.normals:
        return _grid_truth(plan.sdf.width, plan.sdf.height)
    boundary = f"static const uint NORMAL_EVERY = {NORMAL_EVERY};\n{_BOUNDARY_SAMPLE}"
    return _grid_truth(plan.sdf.width, plan.sdf.height, boundary)


_MESH_SAMPLE = """// Every other sample of a step starts at one of the mesh's surface samples and moves along its
// normal by up to SURFACE_BAND of the box's width either way, so that the surface, where the
// distance's detail is, gets half the batch (as instant-ngp's SDF training does); the others sample
// the box. The surface samples follow the distance grid in truthData: their count (a uint), 3 words
// of padding, then x, y, z, nx, ny, nz each (app/truth/mesh_truth.py: mesh_words).
TrainingSample drawSample(StepArgs a, uint sampleIndex)
{
    TrainingSample sample;
    float4 domain = float4(a.x0, a.x1, a.y0, a.y1);
    sample.p = samplePoint3(a.seed, a.step, sampleIndex, domain, float2(a.z0, a.z1));
    sample.normal = float3(0.0);
    static const uint SURFACE = uint(MESH_RESOLUTION * MESH_RESOLUTION * MESH_RESOLUTION);
    uint count = asuint(truthData[SURFACE]);
    if (sampleIndex % 2u == 1u && count > 0)
    {
        uint h = pcgHash(sampleIndex ^ pcgHash(a.step ^ pcgHash(a.seed ^ 0x51ed270bu)));
        float* point = truthData + SURFACE + 4 + 6 * (h % count);
        float offset = (2.0 * unitFloat(pcgHash(h ^ 0x68e31da4u)) - 1.0) * SURFACE_BAND * (a.x1 - a.x0);
        float3 low = float3(a.x0, a.y0, a.z0), high = float3(a.x1, a.y1, a.z1);
        sample.p = clamp(float3(point[0], point[1], point[2]) + offset * float3(point[3], point[4], point[5]), low, high);
    }
    sample.truth = groundTruth(sample.p);
    return sample;
}"""


def _mesh(plan: NetworkPlan) -> TruthSlang:
    ground_truth = f"""static const int MESH_RESOLUTION = {plan.mesh.resolution};
static const float SURFACE_BAND = {SURFACE_BAND!r};
#include "truth/mesh_truth.slang"

[Differentiable]
float[OUTPUT_DIM] groundTruth(float3 p)
{{
    return meshTruth(p);
}}"""
    return TruthSlang(ground_truth, _MESH_SAMPLE)


def _mesh_header(plan: NetworkPlan) -> str:
    n = plan.mesh.resolution
    return f"a triangle mesh's signed distance on a grid of {n}x{n}x{n} vertices, half the samples near its surface"


def _sdf_header(plan: NetworkPlan) -> str:
    return f"a shape's signed distance on a grid of {plan.sdf.width}x{plan.sdf.height}"


def _image_header(plan: NetworkPlan) -> str:
    channels = f"{plan.image.channels} channel{'s' if plan.image.channels > 1 else ''}"
    return f"an image of {plan.image.width}x{plan.image.height} pixels, {channels}"


def _points_header(plan: NetworkPlan) -> str:
    return "a dataset's points on the GPU (training points drawn per epoch)"


TRUTH_SOURCES: dict[str, TruthSource] = {
    source.kind: source
    for source in (
        TruthSource("formula", _formula_header, _formula),
        TruthSource("image", _image_header, _image),
        TruthSource("points", _points_header, _points),
        TruthSource("sdf", _sdf_header, _sdf),
        TruthSource("mesh", _mesh_header, _mesh),
    )
}


def truth_slang(plan: NetworkPlan) -> TruthSlang:
    return TRUTH_SOURCES[plan.truth_kind].slang(plan)


def truth_header(plan: NetworkPlan) -> str:
    return TRUTH_SOURCES[plan.truth_kind].header(plan)
