"""How a network trains on the GPU: the NetworkPlan, the gradient paths (paths/, a folder each with
its .slang kernels), a step's launch shape and units, and the module that specialises the kernels
for one network (network_module.py, shadergen/). Its Python touches no device.

Imports: config, model, truth, datasets, errors and resources."""
