"""The ways in: the command line (cli.py, its options, fields and checks), headless runs and what
they write, the app's own process set-up (fast_start.py), and `python -m app.entry.shadergen`,
which prints the generated module for any config.

Imports: anything below it, the UI included; nothing imports it but app/__main__.py and the
benchmarks."""
