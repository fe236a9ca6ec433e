"""The loss plot's series colours, in one place so that every series drawn together can be told apart
(tests/test_loss_plot_series.py measures them in CIELAB): batch blue, training set light blue, test
set orange, the accuracies green and yellow, earlier runs violet and grey (they were violet and
green: the green of "train acc." and of the PSNR), and a colour of its own for each value column."""

from __future__ import annotations

from imgui_bundle import imgui

TRAIN = imgui.ImVec4(0.30, 0.65, 1.00, 1.0)
TRAIN_SET = imgui.ImVec4(0.55, 0.85, 1.00, 1.0)
EVAL = imgui.ImVec4(1.00, 0.60, 0.20, 1.0)
ACCURACY = {"train_accuracy": imgui.ImVec4(0.55, 0.85, 0.45, 1.0), "test_accuracy": imgui.ImVec4(0.95, 0.85, 0.35, 1.0)}
EARLIER = (imgui.ImVec4(0.80, 0.50, 0.90, 1.0), imgui.ImVec4(0.62, 0.62, 0.62, 1.0))  # violet, grey
# Value columns' test losses, by column: red, teal, pink, lime, white, indigo, brown, olive (up
# to 8 outputs; none near another series drawn with them)
OUTPUTS = tuple(
    imgui.ImVec4(r, g, b, 1.0)
    for r, g, b in (
        (0.95, 0.30, 0.30),
        (0.20, 0.75, 0.65),
        (1.00, 0.55, 0.80),
        (0.80, 1.00, 0.30),
        (0.95, 0.95, 0.95),
        (0.45, 0.45, 1.00),
        (0.70, 0.50, 0.30),
        (0.75, 0.70, 0.10),
    )
)
