"""Sweeps: `visual-trainer sweep SPACE --out DIR`, Ray Tune running the trials (each a headless run of
app/run) and Optuna picking their values. Each module's job: docs/architecture.md, 'app/sweep/'.

Imports: anything below it. Ray and Optuna (the optional `sweep` extra) are imported only once a
sweep's input is checked."""
