"""A headless run: the app without a window, trained for N steps (headless.py), and the files it
leaves (output.py). The command line's --headless and each sweep trial run through it.

Imports: anything below it, the UI included (a run's heatmaps.png is drawn by the UI offscreen)."""
