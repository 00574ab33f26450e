"""``trainjobs frameworks``, ``trainjobs crds`` and ``trainjobs run-local``: the
frameworks trainjobs knows, the CRDs it generates for them, and a job run here."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from trainjobs.cli.common import EXIT_OK

# The help text names the folder without importing the CRD generator (every framework)
# to build the parser; a test holds it to trainjobs.frameworks.crds.GENERATED_DIR.
_GENERATED_DIR_HELP = "generated"

__all__ = ["add_commands", "cmd_crds", "cmd_frameworks", "cmd_run_local", "write_crds"]


def cmd_frameworks(args: argparse.Namespace) -> int:
    from trainjobs.frameworks.registry import REGISTRY

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


def cmd_run_local(args: argparse.Namespace) -> int:
    # Imported here: the runner is not needed by the other commands.
    from trainjobs.local import run_local

    return run_local(args.path, job=args.job, timeout=args.timeout).code


def write_crds(directory: Path) -> list[str]:
    """Write every generated CRD under ``directory``; remove files in its ``generated/``
    folder that no framework generates any more. Returns the paths written."""
    from trainjobs.frameworks.crds import GENERATED_DIR, crd_files

    files = crd_files()
    for relative, text in files.items():
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(f".{target.name}.tmp")
        staging.write_text(text)
        os.replace(staging, target)
    owned = directory / GENERATED_DIR
    for path in sorted(owned.glob("*.yaml")) if owned.is_dir() else []:
        if str(path.relative_to(directory)) not in files:
            path.unlink()
    return list(files)


def cmd_crds(args: argparse.Namespace) -> int:
    from trainjobs.frameworks.crds import crd_files

    if args.output is None:
        sys.stdout.write("".join(f"---\n{text}" for text in crd_files().values()))
        return EXIT_OK
    for relative in write_crds(Path(args.output)):
        print(f"wrote {Path(args.output) / relative}")
    return EXIT_OK


def add_run_local(sub: Any) -> None:
    """Register ``run-local`` with the subcommand parsers ``sub``."""
    local = sub.add_parser(
        "run-local",
        help="run a job's pods as processes on this machine",
        description=(
            "Run one job's pods-target expansion as local processes: the container's command "
            "with its env, each replica on its own loopback address (127.0.0.2, …), the job's "
            "restart and success rules. Images are not pulled. Exit codes: 0 the job "
            "succeeded, 1 it failed, 2 bad input, 124 timed out, 130 interrupted."
        ),
    )
    local.add_argument("path", metavar="PATH", help="a stack config or a YAML file of jobs")
    local.add_argument("--job", metavar="NAME", help="the job to run when PATH has several")
    local.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        help="stop every replica after S seconds (exit 124); default: no limit",
    )
    local.set_defaults(func=cmd_run_local)


def add_commands(sub: Any) -> None:
    """Register ``frameworks`` and ``crds`` with the subcommand parsers ``sub``."""
    frameworks = sub.add_parser("frameworks", help="list the frameworks and their targets")
    frameworks.set_defaults(func=cmd_frameworks)

    crds = sub.add_parser(
        "crds",
        help="write the CRDs generated from the framework models",
        description=(
            "Generate a structural CRD for every framework whose upstream CRD had no schema. "
            "Without -o: one YAML stream on stdout. With -o DIR (normally crds/): each file at "
            f"DIR/<its crd_file>; stale files in DIR/{_GENERATED_DIR_HELP}/ are removed."
        ),
    )
    crds.add_argument("-o", "--output", metavar="DIR", help="the crds/ folder to write into")
    crds.set_defaults(func=cmd_crds)
