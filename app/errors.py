"""Errors the user can fix: the entry points print them on one line and exit with code 2."""


class UserError(Exception):
    """Bad input (option, config file, output folder, device choice)."""
