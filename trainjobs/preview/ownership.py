"""What ``pulumi up`` will do about who owns each object, shown in the preview.

The stack program reads the cluster's copy of every object the stack declares and
decides with :func:`trainjobs.k8s.ownership.decide` (labels ``trainjobs.dev/stack``,
``trainjobs:adopt``); :func:`mark` makes the same decision from what ``--live`` read, so
the preview says what the update will do:

- an object that exists, was not made by this stack and is not adopted: ``refused``, with
  the finding ``pulumi up`` stops with (same rule, message and fix);
- one that exists, is not the stack's and ``adopt`` names: ``adopt``;
- a namespace of ``trainjobs:sharedNamespaces``: ``read``, never create or delete (a
  missing one is refused: ``pulumi up`` reads it and stops);
- everything else: the plan as the comparison made it.

The stack's label is ``<project>.<stack>``: the stack from the stack file's name
(``Pulumi.<stack>.yaml``), the project from the ``name`` of the ``Pulumi.yaml`` next to
or above its folder; either can be given instead (``--stack-name``, ``--project``).

Without the cluster (the last stored render), nothing is known of who made what: an
object ``adopt`` names that the plan creates shows as ``adopt`` (declared intent), and
shared namespaces as ``read``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from trainjobs import limits
from trainjobs.errors import Finding, Rule, Severity, SpecError
from trainjobs.k8s.ownership import STACK_LABEL, ObjectKey, decide, stack_label
from trainjobs.k8s.yamlio import InputError, YamlSyntaxError, load_all, read_bounded
from trainjobs.preview.objects import Key, PreviewObject, Side, key_of
from trainjobs.preview.plan import ObjectPlan, OwnershipNote, Plan, StackOwnership
from trainjobs.preview.store import project_root
from trainjobs.spec.load import CONFIG_NAMESPACE
from trainjobs.spec.stack import StackSpec

__all__ = [
    "PULUMI_NAME",
    "Declared",
    "Identity",
    "LiveOwners",
    "identity_of",
    "mark",
    "shared_namespace",
]

PROJECT_FILE = "Pulumi.yaml"
_STACK_FILE = re.compile(r"^Pulumi\.(.+)\.ya?ml$", re.DOTALL)
PULUMI_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
"""A project or stack name as Pulumi allows it (letters, digits, ``-``, ``_``, ``.``)."""

SHARED_MISSING = Rule(
    "stack.shared_missing",
    "namespace {name!r} is shared (sharedNamespaces), so the stack only reads it, and the "
    "cluster does not have it; `pulumi up` would stop",
    hint="create it first (kubectl create namespace {name}), or move it to "
    "{namespace}:namespaces for the stack to create and own it",
)
UNCHECKED = Rule(
    "preview.ownership_unchecked",
    "who made the objects the cluster already has was not checked: {why}; `pulumi up` "
    "refuses every one that exists and was not made by the stack",
    hint="{fix}",
    severity=Severity.WARNING,
)
PROJECT_NAME = Rule(
    "preview.project_name",
    "the project file has no usable name, which the stack's label "
    "(trainjobs.dev/stack=<project>.<stack>) needs",
    hint="give it a name (letters, digits, '-', '_', '.'), or pass --project NAME",
)


@dataclass(frozen=True)
class Identity:
    """Which stack is previewed, as Pulumi names it.

    Attributes:
        project: the Pulumi project's name.
        stack: the stack's name.
    """

    project: str
    stack: str

    @property
    def label(self) -> str:
        """The ``trainjobs.dev/stack`` value of every object this stack makes."""
        return stack_label(self.project, self.stack)


def _project_name(file: Path) -> str:
    source = str(file)
    try:
        docs = load_all(read_bounded(file, limits.FILE_BYTES), source)
    except (InputError, YamlSyntaxError) as exc:
        raise SpecError.from_findings(
            [Finding("preview.project_name", "", exc.problem, hint=exc.hint, source=source)]
        ) from None
    name = docs[0].get("name") if docs and isinstance(docs[0], Mapping) else None
    if not isinstance(name, str) or not PULUMI_NAME.match(name):
        finding = PROJECT_NAME.at("name", name) if name is not None else PROJECT_NAME.at("name")
        raise SpecError.from_findings([finding.located(source)])
    return name


def identity_of(
    path: Path, *, project: str | None = None, stack: str | None = None
) -> Identity | None:
    """The stack of ``path``, or None when its name or its project's is not known.

    ``stack`` defaults to ``<stack>`` of a ``Pulumi.<stack>.yaml`` (a job file has none);
    ``project`` to the ``name`` of the ``Pulumi.yaml`` next to or above its folder.
    Raises SpecError when that file has no usable name.
    """
    if stack is None:
        match = _STACK_FILE.match(path.name)
        stack = match.group(1) if match else None
    if stack is None:
        return None
    if project is None:
        file = project_root(path) / PROJECT_FILE
        if not file.is_file():
            return None
        project = _project_name(file)
    return Identity(project, stack)


@dataclass(frozen=True)
class Declared:
    """What a stack says about ownership.

    Attributes:
        adopt: the objects ``trainjobs:adopt`` names.
        shared: ``trainjobs:sharedNamespaces``.
        paths: where in the stack each rendered object was declared (``trainjobs:jobs[0]``).
        source: the stack file.
        namespace: the config namespace of the stack's settings.
    """

    adopt: tuple[ObjectKey, ...] = ()
    shared: tuple[str, ...] = ()
    paths: Mapping[ObjectKey, str] | None = None
    source: str = ""
    namespace: str = CONFIG_NAMESPACE

    @classmethod
    def of(cls, stack: StackSpec, rendered: Side) -> Declared:
        """What ``stack`` declares (``rendered``: its render); each object's path as the
        stack program gives it."""
        paths = {
            ObjectKey.of(obj.manifest): f"{CONFIG_NAMESPACE}:{obj.origin}"
            for obj in rendered.objects.values()
        }
        return cls(stack.adopt, stack.shared_namespaces, paths, stack.source)


@dataclass(frozen=True)
class LiveOwners:
    """What the cluster says about ownership.

    Attributes:
        identity: the stack previewed; None when its name is not known (nothing is
            adopted or refused then, and a warning says so).
        labels: the live labels of each object the cluster has (``Side.labels``).
        shared: for each shared namespace, whether the cluster has it.
        missing_identity: why ``identity`` is None, for the warning.
    """

    identity: Identity | None
    labels: Mapping[Key, Mapping[str, str]]
    shared: Mapping[str, bool]
    missing_identity: str = ""


def shared_namespace(name: str) -> dict[str, Any]:
    """The Namespace a shared namespace is: what is read, never written."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _owner(labels: Mapping[str, str]) -> str:
    other = labels.get(STACK_LABEL)
    return f"it belongs to stack {other}" if other else f"it has no {STACK_LABEL} label"


def _adopt_words(key: ObjectKey, declared: Declared, owner: str | None) -> str:
    setting = f"{declared.namespace}:adopt"
    if owner is None:
        return (
            f"adopts {key.title} if it exists and was not made by this stack ({setting} "
            "names it; the cluster was not read: --live reads it), else creates it; either "
            "way `pulumi destroy` will delete it"
        )
    return (
        f"adopts {key.title}: it exists and was not made by this stack ({owner}); {setting} "
        "names it, so `pulumi up` takes it over (labels it as this stack's) and "
        "`pulumi destroy` will delete it"
    )


def _read_plan(name: str, declared: Declared, checked: bool, old: ObjectPlan | None) -> ObjectPlan:
    manifest = shared_namespace(name)
    setting = f"{declared.namespace}:sharedNamespaces"
    words = (
        f"reads Namespace {name}, shared ({setting}): `pulumi up` never creates, changes or "
        "deletes it, and `pulumi destroy` leaves it and what others keep in it"
    )
    if not checked:
        words += " (it must exist: --live checks)"
    obj = PreviewObject(manifest, "", declared.source)
    return ObjectPlan(
        key_of(manifest), "read", old.old if old else None, obj, (), OwnershipNote(setting, words)
    )


def _refused_shared(
    name: str, index: int, declared: Declared, old: ObjectPlan | None
) -> tuple[ObjectPlan, Finding]:
    finding = SHARED_MISSING.at(
        f"{declared.namespace}:sharedNamespaces[{index}]",
        name=name,
        namespace=declared.namespace,
    ).located(declared.source)
    manifest = shared_namespace(name)
    note = OwnershipNote(
        "the cluster does not have it", f"cannot read Namespace {name}: {finding.message}", finding
    )
    obj = PreviewObject(manifest, "", declared.source)
    return ObjectPlan(key_of(manifest), "refused", old.old if old else None, obj, (), note), finding


def _live_marks(
    plans: Mapping[Key, ObjectPlan],
    declared_keys: Mapping[ObjectKey, Key],
    declared: Declared,
    live: LiveOwners,
    mine: str,
) -> tuple[dict[Key, ObjectPlan], list[Finding]]:
    """Adopt and refused, decided for each declared object the cluster has as the stack
    program decides (one object at a time, so each finding stays with its object)."""
    changed: dict[Key, ObjectPlan] = {}
    refusals: list[Finding] = []
    for obj_key, key in declared_keys.items():
        labels = live.labels.get(key)
        if labels is None:
            continue
        decision = decide(
            [obj_key],
            {obj_key: labels},
            mine,
            declared.adopt,
            namespace=declared.namespace,
            paths=declared.paths,
            source=declared.source,
            shared_hint=True,
        )
        owner = _owner(labels)
        if decision.adopted:
            words = _adopt_words(obj_key, declared, owner)
            note = OwnershipNote(f"{declared.namespace}:adopt", words)
            changed[key] = replace(plans[key], action="adopt", ownership=note)
        for finding in decision.refused:
            note = OwnershipNote(owner, f"refused: {finding.message}", finding)
            changed[key] = replace(plans[key], action="refused", ownership=note)
            refusals.append(finding)
    return changed, refusals


def _intent_marks(
    plans: Mapping[Key, ObjectPlan], declared_keys: Mapping[ObjectKey, Key], declared: Declared
) -> dict[Key, ObjectPlan]:
    """Without the cluster: what ``adopt`` names and the plan creates shows as adopt."""
    changed: dict[Key, ObjectPlan] = {}
    for obj_key, key in declared_keys.items():
        named = any(obj_key.same_object(a) for a in declared.adopt)
        if named and plans[key].action == "create":
            words = _adopt_words(obj_key, declared, None)
            note = OwnershipNote(f"{declared.namespace}:adopt", words)
            changed[key] = replace(plans[key], action="adopt", ownership=note)
    return changed


def _shared_marks(
    plans: Mapping[Key, ObjectPlan], new: Side, declared: Declared, live: LiveOwners | None
) -> tuple[list[ObjectPlan], list[Finding]]:
    """A read for each shared namespace the render does not declare itself (refused when
    the cluster, read, does not have it)."""
    shared: list[ObjectPlan] = []
    refusals: list[Finding] = []
    for index, name in enumerate(declared.shared):
        key = key_of(shared_namespace(name))
        if key in new.objects:
            continue  # the render declares it: owned, decided with the other objects
        if live is not None and not live.shared.get(name, False):
            read, finding = _refused_shared(name, index, declared, plans.get(key))
            refusals.append(finding)
        else:
            read = _read_plan(name, declared, live is not None, plans.get(key))
        shared.append(read)
    return shared, refusals


def mark(plan: Plan, new: Side, declared: Declared, live: LiveOwners | None = None) -> Plan:
    """``plan`` (``new`` over the cluster, or over the last render when ``live`` is None)
    with what ``pulumi up`` does about ownership.

    Unchanged when the stack neither adopts nor shares anything and nothing is refused,
    adopted or left unchecked.
    """
    plans = {o.key: o for o in plan.objects}
    declared_keys = {ObjectKey.of(obj.manifest): key for key, obj in new.objects.items()}
    refusals: list[Finding] = []
    unused = decide(
        list(declared_keys),
        {},
        "",
        declared.adopt,
        namespace=declared.namespace,
        source=declared.source,
    ).unused
    warnings = list(unused)
    identity = live.identity if live else None
    if live is not None and identity is not None:
        changed, refusals = _live_marks(plans, declared_keys, declared, live, identity.label)
    elif live is not None:
        changed = {}
        if any(key in live.labels for key in declared_keys.values()):
            warnings.append(
                UNCHECKED.at(
                    "",
                    why=live.missing_identity,
                    fix="pass --stack-name NAME (and --project NAME when no Pulumi.yaml is "
                    "above it) to see what `pulumi up` would refuse or adopt",
                ).located(declared.source)
            )
    else:
        changed = _intent_marks(plans, declared_keys, declared)
    shared, missing = _shared_marks(plans, new, declared, live)
    refusals += missing
    if not (declared.adopt or declared.shared or changed or warnings or refusals):
        return plan
    taken = {o.key for o in shared}
    objects = [*shared, *(changed.get(o.key, o) for o in plan.objects if o.key not in taken)]
    ownership = StackOwnership(identity.label if identity else "", tuple(refusals), tuple(warnings))
    return replace(plan, objects=tuple(objects), ownership=ownership)
