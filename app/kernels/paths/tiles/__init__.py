"""The tiles gradient path: path.py, its Slang, and what they print (README.md says more)."""
