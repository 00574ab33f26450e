"""Colour only where it helps: on a terminal, unless NO_COLOR; never wrapped or marked up."""

from __future__ import annotations

import io

from rich.text import Text

from trainjobs import terminal


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_follows_the_terminal_and_the_environment() -> None:
    assert terminal.wants_colour(_Tty(), {})
    assert not terminal.wants_colour(io.StringIO(), {})
    assert not terminal.wants_colour(_Tty(), {"NO_COLOR": "1"})
    assert not terminal.wants_colour(_Tty(), {"TERM": "dumb"})
    assert terminal.wants_colour(io.StringIO(), {"FORCE_COLOR": "1"})
    assert not terminal.wants_colour(io.StringIO(), {"FORCE_COLOR": "1", "NO_COLOR": "1"})


def test_plain_output_has_no_codes_no_wrapping_and_no_markup() -> None:
    stream = io.StringIO()
    line = "spec.containers[0].image [bold]x[/bold] " * 10
    terminal.console(stream, {}).print(Text(line, style="bold red"))
    assert stream.getvalue() == line + "\n"


def test_a_terminal_gets_colour() -> None:
    stream = _Tty()
    terminal.console(stream, {"TERM": "xterm-256color"}).print(Text("replace", style="magenta"))
    assert "\x1b[" in stream.getvalue() and "replace" in stream.getvalue()


def test_no_progress_bar_off_a_terminal() -> None:
    stream = io.StringIO()
    out = terminal.console(stream, {"FORCE_COLOR": "1"})
    assert list(terminal.progress([1, 2, 3], "x", out, total=3, enabled=True)) == [1, 2, 3]
    assert stream.getvalue() == ""


def test_a_progress_bar_on_a_terminal_is_shown() -> None:
    stream = _Tty()
    out = terminal.console(stream, {"TERM": "xterm-256color"})
    assert list(terminal.progress([1, 2], "rendering 2 stacks", out, total=2, enabled=True)) == [
        1,
        2,
    ]
    assert "rendering 2 stacks" in stream.getvalue()


def test_plain_lines_are_what_a_plain_console_prints() -> None:
    samples = [
        "ok: 1 job, 1 object, 0 errors, 0 warnings",
        "  leading and trailing spaces  ",
        "[bold]not markup[/bold] :smile: not an emoji http://x.example/a?b=c",
        "wide 漢字 and combining é and an escaped \\x1b[31m and \\t tab",
        "x" * 500,
        "",
    ]
    plain, ruled = io.StringIO(), io.StringIO()
    terminal.write_lines(plain, [(text, "bold red") for text in samples], {})
    out = terminal.console(ruled, {})
    for text in samples:
        out.print(Text(text, style="bold red"))
    assert plain.getvalue() == ruled.getvalue()


def test_lines_on_a_terminal_are_coloured() -> None:
    stream = _Tty()
    terminal.write_lines(stream, [("replace", "magenta")], {"TERM": "xterm-256color"})
    assert "\x1b[" in stream.getvalue() and "replace" in stream.getvalue()
