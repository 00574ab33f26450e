"""``trainjobs render``: manifests on stdout, or one file per object in a folder."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainjobs.cli.common import (
    EXIT_OK,
    add_paths_and_checks,
    add_profile,
    print_findings,
    render_paths,
)
from trainjobs.errors import TrainjobsError
from trainjobs.k8s.redact import redact
from trainjobs.k8s.yamlio import dump_all, dump_one

if TYPE_CHECKING:
    from trainjobs.render import RenderedObject

__all__ = ["add_command", "cmd_render", "write_directory"]


def _file_name(index: int, obj: RenderedObject) -> str:
    _, kind, namespace, name = obj.identity
    parts = [f"{index:04d}", kind.lower(), *([namespace] if namespace else []), name]
    return "-".join(parts) + ".yaml"


def write_directory(objects: Sequence[RenderedObject], directory: Path, show_secrets: bool) -> None:
    """Write one file per object into ``directory``, all or nothing.

    The files go to a fresh temporary folder beside ``directory`` first; only
    when every file is written is it swapped in, so a failure leaves the old
    folder exactly as it was. Nothing else beside it is touched: the temporary
    folders (``.<name>.*``) are gone when this returns, whatever happened.
    Raises TrainjobsError when the folder cannot be written.
    """
    directory = directory.resolve()
    if directory.exists() and not directory.is_dir():
        raise TrainjobsError(f"{directory} is not a directory; nothing was written")
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    except OSError as exc:
        raise TrainjobsError(
            f"cannot write {directory}: {exc.strerror or exc}; nothing was written"
        ) from None
    old: Path | None = None
    swapped = False
    try:
        for index, obj in enumerate(objects):
            manifest = obj.manifest if show_secrets else redact(obj.manifest)
            (staging / _file_name(index, obj)).write_text(dump_one(manifest))
        if directory.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.old.", dir=directory.parent))
            os.rename(directory, old / "previous")
        try:
            os.rename(staging, directory)
            swapped = True
        except BaseException:
            if old is not None:
                os.rename(old / "previous", directory)  # put the old folder back
            raise
    except OSError as exc:
        raise TrainjobsError(
            f"cannot write {directory}: {exc.strerror or exc}; nothing was written"
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        # Never delete the previous folder unless the new one took its place.
        if old is not None and (swapped or not (old / "previous").exists()):
            shutil.rmtree(old, ignore_errors=True)


def _table(objects: Sequence[RenderedObject]) -> str:
    rows = [("KIND", "NAMESPACE", "NAME")] + [
        (kind, namespace or "-", name) for _, kind, namespace, name in (o.identity for o in objects)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    )


def cmd_render(args: argparse.Namespace) -> int:
    renderings = render_paths(args.paths, args.target, args.k8s_version, args.quiet, args.profile)
    objects = [obj for r in renderings for obj in r.objects]
    for rendering in renderings:
        print_findings(rendering.findings, sys.stderr)
    if args.output:
        write_directory(objects, Path(args.output), args.show_secrets)
        if not args.quiet:
            print(_table(objects))
            print(f"\nwrote {len(objects)} objects to {args.output}/")
        return EXIT_OK
    manifests = [o.manifest if args.show_secrets else redact(o.manifest) for o in objects]
    sys.stdout.write(dump_all(manifests))
    return EXIT_OK


def add_command(sub: Any) -> None:
    """Register ``render`` with the subcommand parsers ``sub``."""
    render = sub.add_parser(
        "render",
        help="render jobs to Kubernetes manifests",
        description=(
            "Render jobs to manifests. Without -o: one multi-document YAML stream on stdout. "
            "With -o DIR: one file per object, written all or nothing, and a summary table."
        ),
    )
    add_paths_and_checks(render)
    add_profile(render)
    render.add_argument("-o", "--output", metavar="DIR", help="write one file per object here")
    render.add_argument(
        "--show-secrets", action="store_true", help="print Secret values instead of <redacted>"
    )
    render.set_defaults(func=cmd_render)
