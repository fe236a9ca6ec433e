"""The benchmarks, each a `python -m` tool that prints figures and can write them as JSON
(options.py holds what they share): training speed beside PyTorch (`python -m app.bench`),
start-up (`app.bench.startup`), frame time in the window (`app.bench.frame`) and a long-session
soak (`app.bench.soak`). They are top-level tools, not core: frame and soak drive the offscreen
UI (the soak also the real window) and import app.ui; nothing in the app imports them."""
