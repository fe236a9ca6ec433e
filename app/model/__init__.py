"""What a network is made of, as Python <-> Slang twins: activations, encodings (the grids' layout and
numpy twin in hashgrid.py), optimizers and the per-sample losses, each a small object with its Slang
name and its numpy function; the shaders hold the Slang side.

Imports: errors and resources only. Everything else builds on this package."""
