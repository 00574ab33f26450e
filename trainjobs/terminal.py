"""Terminal output for people: colour when it helps, plain text when it would get in the way.

Colour only on a terminal, never when ``NO_COLOR`` is set (https://no-color.org),
always when ``FORCE_COLOR`` is set (CI logs that render ANSI), never for
``TERM=dumb``. Plain output is byte-stable: no colour codes, no wrapping, no
markup interpretation, so scripts and tests can read it.

rich is imported only to colour or to draw a progress bar: importing it is a sixth
of what ``trainjobs check`` of one job costs, and plain lines need none of it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import TYPE_CHECKING, TextIO, TypeVar

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["console", "progress", "wants_colour", "write_lines"]

T = TypeVar("T")


def wants_colour(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Whether to colour what goes to ``stream``."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@cache
def _console_class() -> type[Console]:
    from rich.console import Console

    class _Console(Console):
        """A rich console that lets a closed pipe surface as BrokenPipeError.

        rich's own answer is ``SystemExit(1)``; the CLI instead ends quietly with 0 when
        its reader has gone (``trainjobs check … | head``), in one place for every command.
        """

        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(32, "Broken pipe")

    return _Console


def console(stream: TextIO, environ: Mapping[str, str] | None = None) -> Console:
    """A rich console on ``stream``: coloured per ``wants_colour``, never wrapping lines."""
    colour = wants_colour(stream, environ)
    return _console_class()(
        file=stream,
        color_system="auto" if colour else None,
        force_terminal=colour,
        no_color=not colour,
        soft_wrap=True,
        highlight=False,
        markup=False,
        emoji=False,
    )


def progress(
    items: Iterable[T], description: str, out: Console, *, total: int, enabled: bool
) -> Iterator[T]:
    """``items``, with a progress bar on ``out`` while they are worked through.

    Shown only when ``enabled`` and ``out`` is a real terminal (not merely
    coloured); it disappears when done, so logs keep only the results.
    """
    from rich.progress import track

    isatty = getattr(out.file, "isatty", None)
    show = enabled and out.is_terminal and bool(isatty and isatty())
    yield from track(
        items, description=description, total=total, console=out, transient=True, disable=not show
    )


def write_lines(
    stream: TextIO, lines: Iterable[tuple[str, str]], environ: Mapping[str, str] | None = None
) -> None:
    """Each ``(text, style)`` as one line on ``stream``, in the rich ``style`` when
    ``wants_colour``; otherwise the text itself, what a plain :func:`console` prints for
    it (``tests/test_terminal.py`` holds the two equal), without importing rich.

    The text must be one printable line (``output.printable``): no markup is read in it.
    """
    if not wants_colour(stream, environ):
        for text, _ in lines:
            stream.write(text + "\n")
        return
    from rich.text import Text

    out = console(stream, environ)
    for text, style in lines:
        out.print(Text(text, style=style))
