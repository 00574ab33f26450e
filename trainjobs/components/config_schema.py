"""The JSON Schema of a stack config file (``stacks/Pulumi.<stack>.yaml``).

Editors read it through the modeline at the top of each stack file
(``# yaml-language-server: $schema=../schema/stack-config.schema.json``) and then
complete and check every ``trainjobs:*`` key, each job's ``trainjobs:`` options
and each platform resource's ``spec``. It is generated from the same models the
parser validates with (``python -m trainjobs.components.config_schema`` rewrites
``schema/stack-config.schema.json``; a test fails when it is stale), so it can
never accept what the program refuses, nor the reverse, except where noted:
a job's own body (``spec`` of a TFJob …) is checked by its CRD at render time,
not here.

Pulumi.yaml declares the same keys with Pulumi's own (coarser) config types, so
``pulumi`` itself refuses a list where a map belongs before the program runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from trainjobs.components.stack import ALLOW_NO_JOBS
from trainjobs.frameworks import REGISTRY
from trainjobs.platform import API_VERSION, PLATFORM
from trainjobs.spec.choices import DEFAULT_K8S_VERSION, DEFAULT_PROFILE, PROFILES
from trainjobs.spec.entry import OPTIONS_KEY, TARGETS, JobOptions
from trainjobs.spec.load import CONFIG_NAMESPACE, LIST_KEYS
from trainjobs.targets.names import DEFAULT_TARGET

__all__ = ["SCHEMA_PATH", "pulumi_config_types", "stack_config_schema"]

SCHEMA_PATH = Path("schema") / "stack-config.schema.json"
"""Where the schema lives in the repository (relative to its root)."""

_SCALARS: dict[str, dict[str, Any]] = {
    "target": {
        "type": "string",
        "enum": list(TARGETS),
        "default": DEFAULT_TARGET,
        "description": f"Target of jobs that name none. Default {DEFAULT_TARGET}.",
    },
    "k8sVersion": {
        "type": "string",
        "pattern": r"^1\.\d+$",
        "default": DEFAULT_K8S_VERSION,
        "description": "Kubernetes version the manifests are checked against; quote it "
        f'("1.30", not 1.30). Default "{DEFAULT_K8S_VERSION}".',
    },
    "namespaces": {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "description": "Namespaces this stack creates and so owns: pulumi destroy deletes "
        "them with everything in them. A namespace that exists already is refused unless "
        "adopt names it. Default none.",
    },
    "sharedNamespaces": {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "description": "Namespaces this stack uses but never owns: they must exist before "
        "pulumi up, which only reads them; pulumi destroy leaves them and everything in "
        "them. Default none.",
    },
    "adopt": {
        "type": "array",
        "items": {"type": "string", "pattern": "^[^/]+(/[^/]+){1,2}$"},
        "default": [],
        "description": "Existing objects (Kind/namespace/name, or Kind/name for a "
        "cluster-wide one) this stack may take over; from then on it owns them and pulumi "
        "destroy deletes them. Any other existing object the stack declares stops pulumi "
        "up. Default none.",
    },
    "podSecurity": {
        "type": "string",
        "enum": list(PROFILES),
        "default": DEFAULT_PROFILE,
        "description": f"Pod Security Standards level checked. Default {DEFAULT_PROFILE}.",
    },
    "ignore": {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "description": "Check rule codes (or groups) silenced for the whole stack. Default none.",
    },
    ALLOW_NO_JOBS: {
        "type": "boolean",
        "default": False,
        "description": "true: the stack may declare no jobs although its last update had "
        "some (they are deleted). Default false: such a stack fails before planning.",
    },
}


def _job_entry() -> dict[str, Any]:
    # A job list may hold the definitions its jobs name too (Trainer runtimes).
    kinds = sorted({k.kind for f in REGISTRY for k in (f.kind, *f.definition_kinds)})
    options = {"$ref": "#/$defs/JobOptions"}
    return {
        "description": "A job: the upstream custom resource as its operator accepts it (or a "
        "document it names, such as a Trainer runtime), or "
        "{file: path} naming a file of them (relative to the stack file's folder); "
        f"trainjobs' own options beside it under {OPTIONS_KEY}:.",
        "anyOf": [
            {
                "type": "object",
                "required": ["file"],
                "properties": {"file": {"type": "string"}, OPTIONS_KEY: options},
                "additionalProperties": False,
            },
            {
                "type": "object",
                "required": ["apiVersion", "kind", "metadata"],
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"enum": kinds},
                    "metadata": {"type": "object", "required": ["name"]},
                    "spec": {"type": "object"},
                    OPTIONS_KEY: options,
                },
            },
        ],
    }


def _platform_entry(category: str) -> dict[str, Any]:
    return {
        "anyOf": [
            {
                "type": "object",
                "required": ["file"],
                "properties": {"file": {"type": "string"}},
                "additionalProperties": False,
            },
            *({"$ref": f"#/$defs/{p.model.__name__}"} for p in PLATFORM if p.category == category),
        ]
    }


def stack_config_schema(namespace: str = CONFIG_NAMESPACE) -> dict[str, Any]:
    """The schema of a whole stack config file, its settings in ``namespace``."""
    mode: Literal["validation"] = "validation"
    models: list[tuple[type[BaseModel], Literal["validation"]]] = [(JobOptions, mode)]
    models += [(p.model, mode) for p in PLATFORM]
    _, top = models_json_schema(models, ref_template="#/$defs/{model}")
    defs: dict[str, Any] = dict(top.get("$defs", {}))
    for plugin in PLATFORM:
        # apiVersion may be left out in a stack (the kind says it all).
        model = defs[plugin.model.__name__]
        model["required"] = [r for r in model.get("required", []) if r != "apiVersion"]
        model.setdefault("properties", {})["apiVersion"] = {"const": API_VERSION}
    settings: dict[str, Any] = {f"{namespace}:{k}": v for k, v in _SCALARS.items()}
    for key, expect in LIST_KEYS.items():
        item = _job_entry() if expect == "job" else _platform_entry(expect)
        settings[f"{namespace}:{key}"] = {"type": "array", "items": item, "default": []}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "trainjobs stack config (stacks/Pulumi.<stack>.yaml)",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": settings,
                # Another provider's settings (kubernetes:context …) are not ours; a
                # misspelt one of ours is refused, as the program refuses it.
                "propertyNames": {
                    "anyOf": [
                        {"not": {"pattern": f"^{namespace}:"}},
                        {"enum": sorted(settings)},
                    ]
                },
            },
        },
        "$defs": dict(sorted(defs.items())),
    }


def pulumi_config_types(namespace: str = CONFIG_NAMESPACE) -> dict[str, dict[str, Any]]:
    """The ``config:`` block of Pulumi.yaml: each setting with Pulumi's type and default.

    Pulumi's config types are string, integer, boolean, array (with ``items``) and
    object; a declared key without a default is required, so every one has one.
    """
    out: dict[str, dict[str, Any]] = {}
    for key, spec in _SCALARS.items():
        entry: dict[str, Any] = {"type": spec["type"], "description": spec["description"]}
        if spec["type"] == "array":
            entry["items"] = {"type": spec["items"]["type"]}
        entry["default"] = spec["default"]
        out[f"{namespace}:{key}"] = entry
    for key, expect in LIST_KEYS.items():
        what = "jobs" if expect == "job" else f"{expect} resources"
        out[f"{namespace}:{key}"] = {
            "type": "array",
            "items": {"type": "object"},
            "description": f"The stack's {what}; see schema/stack-config.schema.json.",
            "default": [],
        }
    return dict(sorted(out.items()))


def main() -> None:
    """Write the schema to ``schema/stack-config.schema.json`` under the current folder."""
    path = Path.cwd() / SCHEMA_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(stack_config_schema(), indent=2, sort_keys=False) + "\n")
    sys.stdout.write(f"wrote {SCHEMA_PATH}\n")


if __name__ == "__main__":
    main()
