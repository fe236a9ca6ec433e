"""The truth's grid of values on the GPU, where the truth has one: an image target's pixels, or a
shape's signed distance field (both read by shaders/truth/image_truth.slang); a 4-byte placeholder
buffer elsewhere."""

from __future__ import annotations

from ..config.config import Config
from ..gpu.gpu import Gpu
from ..kernels.plan import NetworkPlan
from ..truth import image_truth
from ..truth.mesh_truth import upload_mesh
from ..truth.sdf_truth import upload_sdf


def upload_truth_grid(gpu: Gpu, plan: NetworkPlan, config: Config):
    if plan.mesh is not None:
        return upload_mesh(gpu, plan.mesh.spec, [*config.domain, *config.z_range])
    if plan.sdf is not None:
        return upload_sdf(gpu, plan.sdf.spec, config.domain)
    return image_truth.upload_pixels(gpu, config.image if plan.image else None)


def follows_domain(plan: NetworkPlan) -> bool:
    """Whether the grid is computed for the domain (a distance field, a mesh's over the box), and so
    again for another."""
    return plan.sdf is not None or plan.mesh is not None
