"""Builders for rule tests: pods and workloads as plain manifests, violations as lines."""

from __future__ import annotations

from typing import Any

from trainjobs.check.rules import RULES, RuleContext
from trainjobs.errors import NO_VALUE
from trainjobs.spec.stack import Profile

RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}}


def container(
    name: str = "trainer", image: str = "repo/trainer:1.0", **extra: Any
) -> dict[str, Any]:
    """A container that passes every rule unless ``extra`` says otherwise."""
    return {"name": name, "image": image, "resources": RESOURCES, **extra}


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """A bare Pod (restartPolicy OnFailure) with the given containers and spec fields."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "training"},
        "spec": {
            "restartPolicy": "OnFailure",
            "containers": list(containers or [container()]),
            **spec,
        },
    }


def workload(api_version: str, kind: str, **spec: Any) -> dict[str, Any]:
    """A Deployment, Job … whose template holds one passing container."""
    template = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [container()], **spec}}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "w", "namespace": "training"},
        "spec": {"template": template},
    }


def violations(
    code: str, manifest: dict[str, Any], profile: Profile = "restricted", version: str = "1.32"
) -> list[str]:
    """``path: message (got value); fix: hint`` for each violation of one rule."""
    rule = RULES.get(code)
    assert rule is not None, code
    lines = []
    for v in rule.check(manifest, RuleContext(profile=profile, k8s_version=version)):
        got = "" if v.value is NO_VALUE else f" (got {v.value!r})"
        lines.append(f"{v.path}: {v.message}{got}; fix: {v.hint}")
    return lines


def paths(code: str, manifest: dict[str, Any], version: str = "1.32") -> list[str]:
    """Only the paths of a rule's violations."""
    return [line.split(": ", 1)[0] for line in violations(code, manifest, version=version)]
