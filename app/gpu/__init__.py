"""The one SlangPy device and what belongs to it: its creation on the adapter asked for, the Gpu that
submits work and reads results back, the kernels compiled for each plan, GPU timestamps, compile
progress, and a user's Slang target probed on the device (docs/architecture.md, 'app/gpu/').

Imports: kernels, config, truth, errors and resources."""
