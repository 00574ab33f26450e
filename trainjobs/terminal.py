"""Terminal output for people: colour when it helps, plain text when it would get in the way.

Colour only on a terminal, never when ``NO_COLOR`` is set (https://no-color.org),
always when ``FORCE_COLOR`` is set (CI logs that render ANSI), never for
``TERM=dumb``. Plain output is byte-stable: no colour codes, no wrapping, no
markup interpretation, so scripts and tests can read it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TextIO, TypeVar

from rich.console import Console
from rich.progress import track

__all__ = ["console", "progress", "wants_colour"]

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


class _Console(Console):
    """A rich console that lets a closed pipe surface as BrokenPipeError.

    rich's own answer is ``SystemExit(1)``; the CLI instead ends quietly with 0 when
    its reader has gone (``trainjobs check … | head``), in one place for every command.
    """

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(32, "Broken pipe")


def console(stream: TextIO, environ: Mapping[str, str] | None = None) -> Console:
    """A rich console on ``stream``: coloured per ``wants_colour``, never wrapping lines."""
    colour = wants_colour(stream, environ)
    return _Console(
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
    isatty = getattr(out.file, "isatty", None)
    show = enabled and out.is_terminal and bool(isatty and isatty())
    yield from track(
        items, description=description, total=total, console=out, transient=True, disable=not show
    )
