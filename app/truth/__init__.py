"""The ground truth a network learns: target expressions (targets.py), a user's Slang file as
text (slang_file.py), an image (image_truth.py), the evaluation grid they are compared on
(eval_grid.py), the check that a truth is finite there (finite.py), and the shapes whose signed
distance a network can learn (shapes/). Point datasets are their own package, app/datasets.

Imports: errors and resources only (config/ builds on it; the GPU side of a Slang file is
app/gpu/target_probe.py)."""
