"""What the sphere tracer of a function of (x, y, z) (shaders/views/render3d.slang) and its Python side
share, defined once: how it steps and when it stops, in units of the box's diagonal, and its colours.
The generated module of a 3D network gets them as constants; the tests' numpy tracer reads them."""

from __future__ import annotations

# A learned field is no true distance (|grad f| may be well above 1), so each step takes only this
# share of |f|; a step that still crosses the surface is caught by the sign change and bisected.
STEP_SCALE = 0.6
MIN_STEP = 1e-3  # of the box's diagonal: the least step, where |f| is tiny
HIT_EPSILON = 2e-4  # of the box's diagonal: |f| under this is a hit
BISECTIONS = 10  # halvings of a step that crossed the surface
NORMAL_STEP = 3e-3  # of the box's diagonal: the central differences' step to each side for the normal
MAX_STEPS = 160  # a ray that has not hit within this many steps is drawn as a miss
PARTS = ("learned", "truth")  # RENDER_LEARNED = 0, RENDER_TRUTH = 1

# Colours (sRGB): the learned surface amber, the truth's blue; where the box's wall cuts the solid
# (f < 0 where a ray enters the box) the same colour darker; the box's inside lighter than outside.
LEARNED_COLOUR = (0.96, 0.62, 0.22)
TRUTH_COLOUR = (0.36, 0.62, 0.95)
CUT_SHADE = 0.5
BACKGROUND = (0.09, 0.10, 0.12)  # the window's
BOX_INSIDE = (0.14, 0.15, 0.18)
BOX_EDGE = (0.42, 0.44, 0.50)
EDGE_PIXELS = 1.2  # the box's edges' width
AMBIENT = 0.22  # of the colour, lit from any side
# The light comes from above, to the left of and behind the viewer: fixed to the camera, so
# whatever side is turned to the viewer is lit.
LIGHT_RIGHT, LIGHT_UP, LIGHT_BACK = -0.45, 0.6, 0.65
SPECULAR = 0.22
SHININESS = 40.0


def surface_constants() -> str:
    """The sphere tracer's constants as Slang declarations (printed in a 3D network's module only)."""
    floats = {
        "TRACE_STEP_SCALE": STEP_SCALE,
        "TRACE_MIN_STEP": MIN_STEP,
        "TRACE_HIT_EPSILON": HIT_EPSILON,
        "TRACE_NORMAL_STEP": NORMAL_STEP,
        "SURFACE_CUT_SHADE": CUT_SHADE,
        "SURFACE_EDGE_PIXELS": EDGE_PIXELS,
        "SURFACE_AMBIENT": AMBIENT,
        "SURFACE_SPECULAR": SPECULAR,
        "SURFACE_SHININESS": SHININESS,
    }
    colours = {
        "SURFACE_LEARNED_COLOUR": LEARNED_COLOUR,
        "SURFACE_TRUTH_COLOUR": TRUTH_COLOUR,
        "SURFACE_BACKGROUND": BACKGROUND,
        "SURFACE_BOX_INSIDE": BOX_INSIDE,
        "SURFACE_BOX_EDGE": BOX_EDGE,
        "SURFACE_LIGHT": (LIGHT_RIGHT, LIGHT_UP, LIGHT_BACK),
    }
    lines = [f"static const float {name} = {value!r};" for name, value in floats.items()]
    lines += [f"static const float3 {name} = float3({', '.join(map(repr, value))});" for name, value in colours.items()]
    lines += [
        f"static const uint TRACE_BISECTIONS = {BISECTIONS};",
        f"static const uint TRACE_MAX_STEPS = {MAX_STEPS};",
        *(f"static const uint RENDER_{name.upper()} = {k};" for k, name in enumerate(PARTS)),
    ]
    return "\n".join(lines)
