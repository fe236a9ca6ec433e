"""The ground truth a network learns: target expressions, a user's Slang file as text, an image, the
evaluation grid, the check that a truth is finite, the shapes for signed distances (shapes/), and a
config's truth section (settings.py). Point datasets are their own package, app/datasets.

Imports: errors, resources, and datasets for a dataset's outputs (config/ builds on it)."""
