"""The benchmarks, each a tool of one command (`visual-trainer-bench [TOOL]`, in a checkout also
`python -m app.bench [TOOL]`: tools.py) that prints figures and can write them as JSON
(options.py holds what they share): training speed beside PyTorch (speed.py), start-up
(`startup`), frame time in the window (`frame`) and a long-session soak (`soak`), among others.
They are top-level tools, not core: frame and soak drive the offscreen UI (the soak also the real
window) and import app.ui; nothing in the app imports them."""
