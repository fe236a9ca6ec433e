"""Training-speed benchmark: the app's trainer beside the tutorial's atomic design and PyTorch."""
