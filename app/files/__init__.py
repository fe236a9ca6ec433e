"""What a run leaves on disk and starts from: checkpoints, network.json, the Slang export, summary.json
and loss.csv, the window's autosave and settings, a sweep's folder for the viewer, and writes that
appear whole or not at all. Each module's job: docs/architecture.md, 'app/files/'.

Imports: loop, views, train, gpu, kernels, config, model, truth, datasets, errors and resources."""
