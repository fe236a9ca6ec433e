"""The Slang export of a signed distance field's network (--sdf SHAPE): besides the usual entry points
(export_slang.py), a drop-in `[Differentiable] float sdf(float2 p)` returning the learned signed
distance (negative inside), and the header lines that say what it was trained on and where it holds."""

from __future__ import annotations

import json
from pathlib import Path

from ..config.config import Config
from ..kernels.plan import NetworkPlan
from ..truth.sdf_truth import is_file_spec


def _shape_name(spec: str) -> str:
    """The shape as the header names it: a built-in's name, or the file's name only, written as a
    JSON string so that no character of it (a newline in a file name) can end the comment."""
    if is_file_spec(spec):
        return f"the file {json.dumps(Path(spec).name)}"
    return json.dumps(spec)


def sdf_header(plan: NetworkPlan, config: Config) -> str:
    """The header's lines for a distance field's output (plan.sdf set)."""
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


def sdf_function(plan: NetworkPlan) -> str:
    """The drop-in `sdf(p)`, for a distance field's network; empty for any other."""
    if plan.sdf is None:
        return ""
    return """
// The learned signed distance at p: negative inside, meaningful only in the domain (see above).
[Differentiable]
float sdf(float2 p)
{
    let outputs = trained_network_outputs(p);
    return outputs[0];
}
"""
