"""One typed configuration for a training run: the table of fields (config.py), what each field
declares (spec.py), the checks that are more than a range (checks.py), and config files and
presets (files.py).

Imports: model, truth, datasets, errors and resources."""
