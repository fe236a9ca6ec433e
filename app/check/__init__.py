"""The gradient check: the training kernels' parameter gradient against an independent SlangPy
path (grad_reference.py), and that path against central differences of a float64 numpy loss;
for a nested loss (training on derivatives), the kernels against central differences of its
float64 numpy twin (nested_loss.py, with the truths' numpy twins of truth_twin.py).

Imports: train, gpu, kernels, model, truth, errors and resources."""
