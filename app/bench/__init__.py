"""The benchmarks, each a tool of one command (`visual-trainer-bench [TOOL]`, in a checkout also
`python -m app.bench [TOOL]`: tools.py) that prints figures and can write them as JSON; their
figures: docs/benchmarks.md. Top-level tools, not core: frame and soak drive the UI and import
app.ui; nothing in the app imports them."""
