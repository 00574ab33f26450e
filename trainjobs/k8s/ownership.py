"""Who owns an object in a shared cluster: the stack that made it, and no one else.

Every object a stack's ``pulumi up`` creates carries the label :data:`STACK_LABEL`
naming the stack (:func:`stack_label`). Before anything is planned, the program reads
the cluster's copy of each object the stack declares and decides here:

- absent: the stack creates it, and owns it from then on;
- present with this stack's label: the stack made it (an earlier update, or one that was
  interrupted before Pulumi recorded it): it is the stack's;
- present without it (another team's, another stack's, made by hand): refused, unless the
  stack's ``adopt`` list names it — then the stack takes it over, and ``pulumi destroy``
  deletes it like anything the stack made.

A Kubernetes provider release before 4.27 creates with server-side apply, which takes an
existing object over without a word; later ones refuse to create what exists unless
``upsertExistingObjects`` is on. Deciding here, from the cluster itself, makes both safe
and gives one message naming the object and the two ways forward.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from trainjobs.errors import Finding, Rule, Severity

__all__ = [
    "ADOPT_KEY",
    "ADOPT_UNUSED",
    "NOT_OURS",
    "STACK_ANNOTATION",
    "STACK_LABEL",
    "Decision",
    "ObjectKey",
    "decide",
    "parse_adopt",
    "stack_label",
]

STACK_LABEL = "trainjobs.dev/stack"
"""The label on every object a stack created: :func:`stack_label` of the stack."""
STACK_ANNOTATION = "trainjobs.dev/stack"
"""The annotation holding the stack's full name (``org/project/stack``), for people."""
ADOPT_KEY = "adopt"
"""The stack setting (``trainjobs:adopt``) naming objects the stack may take over."""

_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_LABEL_MAX = 63


def stack_label(project: str, stack: str) -> str:
    """The value of :data:`STACK_LABEL` for a stack: ``<project>.<stack>``.

    A label value is at most 63 characters of letters, digits, ``-_.``, starting and
    ending with a letter or digit; any other character becomes ``-``, and a longer name
    keeps its first 52 characters and a hash of the whole (so two long names that share
    a beginning still differ).
    """
    whole = f"{project}.{stack}"
    cleaned = re.sub(r"[^-A-Za-z0-9_.]", "-", whole).strip("-_.") or "stack"
    if len(cleaned) <= _LABEL_MAX and cleaned == whole and _LABEL_VALUE.match(cleaned):
        return cleaned
    digest = hashlib.sha256(whole.encode()).hexdigest()[:10]
    return f"{cleaned[:52].rstrip('-_.')}-{digest}"


@dataclass(frozen=True, order=True)
class ObjectKey:
    """One Kubernetes object by kind, namespace and name.

    Attributes:
        api_version: ``v1``, ``kubeflow.org/v1`` …
        kind: ``Namespace``, ``TFJob`` …
        namespace: its namespace; empty for a cluster-scoped object.
        name: ``metadata.name``.
    """

    kind: str
    namespace: str
    name: str
    api_version: str = ""

    @classmethod
    def of(cls, manifest: Mapping[str, object]) -> ObjectKey:
        """The key of a manifest."""
        meta = manifest.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        return cls(
            kind=str(manifest.get("kind", "")),
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name", "")),
            api_version=str(manifest.get("apiVersion", "")),
        )

    @property
    def title(self) -> str:
        """``Kind namespace/name`` (``Kind name`` for a cluster-scoped object)."""
        return (
            f"{self.kind} {self.namespace}/{self.name}"
            if self.namespace
            else (f"{self.kind} {self.name}")
        )

    @property
    def adopt_entry(self) -> str:
        """How ``trainjobs:adopt`` names it: ``Kind/namespace/name`` or ``Kind/name``."""
        return "/".join(p for p in (self.kind, self.namespace, self.name) if p)

    def same_object(self, other: ObjectKey) -> bool:
        """Whether both name one object (the API version does not matter)."""
        return (self.kind, self.namespace, self.name) == (other.kind, other.namespace, other.name)


NOT_OURS = Rule(
    "stack.not_ours",
    "{title} already exists in the cluster and was not made by this stack ({owner}); "
    "`pulumi up` would take it over, and `pulumi destroy` would then delete it",
    hint="give the stack's object another name; or, to manage the existing one from now "
    "on (destroy deletes it), add {entry!r} to {namespace}:{key}{shared}",
)
ADOPT_UNUSED = Rule(
    "stack.adopt_unused",
    "{namespace}:{key} names {entry!r}, which the stack does not declare",
    hint="remove it, or fix the kind, namespace or name (Kind/namespace/name, or Kind/name "
    "for a cluster-wide object)",
    severity=Severity.WARNING,
)
ADOPT_FORM = Rule(
    "stack.adopt",
    "an {key} entry is Kind/namespace/name (Kind/name for a cluster-wide object)",
    hint="e.g. {key}: [Namespace/kubeflow, ConfigMap/training/settings]",
)


def parse_adopt(
    entries: object, namespace: str = "trainjobs", source: str = ""
) -> tuple[tuple[ObjectKey, ...], list[Finding]]:
    """The objects a stack's ``adopt`` setting names, and a finding for each bad entry."""
    if entries is None:
        return (), []
    if not isinstance(entries, list):
        path = f"{namespace}:{ADOPT_KEY}"
        return (), [ADOPT_FORM.at(path, entries, key=ADOPT_KEY).located(source)]
    keys: list[ObjectKey] = []
    findings: list[Finding] = []
    for i, entry in enumerate(entries):
        parts = entry.split("/") if isinstance(entry, str) else []
        if len(parts) not in (2, 3) or not all(parts):
            path = f"{namespace}:{ADOPT_KEY}[{i}]"
            findings.append(ADOPT_FORM.at(path, entry, key=ADOPT_KEY).located(source))
            continue
        kind, *rest = parts
        ns, name = (rest[0], rest[1]) if len(rest) == 2 else ("", rest[0])
        keys.append(ObjectKey(kind, ns, name))
    return tuple(keys), findings


@dataclass(frozen=True)
class Decision:
    """What ``pulumi up`` may do with the declared objects that already exist.

    Attributes:
        refused: one finding per object that exists and is not the stack's, and not
            adopted (``pulumi up`` must stop before anything is planned).
        adopted: the existing objects not yet the stack's that ``adopt`` names: the
            update takes them over (and labels them as the stack's).
        unused: a warning per ``adopt`` entry that names no declared object.
    """

    refused: tuple[Finding, ...] = ()
    adopted: tuple[ObjectKey, ...] = ()
    unused: tuple[Finding, ...] = ()


def _owner(labels: Mapping[str, str]) -> str:
    other = labels.get(STACK_LABEL)
    return f"it belongs to stack {other}" if other else f"it has no {STACK_LABEL} label"


def decide(
    declared: Sequence[ObjectKey],
    live: Mapping[ObjectKey, Mapping[str, str] | None],
    mine: str,
    adopt: Iterable[ObjectKey] = (),
    *,
    namespace: str = "trainjobs",
    paths: Mapping[ObjectKey, str] | None = None,
    source: str = "",
    shared_hint: bool = False,
) -> Decision:
    """Decide for each declared object from the labels of its live copy.

    ``live`` maps a declared object to its live labels, or None when the cluster does
    not have it (an object missing from ``live`` was not read and is taken as absent).
    ``mine`` is this stack's :func:`stack_label`; ``adopt`` what the stack's ``adopt``
    names. ``paths`` says where in the stack each object was declared (its finding's
    path; default the ``adopt`` setting). ``shared_hint``: also suggest
    ``sharedNamespaces`` for a Namespace.
    """
    wanted = list(adopt)
    refused: list[Finding] = []
    adopted: list[ObjectKey] = []
    for key in declared:
        labels = live.get(key)
        if labels is None or labels.get(STACK_LABEL) == mine:
            continue
        if any(key.same_object(a) for a in wanted):
            adopted.append(key)
            continue
        shared = (
            f", or list it under {namespace}:sharedNamespaces to use it without owning it"
            if shared_hint and key.kind == "Namespace"
            else ""
        )
        path = (paths or {}).get(key, f"{namespace}:{ADOPT_KEY}")
        refused.append(
            NOT_OURS.at(
                path,
                title=key.title,
                owner=_owner(labels),
                entry=key.adopt_entry,
                namespace=namespace,
                key=ADOPT_KEY,
                shared=shared,
            ).located(source)
        )
    unused = [
        ADOPT_UNUSED.at(
            f"{namespace}:{ADOPT_KEY}",
            a.adopt_entry,
            namespace=namespace,
            key=ADOPT_KEY,
            entry=a.adopt_entry,
        ).located(source)
        for a in wanted
        if not any(a.same_object(d) for d in declared)
    ]
    return Decision(tuple(refused), tuple(adopted), tuple(unused))
