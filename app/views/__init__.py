"""What the window and the output files show of a network, computed by compute kernels: the grid
evaluation and its losses (evaluation.py), heatmap images, neuron views, the data view of a
dataset, an image target's evaluation and PSNR, and a dataset's loss and accuracy.

Imports: train, gpu, model, truth, errors and resources."""
