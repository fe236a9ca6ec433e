"""File > Open sweep...'s viewer of a sweep folder (read by app/files/sweep_folder.py): its state and
actions (viewer.py), the axes and the table's order in plain Python (axes.py), how a trial is marked
(marks.py), the table, the scatter, the parallel coordinates and the window around them.

Imports: as the rest of app/ui."""
