"""``trainjobs check``: every check, a summary line, and the list of rules."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from trainjobs import terminal
from trainjobs.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    add_paths_and_checks,
    add_profile,
    print_findings,
    render_paths,
)
from trainjobs.errors import Finding, Severity, SpecError, TrainjobsError
from trainjobs.output import format_table

__all__ = ["check_options", "cmd_check"]


def _rules_list() -> str:
    from trainjobs.check.rules import RULES

    rows = [("RULE", "SEVERITY", "PROFILE", "CHECKS")]
    rows += [(r.code, r.severity.value, r.level or "any", r.title) for r in RULES]
    return format_table(rows)


def _rules_json() -> str:
    """``--list-rules --output json``: every rule as the table has it, and its docs."""
    from trainjobs.check.rules import RULES

    rules = [
        {
            "code": r.code,
            "severity": r.severity.value,
            "profile": r.level or "any",
            "title": r.title,
            "docs": r.docs,
        }
        for r in RULES
    ]
    return json.dumps({"rules": rules}, indent=2, ensure_ascii=True)


def cmd_check(args: argparse.Namespace) -> int:
    """run every check; exit 0 when clean

    Render and run every check: schemas, names, operator rules and the rule set
    (--list-rules). Errors exit 2; warnings and advice print and exit 0.
    """
    if args.list_rules:
        if args.paths:
            # A PATH here was meant to be checked; listing rules instead would exit 0.
            raise TrainjobsError(
                "--list-rules takes no PATH; fix: run check PATH... and check --list-rules apart"
            )
        if args.output == "json":
            print(_rules_json())
            return EXIT_OK
        print(_rules_list())
        print(
            "\nSilence a rule for one job with `trainjobs: {ignore: [CODE]}` beside it, or for a "
            "stack with `trainjobs:ignore: [CODE]`; a code may be a group such as pss.restricted."
        )
        return EXIT_OK
    if not args.paths:
        raise TrainjobsError("check needs a PATH (or --list-rules)")
    if args.output == "json":
        return _check_json(args)
    renderings = render_paths(args.paths, args.target, args.k8s_version, args.quiet, args.profile)
    if args.quiet:
        return EXIT_OK
    shown = [f for r in renderings for f in r.findings if f.severity is not Severity.ERROR]
    print_findings(shown, sys.stdout)
    objects = sum(len(r.objects) for r in renderings)
    jobs = sum(len(r.jobs) for r in renderings)
    warnings = sum(f.severity is Severity.WARNING for f in shown)
    advice = len(shown) - warnings
    summary = (
        f"ok: {jobs} job{'s' * (jobs != 1)}, {objects} object{'s' * (objects != 1)}, "
        f"0 errors, {warnings} warning{'s' * (warnings != 1)}"
        + (f", {advice} advice" if advice else "")
    )
    terminal.write_lines(sys.stdout, [(summary, "green")])
    return EXIT_OK


def _json(ok: bool, findings: Sequence[Finding], jobs: int, objects: int) -> str:
    errors = sum(f.severity is Severity.ERROR for f in findings)
    warnings = sum(f.severity is Severity.WARNING for f in findings)
    document = {
        "ok": ok,
        "jobs": jobs,
        "objects": objects,
        "errors": errors,
        "warnings": warnings,
        "advice": len(findings) - errors - warnings,
        "findings": [f.as_json() for f in findings],
    }
    # ASCII only: a bidirectional or control character from the input never reaches a
    # terminal raw (as printable() ensures for text output).
    return json.dumps(document, indent=2, ensure_ascii=True)


def _check_json(args: argparse.Namespace) -> int:
    """``check --output json``: one JSON document on stdout, findings or not; exit 2
    on an error as in text output. ``-q`` only hides the progress bar."""
    try:
        renderings = render_paths(args.paths, args.target, args.k8s_version, True, args.profile)
    except SpecError as exc:
        print(_json(False, exc.findings, 0, 0))
        return EXIT_BAD_INPUT
    findings = [f for r in renderings for f in r.findings]
    jobs = sum(len(r.jobs) for r in renderings)
    objects = sum(len(r.objects) for r in renderings)
    print(_json(True, findings, jobs, objects))
    return EXIT_OK


def check_options(check: argparse.ArgumentParser) -> None:
    """The options of ``check``."""
    add_paths_and_checks(check, optional=True)
    add_profile(check)
    check.add_argument("--list-rules", action="store_true", help="list the check rules and exit")
    check.add_argument(
        "--output",
        choices=("text", "json"),
        default="text",
        help=(
            "text (default): one line per finding; json: one document on stdout with every "
            "finding, each naming the cluster stage that refuses it (exit codes unchanged)"
        ),
    )
