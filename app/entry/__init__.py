"""The ways in: the command line (cli.py: its options, fields and checks; races), the app's own
process set-up (fast_start.py), and `python -m app.entry.shadergen`, which prints the generated
module for any config.

Imports: anything below it; nothing imports it but app/__main__.py and the benchmarks."""
