"""Sweeps: `visual-trainer sweep SPACE --out DIR` searches hyper-parameters, Ray Tune running the
trials and Optuna picking their values. space.py reads and checks the space file (no Ray or
Optuna); command.py is the command line; driver.py starts Ray and runs Tune; search.py is Tune's
Optuna search, the samplers, the schedulers and the trainable; trial.py is one trial, a headless
run in a Ray worker; journal.py is the Optuna study in DIR/study.journal; table.py writes
trials.csv and best.json.

Imports: anything below it, and app/entry's headless run, beside it (entry's command line hands
`sweep` here). Ray and Optuna are imported only once a sweep's input is checked: they are the
optional `sweep` extra."""
