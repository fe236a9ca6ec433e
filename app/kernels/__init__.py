"""How a network trains on the GPU, decided before anything is compiled: the NetworkPlan, the gradient
paths (paths/, a folder each), a step's launch shape and units, and the generator that prints a plan
as the Slang module the device compiles (shadergen/). Pure Python: nothing here touches a device.

Imports: config, model, truth, datasets, errors and resources."""
