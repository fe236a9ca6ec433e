"""THE training loop, for the window and headless runs alike: the Session (session.py) advances
steps, evaluates, keeps the loss history and guards against divergence; the window's frame loop
(frame_driver.py) fits training and evaluation into each frame by a learned budget; a new
architecture is rebuilt beside the running one (rebuild.py).

Imports: views, train, gpu, kernels, config, truth, errors and resources."""
