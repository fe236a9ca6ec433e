"""The ground truth a network learns: target expressions, a user's Slang file as text, an image, the
evaluation grid, the check that a truth is finite, and the shapes for signed distances (shapes/).
Point datasets are their own package, app/datasets.

Imports: errors and resources only (config/ builds on it; a Slang file's GPU side is in app/gpu)."""
