"""What every command shares: registering it, exit codes, rendering many paths,
printing findings and the options several commands take."""

from __future__ import annotations

import argparse
import contextlib
import gc
import inspect
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from trainjobs import terminal
from trainjobs.check.k8s_versions import available_versions
from trainjobs.errors import Finding, Severity, SpecError, TrainjobsError
from trainjobs.output import printable
from trainjobs.spec.choices import DEFAULT_K8S_VERSION, PROFILES, Profile
from trainjobs.targets.names import TARGETS, Target

if TYPE_CHECKING:
    from trainjobs.render import Rendering

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_CHANGES",
    "EXIT_CODES",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_REFUSED",
    "add_paths_and_checks",
    "add_profile",
    "add_quiet",
    "command",
    "k8s_version",
    "number_in",
    "print_findings",
    "progress_over",
    "render_paths",
    "require_output",
]

EXIT_OK = 0
EXIT_CHANGES = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_REFUSED = 4
"""``preview --live``: ``pulumi up`` would refuse an object the stack did not make. Not 1,
which CI lets pass as "changes to review"; not 2: the files are valid (the same stack
previews clean against another cluster), and the plan is printed whole."""

EXIT_CODES = (
    "Exit codes: 0 success (diff/preview: no changes), 1 diff/preview: changes, "
    "2 bad input (every finding listed), 3 internal error, 4 preview --live: pulumi up "
    "would refuse an object the stack did not make."
)


def command(
    sub: Any, name: str, func: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    """Register ``name`` with the subcommand parsers ``sub``, to run ``func``.

    As in click, a command's help is its function's docstring: the first line is what
    ``trainjobs --help`` lists, the rest the description ``trainjobs NAME --help`` prints
    as one paragraph (argparse reflows it; joined here, so that a raw formatter, which
    ``edl-scale`` takes for its epilog, prints no line breaks of the source either).
    """
    summary, _, rest = inspect.cleandoc(func.__doc__ or "").partition("\n")
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=summary, description=" ".join(rest.split()) or None
    )
    parser.set_defaults(func=func)
    return parser


def progress_over(paths: Sequence[str], verb: str, quiet: bool) -> Iterator[str]:
    """``paths`` with a progress bar on stderr when there are several and it is a terminal."""
    if len(paths) < 2 or quiet:
        return iter(paths)  # no bar to draw: no console (rich) to make
    return terminal.progress(
        paths,
        f"{verb} {len(paths)} stacks",
        terminal.console(sys.stderr),
        total=len(paths),
        enabled=len(paths) > 1 and not quiet,
    )


_FROZEN: list[bool] = []  # whether this process froze its modules' objects already


@contextlib.contextmanager
def _modules_loading() -> Iterator[None]:
    """The cyclic garbage collector paused while the modules of a command load.

    Loading them (pydantic building its models) makes hundreds of thousands of objects
    that all live until exit; the collector would walk them again and again and find
    nothing. Afterwards, once per process, they are frozen (``gc.freeze``), so the
    collections of the command's own work skip them too. Together, a quarter of a
    ``trainjobs check`` of one job. Reference counting frees everything else as always.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            if not _FROZEN:
                # Once: a process that runs many commands (a test suite) would
                # otherwise exempt ever more short-lived objects from collection.
                gc.freeze()
                _FROZEN.append(True)
            gc.enable()


def render_paths(
    paths: Sequence[str],
    target: Target | None,
    k8s_version: str | None,
    quiet: bool = True,
    profile: Profile | None = None,
) -> list[Rendering]:
    """Load and render every path; one SpecError with the findings of all of them."""
    # Here, not at the top: building the parser (``--help``) must not load every
    # framework and schema.
    with _modules_loading():
        from trainjobs.check import run
        from trainjobs.check.stages import attribute
        from trainjobs.spec import load_path

    renderings: list[Rendering] = []
    findings: list[Finding] = []
    for path in progress_over(paths, "rendering", quiet):
        try:
            stack = load_path(path)
            renderings.append(run(stack, target=target, k8s_version=k8s_version, profile=profile))
        except SpecError as exc:
            # Findings from loading have no stage yet; those from ``run`` keep theirs.
            findings.extend(attribute(exc.findings))
    if findings:
        raise SpecError.from_findings(findings)
    return renderings


_SEVERITY_STYLES = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.ADVICE: "cyan"}


def print_findings(findings: Sequence[Finding], out: TextIO, quiet: bool = False) -> None:
    """One line per finding, coloured by severity on a terminal; only errors when ``quiet``.
    Each ends with the stage of a real cluster that refuses it (``[rejected by …]``).

    A finding is one line: a newline, ESC or other control character from the
    input in it is shown escaped, never sent to the terminal raw.
    """
    terminal.write_lines(
        out,
        (
            (printable(finding.render(with_stage=True)), _SEVERITY_STYLES.get(finding.severity, ""))
            for finding in findings
            if not quiet or finding.severity is Severity.ERROR
        ),
    )


def number_in(
    above: float, at_most: float = math.inf, example: str = "1"
) -> Callable[[str], float]:
    """An argparse ``type``: a number with ``above < number <= at_most`` (finite).

    argparse's own ``float`` takes ``-1``, ``0``, ``nan`` and ``inf``; an option that
    bounds a run or a ratio would then stop at once or fail later with a traceback.
    The error names the bounds and an ``example`` value; argparse exits 2 with it.
    """
    bounds = f"above {above:g}" + ("" if math.isinf(at_most) else f" and at most {at_most:g}")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and above < value <= at_most):
            raise argparse.ArgumentTypeError(
                f"must be a number {bounds} (got {printable(text)!r}); fix: e.g. {example}"
            )
        return value

    return parse


def k8s_version(text: str) -> str:
    """An argparse ``type``: a Kubernetes version with a bundled schema (``1.32``).

    Checked here, so the error names the option; left to the render, it named the
    stack file's ``k8sVersion``, which the user had not written.
    """
    versions = available_versions()
    if text not in versions:
        raise argparse.ArgumentTypeError(
            f"no schema is bundled for this Kubernetes version (got {printable(text)!r}); "
            f"fix: use one of {', '.join(versions)}"
        )
    return text


def add_quiet(p: argparse.ArgumentParser) -> None:
    """``-q/--quiet``."""
    p.add_argument(
        "-q", "--quiet", action="store_true", help="print only errors; the exit code tells"
    )


def add_paths_and_checks(
    p: argparse.ArgumentParser,
    paths_help: str = "a stack config (stacks/Pulumi.<name>.yaml) or a YAML file of jobs",
    optional: bool = False,
) -> None:
    """``PATH...``, ``-q``, ``--target`` and ``--k8s-version``."""
    p.add_argument("paths", nargs="*" if optional else "+", metavar="PATH", help=paths_help)
    add_quiet(p)
    p.add_argument(
        "--target",
        choices=TARGETS,
        help="render every job to this target, overriding the jobs' own",
    )
    p.add_argument(
        "--k8s-version",
        metavar="X.Y",
        type=k8s_version,
        help=(
            f"Kubernetes version to check against (default: the stack's, else "
            f"{DEFAULT_K8S_VERSION}; bundled: {', '.join(available_versions())})"
        ),
    )


def add_profile(p: argparse.ArgumentParser) -> None:
    """``--profile``: the Pod Security level."""
    p.add_argument(
        "--profile",
        choices=PROFILES,
        help=(
            "Pod Security Standards level every pod is checked against (default: the "
            "stack's trainjobs:podSecurity, else baseline)"
        ),
    )


def require_output(
    args: argparse.Namespace, flag: str, what: str, *, dash_is_stdout: bool = False
) -> None:
    """Refuse ``flag`` (an option about the files ``-o`` writes) when nothing is written.

    Without ``-o`` (or, where ``dash_is_stdout``, with ``-o -``) the command prints
    ``what`` and writes no file, so the option would be silently dropped: a user who
    typed it expects it to act.
    """
    stdout = args.output is None or (dash_is_stdout and args.output == "-")
    if stdout and getattr(args, flag.removeprefix("--").replace("-", "_")):
        how = "with -o -" if args.output == "-" else "without -o"
        raise TrainjobsError(
            f"{flag} is about the files -o writes; {how}, {what} goes to stdout and no "
            f"file is written; fix: write to a file or folder with -o, or leave {flag} out"
        )
