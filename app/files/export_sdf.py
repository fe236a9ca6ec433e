"""The Slang export of a signed distance field's network (--sdf SHAPE, or in 3D a formula learned with
the eikonal term): besides the usual entry points (export_slang.py), a drop-in `[Differentiable]
float sdf(float2 p)` (float3 in 3D) returning the learned signed distance (negative inside), and the
header lines that say what it was trained on and where it holds."""

from __future__ import annotations

import json
from pathlib import Path

from ..config.config import Config
from ..kernels.plan import NetworkPlan, learned_distance
from ..truth.mesh_truth import load_mesh_field, mesh_fit
from ..truth.sdf_truth import is_file_spec


def _shape_name(spec: str) -> str:
    """The shape as the header names it: a built-in's name, or the file's name only, written as a
    JSON string so that no character of it (a newline in a file name) can end the comment."""
    if is_file_spec(spec):
        return f"the file {json.dumps(Path(spec).name)}"
    return json.dumps(spec)


def _formula_header(plan: NetworkPlan, config: Config) -> str:
    """The header's lines for a 3D formula's distance, learned with the eikonal term."""
    x0, x1, y0, y1 = config.domain
    z0, z1 = config.z_range
    return f"""//   outputs[0] ~ {plan.targets[0]}
//
// A signed distance: trained on the formula {json.dumps(plan.targets[0])} with the eikonal term,
// which pulls |grad f| to 1 (eikonal weight {config.eikonal:g}, gradient weight {config.grad_weight:g}).
// sdf(p) is the learned value at p, in the box's units: a signed distance where the formula is one,
// negative where it is negative; [Differentiable], so its gradient is the normal of its zero level.
// It is only meaningful in the box, x in [{x0:g}, {x1:g}], y in [{y0:g}, {y1:g}], z in [{z0:g}, {z1:g}]:
// the network never saw a point outside it, and there its value is no distance.
//
//     float d = sdf(p);"""


def _mesh_header(plan: NetworkPlan, config: Config) -> str:
    """The header's lines for a mesh's distance (app/truth/mesh_truth.py)."""
    x0, x1, y0, y1 = config.domain
    z0, z1 = config.z_range
    fit = mesh_fit(load_mesh_field(plan.mesh.spec, (x0, x1, y0, y1, z0, z1)))
    shift = ", ".join(f"{v:.9g}" for v in fit["shift"])
    return f"""//   outputs[0] ~ the signed distance to the mesh (negative inside)
//
// A signed distance field: trained on the mesh {_shape_name(plan.mesh.spec)} (--sdf), fitted into the box
// as (a point of the file) x {fit["scale"]:.9g} + ({shift}), its exact distance read trilinearly from a
// {plan.mesh.resolution}^3 grid (eikonal weight {config.eikonal:g}, gradient weight {config.grad_weight:g}).
// sdf(p) is the learned signed distance from p to the surface, in the box's units, NEGATIVE INSIDE
// and positive outside; [Differentiable], so its gradient is the normal. It is only meaningful in the
// box, x in [{x0:g}, {x1:g}], y in [{y0:g}, {y1:g}], z in [{z0:g}, {z1:g}].
//
//     float d = sdf(p);"""


def sdf_header(plan: NetworkPlan, config: Config) -> str:
    """The header's lines for a distance field's output (learned_distance)."""
    if plan.mesh is not None:
        return _mesh_header(plan, config)
    if plan.sdf is None:
        return _formula_header(plan, config)
    x0, x1, y0, y1 = config.domain
    terms = (
        f"eikonal weight {config.eikonal:g}, gradient weight {config.grad_weight:g}, "
        f"normal weight {config.normal_weight:g}"
    )
    return f"""//   outputs[0] ~ the signed distance to the shape (negative inside)
//
// A signed distance field: trained on the shape {_shape_name(plan.sdf.spec)} (--sdf), its distance
// sampled on a {plan.sdf.width} x {plan.sdf.height} grid over the domain ({terms}).
// sdf(p) is the learned signed distance from p to the shape's boundary, in the domain's units,
// NEGATIVE INSIDE the shape and positive outside; [Differentiable], so its gradient is the normal.
// It is only meaningful in the domain, x in [{x0:g}, {x1:g}], y in [{y0:g}, {y1:g}]: the network
// never saw a point outside it, and there its value is no distance.
//
//     float d = sdf(p);"""


def sdf_function(plan: NetworkPlan, config: Config) -> str:
    """The drop-in `sdf(p)`, for a distance field's network; empty for any other."""
    if not learned_distance(plan, config):
        return ""
    point = "float2" if plan.point_dim == 2 else "float3"
    return f"""
// The learned signed distance at p: negative inside, meaningful only in the domain (see above).
[Differentiable]
float sdf({point} p)
{{
    let outputs = trained_network_outputs(p);
    return outputs[0];
}}
"""
