"""One typed configuration for a training run: the table of fields (config.py), what each field
declares (spec.py), the checks that are more than a range (checks.py), a config from a JSON object
(records.py), config files and presets (files.py), and the one ground truth a config learns (truths.py).

Imports: model, truth, datasets, errors and resources."""
