"""How a network trains on the GPU, decided before anything is compiled: the NetworkPlan derived
from a config (plan.py), the gradient paths it may take (paths/), a step's launch shape and units,
the fused trainer's and lane tiles' layouts, and the generator that prints a plan as the Slang
module the device compiles (shadergen/). Pure Python: nothing here touches a device.

Imports: config, model, truth, datasets, errors and resources."""
