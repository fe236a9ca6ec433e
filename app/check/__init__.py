"""The gradient check: the training kernels' parameter gradient against an independent SlangPy
path (grad_reference.py), and that path against central differences of a float64 numpy loss.

Imports: train, gpu, kernels, model, truth, errors and resources."""
