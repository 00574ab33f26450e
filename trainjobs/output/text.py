"""Text from the user's input made safe for a terminal, a log or a CI page.

A stack file, a job name or a file name may hold a newline, an ESC or another
control character. Printed raw, such a character can forge a line (``ok: 0
errors``), recolour or clear the screen, set the window title, or hide text
(bidirectional overrides). :func:`printable` writes every such character as a
visible escape (``\\n``, ``\\x1b``, ``\\u202e``); :func:`printable_lines`
does the same inside each line of a message trainjobs itself wrapped.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["aligned", "format_table", "printable", "printable_lines"]

_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}

_UNSAFE: dict[int, str] = {
    code: _NAMED.get(code, f"\\x{code:02x}") for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))
}
# Line and paragraph separators break lines in some terminals and viewers; the
# bidirectional controls reorder what is shown ("Trojan Source", CVE-2021-42574).
_UNSAFE.update(
    {
        code: f"\\u{code:04x}"
        for code in (0x2028, 0x2029, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
    }
)
_TABLE = str.maketrans(_UNSAFE)


def printable(text: str) -> str:
    """``text`` with every control, line-breaking or bidirectional character escaped."""
    return text.translate(_TABLE)


def printable_lines(text: str) -> str:
    """Like :func:`printable`, but the line breaks of a multi-line message are kept."""
    return "\n".join(printable(line) for line in text.split("\n"))


def aligned(rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """Each row's cells padded to their column's width, the last cell as it is (a table
    whose cells a caller styles one by one)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [[cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])] + [row[-1]] for row in rows]


def format_table(rows: Sequence[Sequence[str]]) -> str:
    """``rows`` (the first is usually the header) as left-aligned columns two spaces
    apart, one line each, no trailing blanks: the one table every command prints."""
    return "\n".join("  ".join(cells).rstrip() for cells in aligned(rows))
