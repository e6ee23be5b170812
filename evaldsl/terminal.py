"""The terminal's width: takes the environment and standard output, gives a column count.

`shutil.get_terminal_size` gives it too, but importing `shutil` loads `bz2`, `lzma` and
`fnmatch` with it (~3.5 ms of every start that asks: argparse asks for each help
formatter it makes, the console report for its progress line).
"""

from __future__ import annotations

import os
import sys


def terminal_columns() -> int:
    """The width in columns, as `shutil.get_terminal_size().columns` gives it: `COLUMNS`
    when it is a positive number, else the width of the terminal standard output was
    started on, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__  # (None without a standard output, as under pythonw)
    try:
        # shutil asks only when COLUMNS or LINES is unset; the width is the same either way
        columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
    except (AttributeError, ValueError, OSError):  # (no fileno, a closed or non-tty stream)
        columns = 0
    return columns or 80
