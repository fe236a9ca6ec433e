"""What the drawing kernels (shaders/views/) and the views share, defined once: the generated module
gets them as constants, and the views and the UI's legends read them. The heatmap panels, contour
lines, the non-finite colour, and the data view's colours (the Playground's orange and blue first,
then ColorBrewer's Set1; values run orange through light grey to blue)."""

from __future__ import annotations

# ---- heatmap panels: ids matched by drawHeatmaps in shaders/views/visualize.slang -----------------------
HEATMAP_PANELS = ("ground truth", "learned", "|error|")
# What the panels show: the values, their derivatives in x or in y, or the gradient's length
# sqrt((df/dx)^2 + (df/dy)^2) (the atlas holds all four).
HEATMAP_VIEWS = ("values", "∂/∂x", "∂/∂y", "|grad f|")
GRADIENT_VIEW = 3  # its scale is centred on 1, a distance field's gradient length
# Contours over the value panels (a distance field's presentation): the zero level solid and
# opaque, the isolines every `spacing` thinner and translucent, both this colour (sRGB). Widths
# are in heatmap cells.
CONTOUR_COLOUR = (0.06, 0.06, 0.08)
ZERO_LINE_WIDTH = 1.5
ISOLINE_WIDTH = 1.0
ISOLINE_ALPHA = 0.45
# Cells whose value is not finite get this colour (sRGB), apart from every colour-map colour,
# and a legend entry beside the colour bars.
INVALID_COLOUR = (1.0, 0.0, 1.0)


def heatmap_constants() -> str:
    """The heatmap panels' and views' ids, the contours' look and the invalid colour as Slang
    declarations."""
    lines = [
        f"static const uint PANEL_{name.strip('|').split()[-1].upper()} = {k};" for k, name in enumerate(HEATMAP_PANELS)
    ]
    lines.append(f"static const uint HEATMAP_VIEWS = {len(HEATMAP_VIEWS)};")
    lines.append(f"static const uint GRADIENT_VIEW = {GRADIENT_VIEW};")
    lines.append(f"static const float3 CONTOUR_COLOUR = {_float3(CONTOUR_COLOUR)};")
    for name, value in (("ZERO_LINE_WIDTH", ZERO_LINE_WIDTH), ("ISOLINE_WIDTH", ISOLINE_WIDTH)):
        lines.append(f"static const float {name} = {value!r};")
    lines.append(f"static const float ISOLINE_ALPHA = {ISOLINE_ALPHA!r};")
    lines.append(f"static const float3 INVALID_COLOUR = {_float3(INVALID_COLOUR)};")
    return "\n".join(lines)


# ---- the data view's colours (sRGB) --------------------------------------------------------
CLASS_COLOURS = (  # sRGB
    (0.961, 0.576, 0.133),  # #f59322
    (0.031, 0.467, 0.741),  # #0877bd
    (0.302, 0.686, 0.290),  # green
    (0.596, 0.306, 0.639),  # purple
    (0.894, 0.102, 0.110),  # red
    (0.651, 0.337, 0.157),  # brown
    (0.969, 0.506, 0.749),  # pink
    (0.400, 0.400, 0.400),  # grey
)
NEUTRAL = (0.910, 0.918, 0.922)  # #e8eaeb: the value 0, or an even mix of two classes
# The heatmap under the points is mixed this far toward white, so that the points stand out.
BACKGROUND_LIGHTEN = 0.5
OUTLINE = (0.12, 0.12, 0.14)  # around test points, and training points of a value (regression)


def _float3(colour: tuple[float, float, float]) -> str:
    return "float3({}, {}, {})".format(*map(repr, colour))


def point_constants() -> str:
    """The data view's colours as Slang declarations (plans that train on points)."""
    colours = ", ".join(_float3(c) for c in CLASS_COLOURS)
    return "\n".join(
        [
            f"static const float3 CLASS_COLOURS[{len(CLASS_COLOURS)}] = {{ {colours} }};",
            f"static const float3 NEUTRAL_COLOUR = {_float3(NEUTRAL)};",
            f"static const float3 OUTLINE_COLOUR = {_float3(OUTLINE)};",
            f"static const float BACKGROUND_LIGHTEN = {BACKGROUND_LIGHTEN!r};",
        ]
    )
