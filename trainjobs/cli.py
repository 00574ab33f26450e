"""The ``trainjobs`` command line.

Every command calls the library (``spec`` → ``check.run``); none re-implements
logic. Exit codes: 0 success, 2 bad input (one line per finding, no
traceback, nothing written), 3 an internal error (a bug: please report it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from trainjobs.check import run
from trainjobs.check.k8s_schema import available_versions
from trainjobs.check.rules import RULES
from trainjobs.errors import Finding, Severity, SpecError, TrainjobsError
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.graph import stack_graph, to_dot, to_mermaid, to_svg
from trainjobs.k8s.redact import redact
from trainjobs.k8s.yamlio import dump_all, dump_one
from trainjobs.render import RenderedObject, Rendering
from trainjobs.spec import load_path
from trainjobs.spec.entry import TARGETS, Target
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, PROFILES, Profile

__all__ = ["main"]

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


def _render_paths(
    paths: Sequence[str],
    target: Target | None,
    k8s_version: str | None,
    profile: Profile | None = None,
) -> list[Rendering]:
    """Load and render every path; one SpecError with the findings of all of them."""
    renderings: list[Rendering] = []
    findings: list[Finding] = []
    for path in paths:
        try:
            stack = load_path(path)
            renderings.append(run(stack, target=target, k8s_version=k8s_version, profile=profile))
        except SpecError as exc:
            findings.extend(exc.findings)
    if findings:
        raise SpecError.from_findings(findings)
    return renderings


def _print_findings(rendering_findings: Sequence[object], out: TextIO) -> None:
    for finding in rendering_findings:
        print(finding, file=out)


def _file_name(index: int, obj: RenderedObject) -> str:
    _, kind, namespace, name = obj.identity
    parts = [f"{index:04d}", kind.lower(), *([namespace] if namespace else []), name]
    return "-".join(parts) + ".yaml"


def write_directory(objects: Sequence[RenderedObject], directory: Path, show_secrets: bool) -> None:
    """Write one file per object into ``directory``, all or nothing.

    The files go to a fresh temporary folder beside ``directory`` first; only
    when every file is written is it swapped in, so a failure leaves the old
    folder exactly as it was.
    """
    directory = directory.resolve()
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        for index, obj in enumerate(objects):
            manifest = obj.manifest if show_secrets else redact(obj.manifest)
            (staging / _file_name(index, obj)).write_text(dump_one(manifest))
        old = None
        if directory.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.old.", dir=directory.parent))
            os.rename(directory, old / "previous")
        os.rename(staging, directory)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _table(objects: Sequence[RenderedObject]) -> str:
    rows = [("KIND", "NAMESPACE", "NAME")] + [
        (kind, namespace or "-", name) for _, kind, namespace, name in (o.identity for o in objects)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    )


def cmd_render(args: argparse.Namespace) -> int:
    renderings = _render_paths(args.paths, args.target, args.k8s_version, args.profile)
    objects = [obj for r in renderings for obj in r.objects]
    for rendering in renderings:
        _print_findings(rendering.findings, sys.stderr)
    if args.output:
        write_directory(objects, Path(args.output), args.show_secrets)
        print(_table(objects))
        print(f"\nwrote {len(objects)} objects to {args.output}/")
        return EXIT_OK
    manifests = [o.manifest if args.show_secrets else redact(o.manifest) for o in objects]
    sys.stdout.write(dump_all(manifests))
    return EXIT_OK


def _rules_list() -> str:
    rows = [("RULE", "SEVERITY", "PROFILE", "CHECKS")]
    rows += [(r.code, r.severity.value, r.level or "any", r.title) for r in RULES]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join([*(c.ljust(widths[i]) for i, c in enumerate(row[:3])), row[3]]).rstrip()
        for row in rows
    )


def cmd_check(args: argparse.Namespace) -> int:
    if args.list_rules:
        print(_rules_list())
        print(
            "\nSilence a rule for one job with `trainjobs: {ignore: [CODE]}` beside it, or for a "
            "stack with `trainjobs:ignore: [CODE]`; a code may be a group such as pss.restricted."
        )
        return EXIT_OK
    if not args.paths:
        raise TrainjobsError("check needs a PATH (or --list-rules)")
    renderings = _render_paths(args.paths, args.target, args.k8s_version, args.profile)
    warnings = [f for r in renderings for f in r.findings if f.severity is not Severity.ERROR]
    _print_findings(warnings, sys.stdout)
    objects = sum(len(r.objects) for r in renderings)
    jobs = sum(len(r.jobs) for r in renderings)
    print(
        f"ok: {jobs} job{'s' * (jobs != 1)}, {objects} object{'s' * (objects != 1)}, "
        f"0 errors, {len(warnings)} warning{'s' * (len(warnings) != 1)}"
    )
    return EXIT_OK


_GRAPH_WRITERS = {".svg": to_svg, ".mmd": to_mermaid, ".md": to_mermaid, ".dot": to_dot}


def _graph_title(path: str) -> str:
    """``stack demo`` for ``stacks/Pulumi.demo.yaml``, else the file's name."""
    name = Path(path).name
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "Pulumi" and parts[2] in ("yaml", "yml"):
        return f"stack {parts[1]}"
    return name


def write_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file, then a rename)."""
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise


def cmd_graph(args: argparse.Namespace) -> int:
    writer = to_mermaid
    if args.output:
        suffix = Path(args.output).suffix.lower()
        if suffix not in _GRAPH_WRITERS:
            raise TrainjobsError(
                f"cannot tell the format of {args.output!r}: name it .svg (Graphviz), "
                ".mmd or .md (Mermaid) or .dot (Graphviz source)"
            )
        writer = _GRAPH_WRITERS[suffix]
    (rendering,) = _render_paths([args.path], args.target, args.k8s_version, args.profile)
    for finding in rendering.findings:
        print(finding, file=sys.stderr)
    text = writer(stack_graph(rendering, _graph_title(args.path)))
    if not args.output:
        sys.stdout.write(text)
        return EXIT_OK
    write_file(Path(args.output), text)
    units, objects = len(rendering.units), len(rendering.objects)
    print(f"wrote {args.output}: {units} unit{'s' * (units != 1)}, {objects} objects")
    return EXIT_OK


def cmd_frameworks(args: argparse.Namespace) -> int:
    rows = [("FRAMEWORK", "KIND", "TARGETS", "OPERATOR", "NOTE")]
    for fw in REGISTRY:
        note = "legacy" if fw.legacy else ""
        rows.append(
            (
                fw.name,
                f"{fw.kind.api_version} {fw.kind.kind}",
                ",".join(fw.targets),
                fw.operator,
                note,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip())
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trainjobs",
        description="Render, check and preview distributed training jobs on Kubernetes.",
        epilog="Exit codes: 0 success, 2 bad input (every finding listed), 3 internal error.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def paths_and_checks(p: argparse.ArgumentParser, optional: bool = False) -> None:
        p.add_argument(
            "paths",
            nargs="*" if optional else "+",
            metavar="PATH",
            help="a stack config (stacks/Pulumi.<name>.yaml) or a YAML file of jobs",
        )
        p.add_argument(
            "--target",
            choices=TARGETS,
            help="render every job to this target, overriding the jobs' own",
        )
        p.add_argument(
            "--k8s-version",
            metavar="X.Y",
            help=(
                f"Kubernetes version to check against (default: the stack's, else "
                f"{DEFAULT_K8S_VERSION}; bundled: {', '.join(available_versions())})"
            ),
        )
        p.add_argument(
            "--profile",
            choices=PROFILES,
            help=(
                "Pod Security Standards level every pod is checked against (default: the "
                "stack's trainjobs:podSecurity, else baseline)"
            ),
        )

    render = sub.add_parser(
        "render",
        help="render jobs to Kubernetes manifests",
        description=(
            "Render jobs to manifests. Without -o: one multi-document YAML stream on stdout. "
            "With -o DIR: one file per object, written all or nothing, and a summary table."
        ),
    )
    paths_and_checks(render)
    render.add_argument("-o", "--output", metavar="DIR", help="write one file per object here")
    render.add_argument(
        "--show-secrets", action="store_true", help="print Secret values instead of <redacted>"
    )
    render.set_defaults(func=cmd_render)

    check = sub.add_parser(
        "check",
        help="run every check; exit 0 when clean",
        description=(
            "Render and run every check: schemas, names, operator rules and the rule set "
            "(--list-rules). Errors exit 2; warnings and advice print and exit 0."
        ),
    )
    paths_and_checks(check, optional=True)
    check.add_argument("--list-rules", action="store_true", help="list the check rules and exit")
    check.set_defaults(func=cmd_check)

    graph = sub.add_parser(
        "graph",
        help="draw a stack: its jobs, backends, node pools, queues, operators and dependencies",
        description=(
            "Draw a stack: one box per job, backend, node pool, queue, operator and namespace, "
            "with its objects (replicas of one role grouped), and an arrow from each to what "
            "needs it. Without -o: Mermaid text on stdout. -o FILE.svg draws SVG with "
            "Graphviz's dot; -o FILE.mmd writes Mermaid; -o FILE.dot the Graphviz source."
        ),
    )
    graph.add_argument("path", metavar="PATH", help="a stack config or a YAML file of jobs")
    graph.add_argument("-o", "--output", metavar="FILE", help="write here (.svg, .mmd, .dot)")
    graph.add_argument("--target", choices=TARGETS, help="render every job to this target")
    graph.add_argument("--k8s-version", metavar="X.Y", help="Kubernetes version to check against")
    graph.add_argument("--profile", choices=PROFILES, help="Pod Security Standards level")
    graph.set_defaults(func=cmd_graph)

    frameworks = sub.add_parser("frameworks", help="list the frameworks and their targets")
    frameworks.set_defaults(func=cmd_frameworks)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except SpecError as exc:
        for finding in exc.findings:
            print(finding, file=sys.stderr)
        count = len(exc.errors)
        print(f"{count} error{'s' * (count != 1)}; nothing was written", file=sys.stderr)
        return EXIT_BAD_INPUT
    except TrainjobsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so in one line, traceback only on request
        if os.environ.get("TRAINJOBS_DEBUG"):
            raise
        print(
            f"internal error: {type(exc).__name__}: {exc} "
            "(set TRAINJOBS_DEBUG=1 for the traceback and please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
