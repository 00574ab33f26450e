"""``trainjobs diff`` and ``trainjobs preview``: what applying would change."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from trainjobs import terminal
from trainjobs.cli.common import (
    EXIT_CHANGES,
    EXIT_OK,
    EXIT_REFUSED,
    add_paths_and_checks,
    progress_over,
)
from trainjobs.errors import Finding, SpecError, TrainjobsError
from trainjobs.output import printable

if TYPE_CHECKING:
    from rich.console import Console

    from trainjobs import preview

__all__ = ["cmd_diff", "cmd_preview", "diff_options", "preview_options"]

_EXIT_CODES = "Exit codes: 0 no changes, 1 changes, 2 bad input, 3 internal error."
_PREVIEW_EXIT_CODES = (
    "Exit codes: 0 no changes, 1 changes, 2 bad input, 3 internal error, 4 (--live) `pulumi "
    "up` would refuse: an object the stack declares exists and was not made by it (nor does "
    "trainjobs:adopt name it), or a shared namespace is missing; the plan marks it ! refused."
)


def _show_plans(plans: Sequence[tuple[preview.Plan, str | None]], args: argparse.Namespace) -> int:
    """Print plans as JSON or for people; the exit code says whether anything changes,
    or whether ``pulumi up`` would refuse (EXIT_REFUSED, above all else)."""
    from trainjobs import preview

    changed = any(plan.changed for plan, _ in plans)
    refused = any(plan.refusals for plan, _ in plans)
    if args.json:
        sys.stdout.write(preview.plans_document(plans))
    elif not args.quiet:
        out: Console = terminal.console(sys.stdout)
        for index, (plan, stack) in enumerate(plans):
            if index:
                out.print()
            heading = f"{stack}: " if stack else ""
            heading += f"{plan.old_label} → {plan.new_label}"
            preview.print_plan(plan, out, heading=heading, diffs=not args.no_diff)
    if refused:
        return EXIT_REFUSED
    return EXIT_CHANGES if changed else EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    """what would change between two renders, or a stack and its version at a git ref

    trainjobs diff OLD NEW: compare two render outputs (directories written by `render -o`,
    YAML streams, or - for stdin). trainjobs diff --against REF PATH...: compare each stack or
    job file with the same file (and the files it references) at git REF. Per object: +
    create, ~ update, - delete, +- replace (by the Pulumi Kubernetes provider's rules), in
    words per job; Secret values never shown. --target and --k8s-version apply to the renders
    --against makes.
    """
    from trainjobs import preview

    if args.against is None:
        if len(args.paths) != 2:
            raise TrainjobsError(
                "diff takes two render outputs (OLD NEW), or stack files with --against REF"
            )
        return _show_plans([(preview.diff_outputs(args.paths[0], args.paths[1]), None)], args)
    plans: list[tuple[preview.Plan, str | None]] = []
    findings: list[Finding] = []
    for path in progress_over(args.paths, "comparing", args.quiet):
        try:
            plan = preview.diff_against(
                Path(path), args.against, target=args.target, k8s_version=args.k8s_version
            )
            plans.append((plan, None))
        except SpecError as exc:
            findings.extend(exc.findings)
    if findings:
        raise SpecError.from_findings(findings)
    return _show_plans(plans, args)


def cmd_preview(args: argparse.Namespace) -> int:
    """what would change since the last preview of a stack (or against the cluster)

    Render each stack and compare it with the render the last preview of that stack stored
    (<project>/.trainjobs/<stack>/last.yaml, git-ignored), then store this one. With --live,
    compare with what the cluster holds instead, read with `kubectl get -o json` (never
    written to). Either way it shows what `pulumi up` does about ownership: = adopt
    (trainjobs:adopt), > read (shared) for trainjobs:sharedNamespaces, and with --live ! refused
    for an object that exists and was not made by this stack (labelled
    trainjobs.dev/stack=<project>.<stack>: --stack-name and --project default to the stack
    file's Pulumi.<stack>.yaml and the Pulumi.yaml above it).
    """
    from trainjobs import preview

    given = [f"--{name}" for name in ("kubeconfig", "context") if getattr(args, name)]
    if given and not args.live:
        # Without --live the plan compares with the last preview: "no changes" would
        # read as "the cluster named here matches".
        raise TrainjobsError(
            f"{' and '.join(given)} choose{'s' * (len(given) == 1)} the cluster --live reads, "
            "and --live is not given; fix: add --live, or leave "
            f"{'it' if len(given) == 1 else 'them'} out to compare with the last preview"
        )
    naming = [
        f"--{name.replace('_', '-')}" for name in ("stack_name", "project") if getattr(args, name)
    ]
    if naming and not args.live:
        # Without --live nothing is read whose owner these would name: dropped silently,
        # they would read as "checked as this stack".
        raise TrainjobsError(
            f"{' and '.join(naming)} name{'s' * (len(naming) == 1)} the stack whose objects "
            "--live tells from others' in the cluster, and --live is not given; fix: add "
            f"--live, or leave {'it' if len(naming) == 1 else 'them'} out"
        )
    if args.stack_name and len(args.paths) > 1:
        # One name for several stacks would take each one's objects for the others'.
        raise TrainjobsError(
            "--stack-name names one stack, and several PATHs are given; fix: preview each "
            "stack on its own with its --stack-name"
        )
    kubectl = (
        preview.Kubectl(kubeconfig=args.kubeconfig, context=args.context) if args.live else None
    )
    previews: list[preview.StackPreview] = []
    findings: list[Finding] = []
    for path in progress_over(args.paths, "previewing", args.quiet):
        try:
            previews.append(
                preview.preview_stack(
                    Path(path),
                    target=args.target,
                    k8s_version=args.k8s_version,
                    state_dir=Path(args.state_dir) if args.state_dir else None,
                    kubectl=kubectl,
                    stack_name=args.stack_name,
                    project=args.project,
                )
            )
        except SpecError as exc:
            findings.extend(exc.findings)
    if findings:
        raise SpecError.from_findings(findings)
    code = _show_plans([(p.plan, p.store.stack) for p in previews], args)
    for stack_preview in previews:
        stack_preview.save()
    return code


def _plan_output(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--json",
        action="store_true",
        help="print the plan as JSON (schema: trainjobs/preview/plan.schema.json)",
    )
    p.add_argument("--no-diff", action="store_true", help="leave out the YAML diff of each object")


def diff_options(diff: argparse.ArgumentParser) -> None:
    """The options of ``diff``."""
    diff.epilog = _EXIT_CODES
    add_paths_and_checks(diff, "OLD NEW render outputs; with --against, stack or job files")
    diff.add_argument(
        "--against", metavar="REF", help="compare PATH with its version at this git ref"
    )
    _plan_output(diff)


def preview_options(preview_cmd: argparse.ArgumentParser) -> None:
    """The options of ``preview``."""
    preview_cmd.epilog = _PREVIEW_EXIT_CODES
    add_paths_and_checks(preview_cmd)
    _plan_output(preview_cmd)
    preview_cmd.add_argument(
        "--live", action="store_true", help="compare with the cluster (needs kubectl)"
    )
    preview_cmd.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig for --live")
    preview_cmd.add_argument("--context", metavar="NAME", help="kubeconfig context for --live")
    preview_cmd.add_argument(
        "--stack-name",
        metavar="NAME",
        type=_pulumi_name,
        help="the Pulumi stack, for --live to tell this stack's objects (labelled "
        "trainjobs.dev/stack=<project>.<stack>) from others' (default: <stack> of "
        "Pulumi.<stack>.yaml; a job file has none)",
    )
    preview_cmd.add_argument(
        "--project",
        metavar="NAME",
        type=_pulumi_name,
        help="the Pulumi project, for that label (default: the name in the Pulumi.yaml "
        "next to or above the stack's folder)",
    )
    preview_cmd.add_argument(
        "--state-dir",
        metavar="DIR",
        help="keep last renders here instead of <project>/.trainjobs",
    )


def _pulumi_name(text: str) -> str:
    """An argparse ``type``: a project or stack name as Pulumi writes it."""
    from trainjobs.preview.ownership import PULUMI_NAME

    if not PULUMI_NAME.match(text):
        raise argparse.ArgumentTypeError(
            f"not a Pulumi name (got {printable(text)!r}): letters, digits, '-', '_' and '.', "
            "at most 100; fix: the stack's short name (`pulumi stack --show-name`), not "
            "org/project/stack"
        )
    return text
