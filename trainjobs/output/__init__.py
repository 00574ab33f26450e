"""Output that never costs the user a file or a clean terminal.

:mod:`~trainjobs.output.folder` writes files and folders so that nothing
trainjobs did not write is ever replaced or removed; :mod:`~trainjobs.output.text`
escapes input-derived text before it reaches a terminal and lines up tables. Bottom layer: only
``errors`` below it. The writers load on first use (PEP 562): building the CLI's
parser needs only the text helpers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainjobs.output.text import aligned, format_table, printable, printable_lines

if TYPE_CHECKING:
    from trainjobs.output.folder import (
        WRITTEN_LIST,
        OutputError,
        Written,
        file_mode,
        safe_file_name,
        write_files,
        write_folder,
    )

__all__ = [
    "WRITTEN_LIST",
    "OutputError",
    "Written",
    "aligned",
    "file_mode",
    "format_table",
    "printable",
    "printable_lines",
    "safe_file_name",
    "write_files",
    "write_folder",
]

_FOLDER = frozenset(__all__) - {"aligned", "format_table", "printable", "printable_lines"}


def __getattr__(name: str) -> Any:
    if name in _FOLDER:
        from trainjobs.output import folder

        return getattr(folder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
