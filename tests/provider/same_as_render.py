"""What "a program's ``pulumi up`` makes exactly what ``trainjobs render`` prints" means,
for the YAML, TypeScript and Go examples alike (tests/cluster/pulumi_up/test_languages_*).

* The stack's Kubernetes objects are the rendered ones: the same set, none more or less.
* Each object in the cluster holds every field the render sets, with the same value
  (fields only the cluster holds — uid, status, defaults — are no difference).
* A Secret's values are the one exception, by design: the render cannot know a password
  Pulumi generates at apply time, so it prints ``<redacted>`` in their place. For a
  Secret, the cluster must hold exactly the keys the render prints (``data`` and
  ``stringData`` together; the API server keeps both as ``data``), each with a value that
  is not empty; every other field of the Secret is compared as any object's.
  :func:`secret_values` gives the values, so that a test can show they stay the same
  across ups and never show in the stack's state.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.test_demo_stack import (
    Ident,
    ident,
    k8s_resources,
    missing_or_different,
    read_back,
)
from tests.support.pulumi_harness import run_program
from trainjobs.components import PlatformComponent, TrainingJob
from trainjobs.k8s.redact import REDACTED

__all__ = [
    "PROVIDER_TYPES",
    "cluster_problems",
    "python_urns",
    "secret_values",
    "without_python_host",
]

_VALUE_FIELDS = ("data", "stringData")


def _rendered_keys(secret: Mapping[str, Any]) -> set[str]:
    return {k for field in _VALUE_FIELDS for k in secret.get(field) or {}}


def _secret_problems(want: Mapping[str, Any], have: Mapping[str, Any]) -> list[str]:
    """The Secret rule: every field but the values as any object's; the values' keys
    exactly the render's, each value not empty (the render shows none of them)."""
    out = missing_or_different({k: v for k, v in want.items() if k not in _VALUE_FIELDS}, have)
    shown = [
        f".{field}.{k}: the render shows {v!r}"
        for field in _VALUE_FIELDS
        for k, v in (want.get(field) or {}).items()
        if v != REDACTED
    ]
    live = have.get("data") or {}
    if set(live) != _rendered_keys(want):
        out.append(f".data: keys {sorted(live)} instead of {sorted(_rendered_keys(want))}")
    out += [f".data.{k}: empty" for k, v in live.items() if not base64.b64decode(v or "")]
    return shown + out


def cluster_problems(
    state: list[dict[str, Any]], rendered: list[dict[str, Any]], cluster: ControlPlane
) -> dict[str, Any]:
    """What differs between the rendered objects and the state's and cluster's copies
    (empty: the up made exactly what render prints, by the rule above)."""
    held = k8s_resources(state)
    want = {ident(m): m for m in rendered}
    if sorted(held, key=str) != sorted(want, key=str):
        return {"state": sorted(map(str, held)), "rendered": sorted(map(str, want))}
    live = read_back(cluster, rendered)
    problems: dict[str, Any] = {}
    for key, manifest in want.items():
        api, kind, ns, name = key
        check = _secret_problems if kind == "Secret" and api == "v1" else missing_or_different
        if diff := check(manifest, live[key]):
            problems[f"{kind} {ns}/{name}"] = diff
    return problems


def secret_values(rendered: list[dict[str, Any]], cluster: ControlPlane) -> dict[str, str]:
    """Each rendered Secret's values as the cluster holds them (``ns/name key`` → value)."""
    secrets = [m for m in rendered if m["kind"] == "Secret" and m["apiVersion"] == "v1"]
    live: dict[Ident, dict[str, Any]] = read_back(cluster, secrets) if secrets else {}
    return {
        f"{ns}/{name} {k}": base64.b64decode(v).decode()
        for (_, _, ns, name), secret in live.items()
        for k, v in (secret.get("data") or {}).items()
    }


PROVIDER_TYPES = {
    "pulumi-python:dynamic/trainjobs:GeneratedPassword": "trainjobs:index:GeneratedPassword",
    "pulumi-python:dynamic/trainjobs:GeneratedKeyPair": "trainjobs:index:GeneratedKeyPair",
}
"""The one difference in URNs, by design (trainjobs/provider/generated.py): a Python
program's components generate secrets with dynamic resources, which need the program's
Python; the provider's serve them as its own resources, of these types."""


def python_urns(program: Mapping[str, Any], project: str, stack: str) -> set[str]:
    """The URNs a Python program gives the trainjobs resources of the Pulumi YAML
    ``program`` (their components and every child), under mocks, with the generating
    resources' types as the provider registers them (:data:`PROVIDER_TYPES`)."""
    resources: Mapping[str, Any] = program["resources"]

    def made() -> None:
        components: dict[str, PlatformComponent] = {}
        for name, resource in resources.items():
            kind = str(resource["type"]).removeprefix("trainjobs:index:")
            props = resource.get("properties") or {}
            if kind == resource["type"]:
                continue  # not a trainjobs resource
            if kind != "TrainingJob":
                cls = PlatformComponent.for_kind(kind)
                components[name] = cls(name, props.get("spec"), namespace=props.get("namespace"))
                continue
            refs = {k: components[v.strip("${}")] for k, v in props.items() if k in _REFS}
            TrainingJob(
                name,
                props["job"],
                target=props.get("target"),
                backend=refs.get("backend"),
                node_pool=refs.get("nodePool"),
            )

    urns = {r.urn for r in run_program(made, stack=stack, project=project) if r.urn}
    out = set()
    for urn in urns:
        # The engine leaves the root Stack out of a top-level resource's type; mocks keep it.
        urn = urn.replace("::pulumi:pulumi:Stack$", "::")
        for python_type, provider_type in PROVIDER_TYPES.items():
            urn = urn.replace(python_type, provider_type)
        out.add(urn)
    return out


_REFS = ("backend", "nodePool")


def without_python_host(dirs: Sequence[Path]) -> list[Path]:
    """The Pulumi bin folders but the Python language host's: a YAML, TypeScript or Go
    user has no ``pulumi-resource-pulumi-python`` that runs trainjobs, so neither may
    the proofs (a dynamic resource made by the provider would fail: no such plugin)."""
    return [d for d in dirs if not d.parent.name.startswith("pulumi-language-python")]
