"""Plans as JSON for machines (``--json``); the format is ``plan.schema.json`` beside this file.

One document per run: ``{"version": 1, "changed": …, "plans": [...]}``, one
plan per compared pair (``diff``: one; ``preview``: one per stack). Objects
that stay the same are counted in ``summary.same`` but not listed.

What ``pulumi up`` does about ownership appears only in a plan that has something
to say (``adopt``, ``read``, ``refused`` objects, the plan's ``ownership``), so the
document of any other stack is as it was.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from trainjobs.preview.plan import SYMBOLS, ObjectPlan, Plan
from trainjobs.preview.words import explain, explain_object

__all__ = ["FORMAT_VERSION", "plan_json", "plans_document", "schema"]

FORMAT_VERSION = 1


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) that ``--json`` output follows."""
    text = (
        resources.files("trainjobs.preview")
        .joinpath("plan.schema.json")
        .read_text(encoding="utf-8")
    )
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _object_json(plan: ObjectPlan, old_label: str, new_label: str) -> dict[str, Any]:
    side = plan.new or plan.old
    group, kind, namespace, name = plan.key
    found: dict[str, Any] = {
        "action": plan.action,
        "symbol": SYMBOLS[plan.action],
        "apiVersion": str(side.manifest.get("apiVersion", "")) if side else group,
        "kind": kind,
        "namespace": namespace or None,
        "name": name,
        "job": plan.job or None,
        "explanation": explain_object(plan),
        "fields": [
            {
                "path": f.change.text,
                "change": f.change.change,
                "replaces": f.replaces,
                "rule": f.rule.cites if f.rule else None,
                "ruleField": f.rule_field or None,
                "refusedBy": f.refused_by.cites if f.refused_by else None,
                "refusedField": f.refused_field or None,
            }
            for f in plan.fields
        ],
        "diff": plan.unified_diff(old_label, new_label),
    }
    if plan.ownership is not None and plan.ownership.refusal is not None:
        found["refusal"] = plan.ownership.refusal.as_json()
    return found


def plan_json(plan: Plan, stack: str | None = None) -> dict[str, Any]:
    """One plan as JSON-ready data."""
    found: dict[str, Any] = {
        "stack": stack,
        "old": plan.old_label,
        "new": plan.new_label,
        "changed": plan.changed,
        "summary": plan.counts(),
        "uncomparedSecrets": plan.uncompared_secrets,
        "objects": [_object_json(o, plan.old_label, plan.new_label) for o in plan.changes],
        "jobs": [
            {
                "job": story.job or None,
                "namespace": story.namespace or None,
                "unit": story.unit or None,
                "restarts": story.restarts,
                "summary": list(story.summary),
                "details": list(story.details),
            }
            for story in explain(plan)
        ],
    }
    if plan.ownership is not None:
        found["ownership"] = {
            "stackLabel": plan.ownership.stack_label or None,
            "refused": [f.as_json() for f in plan.ownership.refusals],
            "warnings": [f.as_json() for f in plan.ownership.warnings],
        }
    return found


def plans_document(plans: Sequence[tuple[Plan, str | None]]) -> str:
    """The ``--json`` text for every (plan, stack) of a run, newline-terminated."""
    document = {
        "version": FORMAT_VERSION,
        "changed": any(plan.changed for plan, _ in plans),
        "plans": [plan_json(plan, stack) for plan, stack in plans],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
