"""The ``trainjobs`` command line.

Every command calls the library (``spec`` → ``check.run``, ``preview``); none
re-implements logic. One module per command (or pair of commands); a command's
help is its function's docstring (see :func:`trainjobs.cli.common.command`).
Exit codes: 0 success (``diff``/``preview``: no changes), 1 ``diff``/``preview``
found changes, 2 bad input (one line per finding, no traceback, nothing written),
3 an internal error (a bug: please report it), 4 ``preview --live``: ``pulumi up`` would
refuse an object the stack did not make (the plan says which and how to fix it).
"""

from __future__ import annotations

import argparse
import codecs
import io
import os
import sys
from collections.abc import Callable, Sequence

from trainjobs.cli import (
    check,
    convert,
    edl,
    frameworks,
    graph,
    preview,
    render,
    sandbox,
    simulate,
)
from trainjobs.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_CODES,
    EXIT_INTERNAL,
    EXIT_OK,
    command,
    print_findings,
)
from trainjobs.errors import SpecError, TrainjobsError
from trainjobs.output import printable_lines

__all__ = ["build_parser", "main"]

_Options = Callable[[argparse.ArgumentParser], None]

# Every command: its name, the function that runs it (its docstring is the help) and what
# adds its arguments; in the order `--help` lists them.
_COMMANDS: tuple[tuple[str, Callable[[argparse.Namespace], int], _Options | None], ...] = (
    ("render", render.cmd_render, render.render_options),
    ("check", check.cmd_check, check.check_options),
    ("graph", graph.cmd_graph, graph.graph_options),
    ("run-local", frameworks.cmd_run_local, frameworks.run_local_options),
    ("diff", preview.cmd_diff, preview.diff_options),
    ("preview", preview.cmd_preview, preview.preview_options),
    ("frameworks", frameworks.cmd_frameworks, None),
    ("crds", frameworks.cmd_crds, frameworks.crds_options),
    ("edl-scale", edl.cmd_edl_scale, edl.edl_scale_options),
    ("sandbox", sandbox.cmd_sandbox, sandbox.sandbox_options),
    ("simulate", simulate.cmd_simulate, simulate.simulate_options),
    ("convert", convert.cmd_convert, convert.convert_options),
)


_NOTHING_DONE = {
    "render": "; nothing was written",
    "graph": "; nothing was written",
    "crds": "; nothing was written",
    "preview": "; nothing was written",
    "run-local": "; nothing was started",
    "convert": "; nothing was written",
}
"""What a command refused for bad input has left undone, for the commands that write
files or start processes; the others (check, diff …) never do, so saying so would
mislead."""


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command, in the order ``--help`` lists them."""
    parser = argparse.ArgumentParser(
        prog="trainjobs",
        description="Render, check and preview distributed training jobs on Kubernetes.",
        epilog=EXIT_CODES
        + " Colour only on a terminal; NO_COLOR=1 turns it off, FORCE_COLOR=1 on.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, func, options in _COMMANDS:
        command_parser = command(sub, name, func)
        if options is not None:
            options(command_parser)
    return parser


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush has nowhere to fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (a test's capture): nothing will flush to a closed pipe


def _stdout_in_utf8() -> None:
    """Make the interpreter's stdout write UTF-8, whatever the locale says.

    Everything trainjobs prints on stdout (YAML, JSON, Mermaid, DOT, tables) must be the
    same bytes on every machine: YAML and JSON are UTF-8 formats, and a locale such as
    tr_TR.ISO-8859-9 or a Windows code page would otherwise make other bytes of the same
    render, or stop half-way at a character it lacks (an em dash in a CRD description).
    A path given on the command line with bytes that are not UTF-8 is written back as
    given (``surrogateescape``, Python's own choice in the C locale), never an error.
    Messages on stderr keep the locale, with what it cannot show escaped (``\\u2014``).
    """
    stream = sys.stdout
    # Only the interpreter's own stream: a caller's (a test's capture) is theirs to encode.
    if type(stream) is not io.TextIOWrapper:
        return
    if codecs.lookup(stream.encoding).name != "utf-8" or stream.errors != "surrogateescape":
        stream.reconfigure(encoding="utf-8", errors="surrogateescape")


def _argument_with_nul(args: argparse.Namespace) -> str | None:
    """The name of the first argument holding a NUL byte (possible through ``main``'s
    list, never from a shell), which every file system call would refuse."""
    for name, value in sorted(vars(args).items()):
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and "\0" in v for v in values):
            return name
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code (see the module docstring)."""
    _stdout_in_utf8()
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    nul = _argument_with_nul(args)
    if nul is not None:
        print(
            f"error: the {nul} argument holds a NUL character, which no path or name can; "
            "fix: check how the command line was built",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    try:
        code = func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except SpecError as exc:
        print_findings(exc.findings, sys.stderr)
        count = len(exc.errors)
        outcome = _NOTHING_DONE.get(args.command, "")
        print(f"{count} error{'s' * (count != 1)}{outcome}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except TrainjobsError as exc:
        print(f"error: {printable_lines(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`trainjobs render … | head`): what it wanted it has; no
        # message, and no second error when Python flushes the closed stdout at exit.
        _silence_stdout()
        return EXIT_OK
    except RecursionError:
        # Inputs are held to TRAINJOBS_MAX_YAML_DEPTH; a structure built in between that
        # still nests too deep is the input's doing, not a crash.
        print(
            "error: the input nests too deeply to process; fix: flatten it, or lower "
            "TRAINJOBS_MAX_YAML_DEPTH so the loader names the place",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except OSError as exc:
        # A file or folder the command had to read or write: unreadable, unwritable,
        # a disk error. The user's environment, not a bug.
        where = f"{exc.filename}: " if exc.filename else ""
        print(
            f"error: {where}{exc.strerror or exc}; fix: check that the path exists and "
            "that you may read (or write) it, then run again",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except Exception as exc:  # a bug: say so in one line, traceback only on request
        if os.environ.get("TRAINJOBS_DEBUG"):
            raise
        print(
            f"internal error: {type(exc).__name__}: {printable_lines(str(exc))} "
            "(set TRAINJOBS_DEBUG=1 for the traceback and please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
