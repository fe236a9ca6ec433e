"""What the gradient paths share when they print into the generated module: the loop over a plan's
layers and the inlined helpers a .slang kernel calls (chain.py), the truth source (truth.py), a grid
encoding's constants (grid.py) and the per-thread paths' derivative terms (derivatives.py). Each
path's own printing is in its folder (app/kernels/paths/<name>/shadergen.py)."""
