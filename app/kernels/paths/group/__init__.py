"""The group gradient path: its object (path.py), its layout, its generator and its Slang; README.md says more."""
