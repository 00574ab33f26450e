"""A plan on a terminal, the way ``pulumi preview --diff`` shows one.

Changed objects in a table (``+`` create, ``~`` update, ``+-`` replace, ``-``
delete; ``=`` adopt, ``>`` read (shared), ``!`` refused), what ``pulumi up`` would
stop with, a coloured unified diff of each updated, replaced or adopted object, the
plan in words per job, and the totals. Created and deleted objects are listed, not
printed whole; ``--json`` carries their full diff.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from trainjobs.errors import Severity
from trainjobs.output import aligned, printable
from trainjobs.preview.plan import ACTIONS, OWNERSHIP_ACTIONS, SYMBOLS, Action, ObjectPlan, Plan
from trainjobs.preview.words import explain

__all__ = ["MAX_DIFFS", "MAX_DIFF_BYTES", "STYLES", "print_plan", "totals"]

STYLES: dict[Action, str] = {
    "create": "green",
    "update": "yellow",
    "replace": "magenta",
    "delete": "red",
    "same": "dim",
    "adopt": "cyan",
    "read": "blue",
    "refused": "bold red",
}
_VERBS: dict[Action, str] = {
    "create": "to create",
    "update": "to update",
    "replace": "to replace",
    "delete": "to delete",
    "same": "unchanged",
    "adopt": "to adopt",
    "read": "read (shared)",
    "refused": "refused",
}


def _plan_text(plan: ObjectPlan) -> str:
    """The PLAN column: the action, ``read (shared)``, or ``update (refused)`` when the
    API server refuses a field's change."""
    if plan.action == "read":
        return "read (shared)"
    if plan.action == "update" and plan.refused:
        return "update (refused)"
    return plan.action


def _fields(plan: ObjectPlan, limit: int = 2) -> str:
    if plan.ownership is not None:
        return plan.ownership.because
    fields = plan.replacing if plan.action == "replace" else (plan.refused or plan.fields)
    texts = [f.change.text for f in fields]
    more = f" (+{len(texts) - limit})" if len(texts) > limit else ""
    return ", ".join(texts[:limit]) + more


def _table(changes: Sequence[ObjectPlan], out: Console) -> None:
    rows = [("", "KIND", "NAMESPACE", "NAME", "PLAN", "BECAUSE OF")]
    for plan in changes:
        _, kind, namespace, name = plan.key
        rows.append(
            (
                SYMBOLS[plan.action],
                printable(kind),
                printable(namespace or "-"),
                printable(name),
                _plan_text(plan),
                printable(_fields(plan)),
            )
        )
    for index, cells in enumerate(aligned(rows)):
        line = Text()
        style = "bold" if index == 0 else STYLES[changes[index - 1].action]
        for column, cell in enumerate(cells):
            line.append(cell + ("  " if column < len(cells) - 1 else ""), style=style)
        line.rstrip()
        out.print(line)


def _diff(text: str, out: Console) -> None:
    for raw in text.splitlines():
        style = ""
        if raw.startswith(("---", "+++")):
            style = "bold"
        elif raw.startswith("@@"):
            style = "cyan"
        elif raw.startswith("+"):
            style = "green"
        elif raw.startswith("-"):
            style = "red"
        out.print(Text(printable(raw), style=style))


MAX_DIFFS = 20
"""The most object diffs ``print_plan`` shows; the table and ``--json`` hold every object."""
MAX_DIFF_BYTES = 64 << 10
"""No further object diff is shown once the diffs shown hold this many bytes (64 KiB, a
pull request comment's size); the first one is always shown."""


def _diffs(changed: Sequence[ObjectPlan], out: Console) -> None:
    """The unified diffs of ``changed``, within MAX_DIFFS and MAX_DIFF_BYTES.

    A change to a large job touches every Pod alike (one more worker changes TF_CONFIG
    in 200 Pods): diffs of them all would be megabytes that nobody reads.
    """
    shown = size = 0
    for obj in changed:
        if shown == MAX_DIFFS or size >= MAX_DIFF_BYTES:
            break
        text = obj.unified_diff("old", "new")
        out.print()
        _diff(text, out)
        shown += 1
        size += len(text.encode())
    if shown < len(changed):
        more = len(changed) - shown
        out.print()
        out.print(
            Text(
                f"… the diffs of {more} more object{'s' * (more != 1)} are left out "
                "(the table above lists them; --json carries every diff)",
                style="dim",
            )
        )


def _ownership(plan: Plan, out: Console) -> None:
    """What ``pulumi up`` would stop with, and the warnings about ownership."""
    if plan.ownership is None:
        return
    if plan.refusals:
        out.print()
        out.print(Text("`pulumi up` would stop before changing anything:", style="bold red"))
        for finding in plan.refusals:
            out.print(Text(f"  {printable(finding.render())}", style="red"))
    for finding in plan.ownership.warnings:
        out.print()
        style = "yellow" if finding.severity is Severity.WARNING else ""
        out.print(Text(printable(finding.render()), style=style))


def totals(plan: Plan) -> str:
    """``+- 4 to replace, 15 unchanged`` in one line."""
    counts = plan.counts()
    parts = [
        f"{SYMBOLS[a]} {counts[a]} {_VERBS[a]}"
        for a in (*ACTIONS, *OWNERSHIP_ACTIONS)
        if a != "same" and counts.get(a)
    ]
    parts.append(f"{counts['same']} unchanged")
    return ", ".join(parts) if plan.changed else f"no changes ({counts['same']} unchanged)"


def print_plan(plan: Plan, out: Console, *, heading: str = "", diffs: bool = True) -> None:
    """Everything about ``plan`` for a person reading a terminal."""
    title = heading or f"{plan.old_label} → {plan.new_label}"
    out.print(Text(printable(title), style="bold"))
    changes = plan.changes
    if changes:
        out.print()
        _table(changes, out)
    _ownership(plan, out)
    if diffs:
        _diffs(
            [
                o
                for o in changes
                if o.action in ("update", "replace") or (o.action == "adopt" and o.fields)
            ],
            out,
        )
    for story in explain(plan):
        out.print()
        out.print(Text(printable(story.title), style="bold"))
        for line in story.summary:
            out.print(Text(f"  {printable(line)}", style="magenta" if story.restarts else ""))
        for line in story.details:
            out.print(Text(f"    {printable(line)}"))
    if plan.uncompared_secrets:
        n = plan.uncompared_secrets
        out.print()
        out.print(
            Text(
                f"note: {n} secret value{'s read' if n != 1 else ' reads'} <redacted> (a render "
                f"made without --show-secrets): a change to {'them' if n != 1 else 'it'} cannot "
                "be seen; render both sides with --show-secrets to compare secrets (diff never "
                "prints them)",
                style="yellow",
            )
        )
    out.print()
    counts = plan.counts()
    out.print(Text("Resources:", style="bold"))
    for action in (*ACTIONS, *OWNERSHIP_ACTIONS):
        if action != "same" and counts.get(action):
            out.print(
                Text(
                    f"    {SYMBOLS[action]} {counts[action]} {_VERBS[action]}", style=STYLES[action]
                )
            )
    changed = sum(n for a, n in counts.items() if a not in ("same", "read"))
    out.print(
        Text(
            f"    {changed} change{'s' * (changed != 1)}. {counts['same']} unchanged"
            if changed
            else f"    no changes. {counts['same']} unchanged"
        )
    )
