"""``trainjobs render``: manifests on stdout, or one file per object in a folder."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from trainjobs.cli.common import (
    EXIT_OK,
    add_paths_and_checks,
    add_profile,
    print_findings,
    render_paths,
    require_output,
)
from trainjobs.errors import Finding, SpecError
from trainjobs.k8s.redact import redact
from trainjobs.k8s.yamlio import dump_one
from trainjobs.output import format_table, printable

if TYPE_CHECKING:
    from trainjobs.output.folder import Written
    from trainjobs.render import RenderedObject, Rendering

__all__ = ["cmd_render", "render_options", "write_directory"]


def _file_name(index: int, obj: RenderedObject) -> str:
    from trainjobs.output.folder import safe_file_name

    _, kind, namespace, name = obj.identity
    parts = [f"{index:04d}", kind.lower(), *([namespace] if namespace else []), name]
    return safe_file_name("-".join(parts)) + ".yaml"


def write_directory(
    objects: Sequence[RenderedObject],
    directory: Path,
    show_secrets: bool,
    allow_other_files: bool = False,
) -> Written:
    """Write one file per object into ``directory``, all or nothing.

    Only files an earlier render wrote there (named in its ``.trainjobs-written``)
    are replaced or removed; a folder holding anything else is refused unless
    ``allow_other_files`` (those files then stay untouched). See
    :mod:`trainjobs.output.folder`. Raises OutputError, nothing changed, when the
    folder is refused or cannot be written.
    """
    from trainjobs.output.folder import write_folder

    files = {
        _file_name(index, obj): dump_one(obj.manifest if show_secrets else redact(obj.manifest))
        for index, obj in enumerate(objects)
    }
    return write_folder(directory, files, allow_other_files=allow_other_files)


def _one_output(
    paths: Sequence[str], renderings: Sequence[Rendering]
) -> tuple[list[RenderedObject], list[Finding]]:
    """The objects of every PATH for one output, and an error per pair of PATHs that
    render one object (kind, namespace, name) differently.

    Each PATH is a stack of its own, checked on its own. An object two of them render
    alike (the Namespace two stacks create) is written once, where it first comes; one
    they render differently cannot be: applied twice, the last would win, and
    `trainjobs diff` refuses an output holding an object twice.
    """
    first_of: dict[tuple[str, str, str, str], tuple[int, RenderedObject]] = {}
    objects: list[RenderedObject] = []
    clashes: dict[tuple[int, int], list[str]] = {}
    for index, rendering in enumerate(renderings):
        for obj in rendering.objects:
            came, earlier = first_of.setdefault(obj.identity, (index, obj))
            if earlier is obj:
                objects.append(obj)
            elif earlier.manifest != obj.manifest:
                clashes.setdefault((came, index), []).append(obj.title)
    findings = []
    for (first, second), titles in clashes.items():
        shown = titles[:3] + ([f"and {len(titles) - 3} more"] if len(titles) > 3 else [])
        hint = (
            "render each PATH on its own (an output per stack), or declare the object "
            "alike in both, or in one of them"
        )
        findings.append(
            Finding(
                code="render.shared_object",
                path="",
                message=f"renders {len(titles)} object{'s' * (len(titles) != 1)} that "
                f"{printable(paths[first])} renders otherwise; one output cannot hold two "
                "versions of an object",
                value=shown,
                hint=hint,
                source=paths[second],
            )
        )
    return objects, findings


def _table(objects: Sequence[RenderedObject]) -> str:
    rows = [("KIND", "NAMESPACE", "NAME")] + [
        (printable(kind), printable(namespace or "-"), printable(name))
        for _, kind, namespace, name in (o.identity for o in objects)
    ]
    return format_table(rows)


def cmd_render(args: argparse.Namespace) -> int:
    """render jobs to Kubernetes manifests

    Render jobs to manifests. Without -o: one multi-document YAML stream on stdout. With -o
    DIR: one file per object, written all or nothing, and a summary table;
    DIR/.trainjobs-written lists the files written, and the next render replaces or removes
    only those. A DIR holding anything else is refused.
    """
    # The help spells out trainjobs.output.WRITTEN_LIST (building the parser imports no
    # writer); a test holds the two together.
    require_output(args, "--allow-other-files", "the YAML", dash_is_stdout=True)
    renderings = render_paths(args.paths, args.target, args.k8s_version, args.quiet, args.profile)
    for rendering in renderings:
        print_findings(rendering.findings, sys.stderr, args.quiet)
    objects, shared = _one_output(args.paths, renderings)
    if shared:
        from trainjobs.check.stages import attribute

        raise SpecError.from_findings(attribute(shared))
    # "-o -" is stdout, as for most tools that write files; a folder named "-" is ./-.
    if args.output and args.output != "-":
        done = write_directory(
            objects, Path(args.output), args.show_secrets, args.allow_other_files
        )
        if not args.quiet:
            print(_table(objects))
            where = printable(args.output)
            removed = f", removed {len(done.removed)} it wrote before" if done.removed else ""
            print(f"\nwrote {len(objects)} objects to {where}/{removed}")
        return EXIT_OK
    # Every check has passed: write each document as it is emitted, so a large render
    # never holds its whole output (or a redacted copy of every object) at once.
    write = sys.stdout.write
    for obj in objects:
        write("---\n")
        write(dump_one(obj.manifest if args.show_secrets else redact(obj.manifest)))
    return EXIT_OK


def render_options(render: argparse.ArgumentParser) -> None:
    """The options of ``render``."""
    add_paths_and_checks(render)
    add_profile(render)
    render.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="write one file per object here ('-': the YAML stream on stdout, as without -o)",
    )
    render.add_argument(
        "--allow-other-files",
        action="store_true",
        help=(
            "write into DIR even though it holds files trainjobs did not write (they stay "
            "untouched; a name clash is still refused)"
        ),
    )
    render.add_argument(
        "--show-secrets", action="store_true", help="print Secret values instead of <redacted>"
    )
