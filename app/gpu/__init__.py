"""The one SlangPy device and what belongs to it: its creation (device.py) on the adapter asked for
(adapters.py: --gpu, else CUDA_VISIBLE_DEVICES), the Gpu that submits work and reads results back
(gpu.py), the kernels compiled for each plan (kernel_cache.py), GPU timestamps, compile progress,
and a user's Slang target probed on the device.

Imports: kernels, config, truth, errors and resources."""
