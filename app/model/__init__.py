"""What a network is made of, as Python <-> Slang twins: activations (activations.py), encodings
(encodings.py: the Playground's features (features.py), Fourier features and the grids, whose
layout and numpy twin are hashgrid.py), the optimizers and the per-sample losses. Each is a small object with its Slang name and its numpy function; the
shaders hold the Slang side.

Imports: errors and resources only. Everything else builds on this package."""
