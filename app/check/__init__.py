"""The gradient check: the training kernels' parameter gradient against an independent SlangPy path
(grad_reference.py), and that path against float64 central differences; a nested loss against its
numpy twin (nested_loss.py). How: docs/architecture.md, 'The gradient check'.

Imports: train, gpu, kernels, model, truth, errors and resources."""
