"""Name and label rules over rendered objects, and uniqueness within a stack."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trainjobs.errors import Finding, Rule, format_path
from trainjobs.k8s.names import (
    dns1035_label_problem,
    dns1123_label_problem,
    dns1123_subdomain_problem,
    label_key_problem,
    label_value_problem,
)
from trainjobs.render import RenderedObject

__all__ = ["LABEL_NAMED", "metadata_problems", "name_findings"]

# Kinds whose names become DNS labels (Service, Namespace) need the stricter rule.
LABEL_NAMED = {"Service": dns1035_label_problem, "Namespace": dns1123_label_problem}


NAME_INVALID = Rule("name.invalid", "the {kind} name {problem}", hint="{fix}")
LABEL_INVALID = Rule(
    "label.invalid",
    "{problem}",
    hint="a job name of 63 characters or fewer keeps its labels valid",
)
ANNOTATION_INVALID = Rule(
    "annotation.invalid",
    "{problem}",
    hint="an annotation key is [prefix/]name, e.g. example.com/owner",
)
NAME_DUPLICATE = Rule("name.duplicate", "{first} already renders {title}", hint="{fix}")

_STACK_NAMESPACES = "namespaces["
"""The origin of a Namespace the stack's ``trainjobs:namespaces`` creates."""


def _rename_fix(obj: RenderedObject) -> str:
    """How to fix an invalid name, by where the object comes from: a job, the stack's
    namespace list, or a platform resource (a backend, a pool, an operator)."""
    if obj.origin.startswith(_STACK_NAMESPACES):
        return "write the namespace in trainjobs:namespaces in lowercase letters, digits and '-'"
    if obj.origin.startswith("jobs["):
        return "shorten or rename the job; object names derive from it"
    return "shorten or rename the resource (its metadata.name); object names derive from it"


def _duplicate_fix(first: RenderedObject, obj: RenderedObject) -> str:
    """How to fix an object rendered twice, by where the two come from."""
    origins = (first.origin, obj.origin)
    others = [o for o in origins if not o.startswith(_STACK_NAMESPACES)]
    if not others:
        return "list the namespace once in trainjobs:namespaces"
    if len(others) == 1:
        return (
            "create the namespace in one place: drop it from trainjobs:namespaces, or set "
            f"createNamespace: false on {others[0]}"
        )
    if all(o.startswith("jobs[") for o in origins):
        return "give one of the jobs another name or namespace"
    return "give one of them another name or namespace"


def _at(rule: Rule, obj: RenderedObject, field: str, value: Any, **facts: Any) -> Finding:
    """The finding of ``rule`` at ``field`` of the rendered ``obj``, located in its source."""
    return rule.at(f"{obj.origin} → {obj.title}: {field}", value, **facts).located(obj.source)


def name_findings(objects: Sequence[RenderedObject]) -> list[Finding]:
    """DNS names, label keys and values, annotation keys, and duplicate objects."""
    findings: list[Finding] = []
    seen: dict[tuple[str, str, str, str], RenderedObject] = {}
    key_problems: dict[str, str | None] = {}

    def key_problem(key: str) -> str | None:
        # Every object of a job carries the same few label and annotation keys: each is
        # checked once (the API server checks annotation keys as it checks label keys).
        if key not in key_problems:
            key_problems[key] = label_key_problem(str(key))
        return key_problems[key]

    for obj in objects:
        meta = obj.manifest.get("metadata") or {}
        kind = str(obj.manifest.get("kind"))
        name = str(meta.get("name", ""))
        rule = LABEL_NAMED.get(kind, dns1123_subdomain_problem)
        problem = rule(name)
        if problem:
            findings.append(
                _at(
                    NAME_INVALID,
                    obj,
                    "metadata.name",
                    name,
                    kind=kind,
                    problem=problem,
                    fix=_rename_fix(obj),
                )
            )
        for key, value in (meta.get("labels") or {}).items():
            key_said, value_said = key_problem(key), label_value_problem(str(value))
            if key_said or value_said:
                findings.append(
                    _at(
                        LABEL_INVALID,
                        obj,
                        f"metadata.labels[{key!r}]",
                        value if value_said else key,
                        problem=key_said or value_said,
                    )
                )
        for key in meta.get("annotations") or {}:
            problem = key_problem(key)
            if problem:
                findings.append(
                    _at(
                        ANNOTATION_INVALID,
                        obj,
                        f"metadata.annotations[{key!r}]",
                        key,
                        problem=problem,
                    )
                )
        identity = obj.identity
        if kind == "CustomResourceDefinition" and identity in seen:
            continue  # check.crd_claims reports it, naming both installers
        if identity in seen:
            first = seen[identity]
            findings.append(
                _at(
                    NAME_DUPLICATE,
                    obj,
                    "metadata.name",
                    name,
                    first=first.origin,
                    title=obj.title,
                    fix=_duplicate_fix(first, obj),
                )
            )
        else:
            seen[identity] = obj
    return findings


def metadata_problems(metadata: Any, prefix: str) -> list[tuple[str, str, Any]]:
    """Label keys and values, and annotation keys, of a pod template's metadata:
    (path from ``prefix``, rule, bad value). The schema check has already
    reported them when they are not strings."""
    if not isinstance(metadata, Mapping):
        return []
    found: list[tuple[str, str, Any]] = []
    for field in ("labels", "annotations"):
        entries = metadata.get(field)
        if not isinstance(entries, Mapping):
            continue
        for key, value in entries.items():
            path = f"{prefix}.{format_path([field, str(key)])}"
            key_problem = label_key_problem(str(key))
            if key_problem:
                found.append((path, key_problem, key))
            elif field == "labels" and isinstance(value, str):
                value_problem = label_value_problem(value)
                if value_problem:
                    found.append((path, value_problem, value))
    return found
