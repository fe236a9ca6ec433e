"""The pieces app/kernels/network_module.py prints a plan's Slang module from: each gradient path's
learnGradient (pairs, tiles, fused, lanes), the layer chain they share (chain.py), the truth
(truth.py) and a grid encoding's constants (grid.py)."""
