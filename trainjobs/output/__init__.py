"""Output that never costs the user a file or a clean terminal.

:mod:`~trainjobs.output.folder` writes files and folders so that nothing
trainjobs did not write is ever replaced or removed; :mod:`~trainjobs.output.text`
escapes input-derived text before it reaches a terminal. Bottom layer: only
``errors`` below it.
"""

from trainjobs.output.folder import (
    WRITTEN_LIST,
    OutputError,
    Written,
    file_mode,
    safe_file_name,
    write_files,
    write_folder,
)
from trainjobs.output.text import printable, printable_lines

__all__ = [
    "WRITTEN_LIST",
    "OutputError",
    "Written",
    "file_mode",
    "printable",
    "printable_lines",
    "safe_file_name",
    "write_files",
    "write_folder",
]
