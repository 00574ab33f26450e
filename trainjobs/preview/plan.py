"""The plan: per object, what applying the new side over the old one would do.

Like ``pulumi preview``: ``create`` (+), ``update`` (~, in place), ``replace``
(+-, delete and create again, decided by :mod:`trainjobs.k8s.replace`),
``delete`` (-) and ``same``. What ``pulumi up`` does about who owns an object
(:mod:`trainjobs.preview.ownership`) adds ``adopt`` (=, take over an existing object
``trainjobs:adopt`` names), ``read`` (>, a shared namespace: read, never changed) and
``refused`` (!, an existing object not made by the stack: ``pulumi up`` stops).
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from trainjobs.errors import Finding
from trainjobs.k8s.changes import FieldChange, Same, align_keys, field_changes, same_value
from trainjobs.k8s.redact import REDACTED
from trainjobs.k8s.yamlio import dump_one
from trainjobs.preview.objects import Key, PreviewObject, Side, ordered_keys, title_of
from trainjobs.preview.rules import ReplaceRule, refusing_rule, replacing_rule
from trainjobs.preview.secrets import SecretNumbers, mask_secrets
from trainjobs.preview.spelling import server_same

__all__ = [
    "ACTIONS",
    "OWNERSHIP_ACTIONS",
    "SYMBOLS",
    "Action",
    "FieldPlan",
    "ObjectPlan",
    "OwnershipNote",
    "Plan",
    "StackOwnership",
    "make_plan",
]

Action = Literal["create", "update", "replace", "delete", "same", "adopt", "read", "refused"]
ACTIONS: tuple[Action, ...] = ("create", "update", "replace", "delete", "same")
"""What every plan counts (``--json``'s ``summary`` always has these)."""
OWNERSHIP_ACTIONS: tuple[Action, ...] = ("adopt", "refused", "read")
"""What ownership makes of an object; counted only in a plan that has them, so the
plan of a stack that neither adopts, shares nor meets another's object reads as before."""
SYMBOLS: dict[Action, str] = {
    "create": "+",
    "update": "~",
    "replace": "+-",
    "delete": "-",
    "same": " ",
    "adopt": "=",
    "read": ">",
    "refused": "!",
}
"""The marks ``pulumi preview`` uses (``=`` its import, ``>`` its read); ``!`` a refusal."""


@dataclass(frozen=True)
class FieldPlan:
    """One changed field and, when it forces a replacement, the rule and field that say so;
    ``refused_by``/``refused_field``: the CRD rule and field by which the API server
    refuses the change (an immutable field of an existing job)."""

    change: FieldChange
    rule: ReplaceRule | None = None
    rule_field: str = ""
    refused_by: ReplaceRule | None = None
    refused_field: str = ""

    @property
    def replaces(self) -> bool:
        return self.rule is not None


@dataclass(frozen=True)
class OwnershipNote:
    """Why an object is adopted, read or refused (:mod:`trainjobs.preview.ownership`).

    Attributes:
        because: the table's BECAUSE OF (``trainjobs:adopt``, the live object's owner …).
        words: the object's plan in a sentence.
        refusal: for a refused object, the finding ``pulumi up`` stops with (the same
            rule, message and fix); None otherwise.
    """

    because: str
    words: str
    refusal: Finding | None = None


@dataclass(frozen=True)
class ObjectPlan:
    """What happens to one object.

    Attributes:
        key: its identity.
        action: create, update, replace, delete or same.
        old: the object on the old side (secrets masked), or None.
        new: the object on the new side (secrets masked), or None.
        fields: the changed fields (update and replace; for adopt and refused, what
            taking the object over would change).
        ownership: why it is adopted, read or refused; None for every other action.
    """

    key: Key
    action: Action
    old: PreviewObject | None
    new: PreviewObject | None
    fields: tuple[FieldPlan, ...] = ()
    ownership: OwnershipNote | None = None

    @property
    def job(self) -> str:
        side = self.new or self.old
        return side.job if side else ""

    @property
    def unit(self) -> str:
        side = self.new or self.old
        return side.unit if side else ""

    @property
    def title(self) -> str:
        return title_of(self.key)

    @property
    def kind(self) -> str:
        return self.key[1]

    @property
    def replacing(self) -> tuple[FieldPlan, ...]:
        return tuple(f for f in self.fields if f.replaces)

    @property
    def refused(self) -> tuple[FieldPlan, ...]:
        """Changed fields the API server refuses to change in place."""
        return tuple(f for f in self.fields if f.refused_by is not None)

    def unified_diff(self, old_label: str = "a", new_label: str = "b") -> str:
        """The change as a unified diff of the two YAML texts (empty when the same, and
        for a read: nothing of it is written)."""
        if self.action == "read":
            return ""
        new = self.new.manifest if self.new else None
        old = align_keys(self.old.manifest, new) if self.old else None
        before = dump_one(old).splitlines(keepends=True) if old is not None else []
        after = dump_one(new).splitlines(keepends=True) if new is not None else []
        lines = difflib.unified_diff(
            before,
            after,
            fromfile=f"{old_label}: {self.title}" if old is not None else "/dev/null",
            tofile=f"{new_label}: {self.title}" if new is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(frozen=True)
class StackOwnership:
    """What a plan says about ownership as a whole (None for a stack that neither adopts
    nor shares anything and meets nothing it did not make).

    Attributes:
        stack_label: the value of ``trainjobs.dev/stack`` this stack's objects carry;
            ``""`` when the cluster was not read or the stack's name is not known.
        refusals: what ``pulumi up`` would stop with, one finding per object.
        warnings: ``adopt`` entries naming nothing the stack declares; ownership that
            could not be checked.
    """

    stack_label: str = ""
    refusals: tuple[Finding, ...] = ()
    warnings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Plan:
    """Every object of both sides, new side's order first, then what only the old side has.

    Attributes:
        old_label: what the old side is (``the last preview``, ``HEAD:stack.yaml``, ``cluster``).
        new_label: what the new side is.
        objects: one plan per object.
    """

    old_label: str
    new_label: str
    objects: tuple[ObjectPlan, ...]
    uncompared_secrets: int = 0
    """Secret values of objects on both sides that read ``<redacted>`` on the new side (a
    render made without ``--show-secrets``): a change to them cannot be seen."""
    ownership: StackOwnership | None = None
    """Refusals and warnings about ownership; None when there is nothing to say."""

    def counts(self) -> dict[Action, int]:
        """Objects per action: every one of ACTIONS, and those of OWNERSHIP_ACTIONS the
        plan has."""
        found = Counter(o.action for o in self.objects)
        counts = {action: found.get(action, 0) for action in ACTIONS}
        counts.update({a: found[a] for a in OWNERSHIP_ACTIONS if found.get(a)})
        return counts

    @property
    def changed(self) -> bool:
        """Whether applying changes anything (reading a shared namespace does not)."""
        return any(o.action not in ("same", "read") for o in self.objects)

    @property
    def changes(self) -> tuple[ObjectPlan, ...]:
        """Every object that is not left as it is: changes, and shared namespaces read."""
        return tuple(o for o in self.objects if o.action != "same")

    @property
    def refusals(self) -> tuple[Finding, ...]:
        """What ``pulumi up`` would stop with (none: it would run)."""
        return self.ownership.refusals if self.ownership else ()


def _plan_one(
    key: Key, old: PreviewObject | None, new: PreviewObject | None, same: Same
) -> ObjectPlan:
    if old is None:
        return ObjectPlan(key, "create", None, new)
    if new is None:
        return ObjectPlan(key, "delete", old, None)
    fields: list[FieldPlan] = []
    # The provider compares what the API server would store: a quantity the server
    # respells (`cpu: 1` for `cpu: "1"`) is no change in a built-in object.
    for change in field_changes(old.manifest, new.manifest, server_same(old.manifest, same)):
        found = replacing_rule(old.manifest, change)
        refused = None if found else refusing_rule(old.manifest, change)
        if found:
            fields.append(FieldPlan(change, *found))
        elif refused:
            fields.append(FieldPlan(change, refused_by=refused[0], refused_field=refused[1]))
        else:
            fields.append(FieldPlan(change))
    if not fields:
        return ObjectPlan(key, "same", old, new)
    action: Action = "replace" if any(f.replaces for f in fields) else "update"
    return ObjectPlan(key, action, old, new, tuple(fields))


def _masked(
    obj: PreviewObject | None, mask: Callable[[Mapping[str, Any]], dict[str, Any]]
) -> PreviewObject | None:
    if obj is None:
        return None
    return PreviewObject(mask(obj.manifest), obj.job, obj.source, obj.unit)


def make_plan(
    old: Side, new: Side, *, secret_key: bytes | None = None, same: Same = same_value
) -> Plan:
    """Compare two sides. Secret values are compared by fingerprint under ``secret_key``.

    Leaf values compare with ``same``; in built-in objects, also as the API server
    stores them (:func:`~trainjobs.preview.spelling.server_same`).

    Without ``secret_key`` they are numbered instead (:class:`SecretNumbers`), the
    same on every run: fine for comparing two sides at once, not for values that
    must match a stored render.
    """
    mask: Callable[[Mapping[str, Any]], dict[str, Any]] = (
        SecretNumbers().mask if secret_key is None else partial(mask_secrets, key=secret_key)
    )
    plans = [
        _plan_one(
            key, _masked(old.objects.get(key), mask), _masked(new.objects.get(key), mask), same
        )
        for key in ordered_keys(old, new)
    ]
    return Plan(old.label, new.label, tuple(plans), _redacted(old, new))


def _redacted(old: Side, new: Side) -> int:
    """How many values read ``<redacted>`` in the new side's objects the old side has."""

    def count(node: Any) -> int:
        if isinstance(node, Mapping):
            return sum(count(v) for v in node.values())
        if isinstance(node, list):
            return sum(count(v) for v in node)
        # `--password=<redacted>`: a password option's value, redacted in place.
        return isinstance(node, str) and (node == REDACTED or node.endswith(f"={REDACTED}"))

    return sum(count(obj.manifest) for key, obj in new.objects.items() if key in old.objects)
