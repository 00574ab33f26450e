"""The Pulumi package schema of the ``trainjobs`` component provider.

Generated from the same pydantic models the parser validates with: each job kind
(TFJob, PyTorchJob, TrainJob …), each platform kind's ``spec`` (RedisBackendSpec,
GpuNodePoolSpec …) and the job options become object types with their fields'
descriptions; a field with a fixed set of values becomes an enum type. Pulumi YAML
checks a program against it, and the TypeScript and Go SDKs are generated from it.

``python -m trainjobs.provider.schema`` rewrites ``schema/provider.schema.json``;
``tests/provider/test_schema.py`` fails when the committed file is stale. Pure: no
pulumi import (the provider serves the same dict).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from trainjobs.frameworks import REGISTRY
from trainjobs.platform import PLATFORM
from trainjobs.spec.choices import DEFAULT_K8S_VERSION
from trainjobs.spec.entry import JobOptions
from trainjobs.targets.names import TARGETS

__all__ = [
    "PACKAGE",
    "PLATFORM_RESOURCES",
    "SCHEMA_PATH",
    "VERSION",
    "package_schema",
    "schema_text",
    "token",
]

PACKAGE = "trainjobs"
"""The package name: the first part of every token, and the plugin's name."""
VERSION = "0.1.0"
"""The provider's version, as the engine records it in the state."""
SCHEMA_PATH = Path("schema") / "provider.schema.json"
"""Where the schema lives in the repository (relative to its root)."""
ANY = {"$ref": "pulumi.json#/Any"}

_PLATFORM_DOCS = {
    "backend": "A rendezvous backend",
    "nodePool": "A GPU node pool",
    "queue": "A GPU quota (Kueue) on a node pool",
    "operator": "An operator install",
}
PLATFORM_RESOURCES: tuple[str, ...] = tuple(p.kind for p in PLATFORM)
"""Every platform kind, each served as ``trainjobs:index:<kind>``."""


def token(name: str) -> str:
    """The schema token of a type or resource: ``trainjobs:index:<name>``."""
    return f"{PACKAGE}:index:{name}"


def _module_part(module: str) -> str:
    """The framework a model's module is of (``caffe2`` for ``frameworks/_caffe2_model``):
    a type's public name must not follow where the code keeps it."""
    parts = [p for p in module.split(".") if p not in ("model", "models")]
    last = parts[-1].strip("_").removesuffix("_models").removesuffix("_model")
    return _pascal(last.replace("_", " "))


def _type_name(name: str, modules: Mapping[str, str], taken: set[str]) -> str:
    """A type's name: the model's; for a name two models share (pydantic qualifies it as
    ``a__b__module__Class``) or a resource has, the module's and the model's
    (``Caffe2TerminationPolicy``, ``PaddleEdlTrainingJob``)."""
    parts = name.split("__")
    if len(parts) > 1:
        return _module_part(".".join(parts[:-1])) + parts[-1]
    if name in taken:
        return _module_part(modules[name]) + name
    return name


def _modules(models: Iterable[type[BaseModel]]) -> dict[str, str]:
    """The module of every model reachable from ``models``, by class name."""
    found: dict[str, str] = {}

    def walk(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation.__name__ in found:
                return
            found[annotation.__name__] = annotation.__module__
            for field in annotation.model_fields.values():
                walk(field.annotation)
        for arg in get_args(annotation):
            walk(arg)

    for model in models:
        walk(model)
    return found


def _pascal(text: str) -> str:
    parts = re.split(r"[^A-Za-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text))
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


class _Converter:
    """Turns pydantic JSON Schema into Pulumi schema types, collecting enum types."""

    def __init__(
        self, names: Mapping[str, str], enum_names: Mapping[tuple[str, ...], str] | None = None
    ) -> None:
        self.names = names
        """pydantic def name → Pulumi type name."""
        self.enums: dict[str, dict[str, Any]] = {}
        self._enum_by_values: dict[tuple[str, ...], str] = dict(enum_names or {})
        self.uses: dict[tuple[str, ...], list[tuple[str, str]]] = {}
        """Each set of enum values → the (owner, field) pairs that have it, in order."""

    def enum_names(self) -> dict[tuple[str, ...], str]:
        """A name for each set of enum values seen: ``<Owner><Field>`` for one field of one
        type; ``<Field>`` for the field of that name several types share (a TFJob's and an
        MSJob's ``successPolicy``); the first owner's name otherwise or when taken."""
        out: dict[tuple[str, ...], str] = {}
        taken = set(self.names.values())
        for key, uses in self.uses.items():
            owner, field = uses[0]
            name = f"{owner}{_pascal(field)}"
            if len(uses) > 1 and len({f for _, f in uses}) == 1:
                name = _pascal(field)
            while name in taken:
                name = f"{owner}{_pascal(field)}" if name == _pascal(field) else name + "Value"
            taken.add(name)
            out[key] = name
        return out

    def ref(self, ref: str) -> dict[str, Any]:
        return {"$ref": f"#/types/{token(self.names[ref.rsplit('/', 1)[-1]])}"}

    def enum(self, owner: str, field: str, values: list[Any], doc: str) -> dict[str, Any]:
        key = tuple(str(v) for v in values)
        if (owner, field) not in self.uses.setdefault(key, []):
            self.uses[key].append((owner, field))
        name = self._enum_by_values.get(key) or f"{owner}{_pascal(field)}"
        if name not in self.enums:
            self.enums[name] = {
                "type": "string",
                "description": doc or f"The values of {owner}.{field}.",
                "enum": [{"name": _pascal(str(v)) or "Empty", "value": v} for v in values],
            }
        return {"$ref": f"#/types/{token(name)}"}

    def prop(self, schema: Mapping[str, Any], owner: str, field: str) -> dict[str, Any]:
        """A property (or item) type from a JSON Schema fragment."""
        if "$ref" in schema:
            return self.ref(schema["$ref"])
        if "anyOf" in schema or "oneOf" in schema:
            options = [
                o for o in schema.get("anyOf", schema.get("oneOf", [])) if o != {"type": "null"}
            ]
            texts = [
                o for o in options if o.get("type") == "string" and ("const" in o or "enum" in o)
            ]
            if options and len(texts) == len(options):
                values = [v for o in texts for v in o.get("enum", [o.get("const")])]
                return self.prop({"type": "string", "enum": values}, owner, field)
            if len(options) == 1:
                return self.prop(options[0], owner, field)
            converted = [self.prop(o, owner, field) for o in options]
            unique = [c for i, c in enumerate(converted) if c not in converted[:i]]
            return unique[0] if len(unique) == 1 else {"oneOf": unique}
        if "const" in schema:
            return {"type": "string", "const": schema["const"]}
        kind = schema.get("type")
        if "enum" in schema:
            values = list(schema["enum"])
            if all(isinstance(v, str) for v in values):
                if len(values) == 1:
                    return {"type": "string", "const": values[0]}
                return self.enum(owner, field, values, schema.get("description", ""))
            return {"type": kind or "string"}
        if kind in ("string", "integer", "number", "boolean"):
            return {"type": kind}
        if kind == "array":
            items = schema.get("items")
            return {"type": "array", "items": self.prop(items, owner, field) if items else ANY}
        if kind == "object":
            extra = schema.get("additionalProperties")
            if isinstance(extra, Mapping) and extra:
                return {"type": "object", "additionalProperties": self.prop(extra, owner, field)}
            return dict(ANY)
        return dict(ANY)

    def object_type(self, name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for field, spec in (schema.get("properties") or {}).items():
            prop = self.prop(spec, name, field)
            if spec.get("description"):
                prop["description"] = spec["description"]
            properties[field] = prop
        out: dict[str, Any] = {"type": "object"}
        if schema.get("description"):
            out["description"] = schema["description"]
        out["properties"] = properties
        required = [r for r in schema.get("required", []) if r in properties]
        if required:
            out["required"] = required
        return out


def _job_models() -> list[type[BaseModel]]:
    return sorted({f.model for f in REGISTRY}, key=lambda m: m.__name__)


def _spec_model(document: type[BaseModel]) -> type[BaseModel]:
    annotation = document.model_fields["spec"].annotation
    if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        raise TypeError(f"{document.__name__}.spec is not a model")
    return annotation


def _defs(models: Iterable[type[BaseModel]]) -> tuple[dict[str, Any], dict[type[BaseModel], str]]:
    """The JSON Schema of every model and what they use, and each given model's def name."""
    mode: Literal["validation"] = "validation"
    given = list(models)
    refs, top = models_json_schema([(m, mode) for m in given], ref_template="#/$defs/{model}")
    names = {m: refs[(m, mode)]["$ref"].rsplit("/", 1)[-1] for m in given}
    return dict(top.get("$defs", {})), names


def _str(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _outputs(extra: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "objects": {
            "type": "array",
            "items": {"type": "string"},
            "description": "`Kind namespace/name` of each Kubernetes object it made.",
        },
        **extra,
    }


def package_schema() -> dict[str, Any]:
    """The whole package schema (a dict ready for ``json.dumps``). Built twice: the first
    pass sees every enum's uses, which name it in the second."""
    _, first = _package_schema(None)
    schema, _ = _package_schema(first.enum_names())
    return schema


def _package_schema(
    enum_names: Mapping[tuple[str, ...], str] | None,
) -> tuple[dict[str, Any], _Converter]:
    jobs = _job_models()
    specs = {p.kind: _spec_model(p.model) for p in PLATFORM}
    defs, def_of = _defs([*jobs, *specs.values(), JobOptions])
    modules = _modules([*jobs, *specs.values()])
    # A type may not share a resource's token (the EDL's TrainingJob, Trainer v2's Trainer).
    taken = {"TrainingJob", "Stack", *PLATFORM_RESOURCES}
    names = {n: _type_name(n, modules, taken) for n in sorted(defs)}
    if len(set(names.values())) != len(names):
        raise ValueError(f"two models share a type name: {sorted(names.values())}")
    conv = _Converter(names, enum_names)
    types = {token(names[n]): conv.object_type(names[n], defs[n]) for n in sorted(defs)}
    # A job's own options travel as the component's inputs, not inside the job.
    options = defs["JobOptions"]["properties"]

    def option(field: str, description: str | None = None) -> dict[str, Any]:
        prop = conv.prop(options[field], "JobOptions", field)
        prop["description"] = description or options[field].get("description", "")
        return prop

    job_refs = {
        f"{m.model_fields['api_version'].default}/{m.model_fields['kind'].default}": {
            "$ref": f"#/types/{token(names[def_of[m]])}"
        }
        for m in jobs
    }
    for ref in job_refs.values():
        # A job names its kind and apiVersion (they tell the union's members apart).
        job_type = types[ref["$ref"].removeprefix("#/types/")]
        job_type["required"] = sorted({"apiVersion", "kind", *job_type.get("required", [])})
    resources: dict[str, Any] = {}
    resources[token("TrainingJob")] = {
        "isComponent": True,
        "description": (
            "A distributed training job: its custom resource for its operator, or the Pods "
            "and Services the operator would create (target pods), or a Trainer TrainJob "
            "or JobSet. The objects are those `trainjobs render` prints for the same job."
        ),
        "inputProperties": {
            "job": {
                # No discriminator: a kind may have two apiVersions (MPIJob v1 and v2beta1).
                "oneOf": list(job_refs.values()),
                "description": "The job as its operator accepts it (TFJob, PyTorchJob, "
                "MPIJob, TrainJob …): apiVersion, kind, metadata, spec. Required.",
            },
            "target": option("target"),
            "namespace": _str(
                "Namespace of the job's objects, replacing metadata.namespace; default the job's."
            ),
            "backend": {
                "$ref": f"#/resources/{token('RedisBackend')}",
                "description": "A RedisBackend the pods rendezvous through (REDIS_HOST, "
                "REDIS_PORT, REDIS_PASSWORD); the job is created after it. Default none.",
            },
            "nodePool": {
                "$ref": f"#/resources/{token('GpuNodePool')}",
                "description": "The node pool every GPU replica runs on (its node selector, "
                "tolerations and GPU limits); the job is checked to fit. Default none.",
            },
            "queue": {
                "$ref": f"#/resources/{token('GpuQueue')}",
                "description": "A GpuQueue (Kueue) the job is admitted through. Default none.",
            },
            "gang": option("gang"),
            "wait": option("wait"),
            "waitTimeout": option("wait_timeout" if "wait_timeout" in options else "waitTimeout"),
            "registration": option("registration"),
            "k8sVersion": _str(
                "Kubernetes version the objects are checked against; default "
                f'"{DEFAULT_K8S_VERSION}".'
            ),
            "clusterDomain": _str(
                "The cluster's DNS domain, for the full addresses; default cluster.local."
            ),
        },
        "requiredInputs": ["job"],
        "properties": _outputs(
            {
                "addresses": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Each role's full Service address "
                    "(mnist-chief-0.kubeflow.svc.cluster.local:2222).",
                },
                "target": {"type": "string", "description": "The target the job was made for."},
                "status": {
                    **ANY,
                    "description": "The live status after the update: the custom resource's "
                    "status, or each pod's phase on the pods target.",
                },
            }
        ),
        "required": ["objects", "addresses", "target"],
    }
    for plugin in PLATFORM:
        spec_name = names[def_of[specs[plugin.kind]]]
        inputs: dict[str, Any] = {
            "spec": {
                "$ref": f"#/types/{token(spec_name)}",
                "description": f"The {plugin.kind}'s spec; default all defaults.",
            },
            "namespace": _str(
                "Where its objects go; default per kind (backends default, "
                "operators their upstream namespace)."
            ),
            "k8sVersion": _str("Kubernetes version the objects are checked against."),
        }
        if plugin.kind == "RedisBackend":
            inputs["password"] = {
                **_str(
                    "The password (a secret manager's value), kept as a secret; it turns "
                    "spec.password on. Default: generated when spec.password is true."
                ),
                "secret": True,
            }
        if plugin.category == "queue":
            inputs["nodePool"] = {
                "$ref": f"#/resources/{token('GpuNodePool')}",
                "description": "The node pool the quota is on.",
            }
        doc = _PLATFORM_DOCS[plugin.category]
        resources[token(plugin.kind)] = {
            "isComponent": True,
            "description": f"{doc}: {plugin.kind} and its Kubernetes objects, as the "
            f"{plugin.kind} entry of a stack file makes them.",
            "inputProperties": inputs,
            "properties": _outputs(
                {
                    "outputs": {
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                        "description": "The kind's own outputs (a backend's address, a "
                        "pool's nodeSelector …).",
                    }
                }
            ),
            "required": ["objects", "outputs"],
        }
    resources[token("Stack")] = _stack_resource(job_refs)
    all_types = {**types, **{token(n): e for n, e in sorted(conv.enums.items())}}
    return _document(all_types, resources), conv


def _document(types: Mapping[str, Any], resources: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": PACKAGE,
        "displayName": "trainjobs",
        "version": VERSION,
        "description": "Distributed deep-learning training on Kubernetes as typed components: "
        "training jobs, rendezvous backends, GPU node pools and operators.",
        "keywords": ["kubernetes", "training", "kubeflow", "category/cloud", "kind/component"],
        "license": "Apache-2.0",
        "language": {
            "nodejs": {
                "packageName": "@trainjobs/trainjobs",
                "dependencies": {"@pulumi/pulumi": "^3.0.0"},
                "respectSchemaVersion": True,
            },
            "go": {
                "importBasePath": "trainjobs.dev/sdk/go/trainjobs",
                "generateResourceContainerTypes": True,
                "respectSchemaVersion": True,
            },
        },
        "config": {},
        "provider": {"type": "object"},
        "types": dict(sorted(types.items())),
        "resources": resources,
    }


def _stack_resource(
    job_refs: Mapping[str, Any],
) -> dict[str, Any]:
    """``trainjobs:index:Stack``: its lists hold documents as a stack file does (any kind
    of the list's category, told apart by ``kind``), so they stay free-form here."""
    kinds_of_jobs = ", ".join(sorted({k.rsplit("/", 1)[-1] for k in job_refs}))

    def platform(category: str) -> dict[str, Any]:
        kinds = [p.kind for p in PLATFORM if p.category == category]
        return {
            "type": "array",
            "items": ANY,
            "description": f"The stack's {category} resources: documents of kind "
            f"{', '.join(kinds)} (trainjobs.dev/v1alpha1), as in a stack file.",
        }

    return {
        "isComponent": True,
        "description": "A whole stack file's settings as one component: the same objects "
        "`trainjobs render` prints for a stack file holding them.",
        "inputProperties": {
            "jobs": {
                "type": "array",
                "items": ANY,
                "description": "The jobs, as in a stack file's trainjobs:jobs (each with its "
                f"options under trainjobs:); kinds {kinds_of_jobs}.",
            },
            "backends": platform("backend"),
            "nodePools": platform("nodePool"),
            "queues": platform("queue"),
            "operators": platform("operator"),
            "namespaces": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Namespaces this stack creates (and so owns). Default none.",
            },
            "target": {
                "type": "string",
                "description": f"Target of jobs that name none ({', '.join(TARGETS)}).",
            },
            "k8sVersion": _str("Kubernetes version the objects are checked against."),
        },
        "properties": _outputs({}),
        "required": ["objects"],
    }


def schema_text() -> str:
    """The schema as the committed file holds it."""
    return json.dumps(package_schema(), indent=2) + "\n"


def main() -> None:
    """Write the schema to ``schema/provider.schema.json`` under the current folder."""
    path = Path.cwd() / SCHEMA_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(schema_text())
    sys.stdout.write(f"wrote {SCHEMA_PATH}\n")


if __name__ == "__main__":
    main()
