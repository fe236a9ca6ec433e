"""Slang Visual Trainer: train a small MLP with Slang autodiff on one SlangPy device."""

__version__ = "0.1.0"
