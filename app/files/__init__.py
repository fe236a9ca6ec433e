"""What a run leaves on disk and starts from: checkpoints (checkpoint.py, with the byte format in
checkpoint_format.py), network.json, the Slang export, a run's summary.json and loss.csv
(run_summary.py), the window's autosave and saved settings, what a run starts from (start.py),
a sweep's folder as the window's sweep viewer reads it (sweep_folder.py), Help > About's version
and README (about.py), and writes that appear whole or not at all (atomic.py).

Imports: loop, views, train, gpu, kernels, config, model, truth, datasets, errors and resources."""
