"""THE training loop, for the window and headless runs alike: the Session (session.py), the window's
frame loop (frame_driver.py) with its learned budget, and rebuilds beside the running network
(rebuild.py). Each module's job: docs/architecture.md, 'app/loop/'.

Imports: views, train, gpu, kernels, config, truth, errors and resources."""
