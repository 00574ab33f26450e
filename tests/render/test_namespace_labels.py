"""Namespaces a stack creates enforce the Pod Security level the stack is checked at."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import stack_files
from trainjobs.check import run
from trainjobs.render.namespace_labels import enforced_level, with_pod_security_labels
from trainjobs.spec import load_path, parse_stack

PSS = "pod-security.kubernetes.io/"


@pytest.mark.parametrize(
    ("checked", "ignored", "level"),
    [
        ("baseline", [], "baseline"),
        ("restricted", [], "restricted"),
        ("restricted", ["ttl.unset"], "restricted"),
        ("restricted", ["pss.restricted.seccomp"], "baseline"),
        ("restricted", ["pss.restricted"], "baseline"),
        ("baseline", ["pss.restricted.seccomp"], "baseline"),
        ("baseline", ["pss.baseline.capabilities"], "privileged"),
        ("restricted", ["pss.baseline"], "privileged"),
        ("restricted", ["pss"], "privileged"),
        # A rule whose name merely starts like a level is not that level.
        ("restricted", ["pss.restrictedish"], "restricted"),
    ],
)
def test_enforced_level(checked: Any, ignored: list[str], level: str) -> None:
    assert enforced_level(checked, ignored) == level


def test_labels_pin_the_version_and_keep_what_the_namespace_has() -> None:
    ns: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "a", "labels": {"team": "ml", f"{PSS}warn": "privileged"}},
    }
    out = with_pod_security_labels(ns, "restricted", "baseline", "1.31")
    assert out["metadata"]["labels"] == {
        f"{PSS}audit": "restricted",
        f"{PSS}audit-version": "v1.31",
        f"{PSS}enforce": "baseline",
        f"{PSS}enforce-version": "v1.31",
        f"{PSS}warn": "privileged",
        f"{PSS}warn-version": "v1.31",
        "team": "ml",
    }
    assert ns["metadata"]["labels"] == {"team": "ml", f"{PSS}warn": "privileged"}


def _job(name: str, namespace: str, ignore: list[str] | None = None) -> dict[str, Any]:
    container = {
        "name": "tensorflow",
        "image": "tf:2.15",
        "resources": {"requests": {"cpu": 1, "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    job: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "runPolicy": {"ttlSecondsAfterFinished": 60},
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "securityContext": {
                                "runAsNonRoot": True,
                                "runAsUser": 1000,
                                "seccompProfile": {"type": "RuntimeDefault"},
                            },
                            "containers": [container],
                        }
                    },
                }
            },
        },
    }
    if ignore:
        job["trainjobs"] = {"ignore": ignore}
    return job


def _labels(config: dict[str, Any], **options: Any) -> dict[str, dict[str, str]]:
    rendering = run(parse_stack(config, source="stack.yaml"), **options)
    return {
        o.manifest["metadata"]["name"]: {
            k.removeprefix(PSS): v
            for k, v in o.manifest["metadata"]["labels"].items()
            if k.startswith(PSS)
        }
        for o in rendering.objects
        if o.manifest["kind"] == "Namespace"
    }


def test_each_namespace_enforces_what_its_jobs_were_checked_at() -> None:
    config = {
        "trainjobs:podSecurity": "restricted",
        "trainjobs:k8sVersion": "1.31",
        "trainjobs:namespaces": ["strict", "relaxed", "open"],
        "trainjobs:jobs": [
            _job("a", "strict"),
            _job("b", "relaxed", ["pss.restricted.seccomp"]),
            _job("c", "open", ["pss.baseline.host_namespaces"]),
        ],
    }
    labels = _labels(config)
    assert {ns: (v["enforce"], v["audit"], v["warn"]) for ns, v in labels.items()} == {
        "strict": ("restricted", "restricted", "restricted"),
        "relaxed": ("baseline", "restricted", "restricted"),
        "open": ("privileged", "restricted", "restricted"),
    }
    assert {v["enforce-version"] for v in labels.values()} == {"v1.31"}


def test_the_cli_profile_and_version_override_the_stack() -> None:
    config = {"trainjobs:namespaces": ["ml"], "trainjobs:jobs": [_job("a", "ml")]}
    assert _labels(config)["ml"]["enforce"] == "baseline"
    labels = _labels(config, profile="restricted", k8s_version="1.30")["ml"]
    assert (labels["enforce"], labels["enforce-version"]) == ("restricted", "v1.30")


def test_a_stack_wide_ignore_lowers_every_namespace() -> None:
    config = {
        "trainjobs:podSecurity": "restricted",
        "trainjobs:ignore": ["pss.restricted"],
        "trainjobs:namespaces": ["ml"],
        "trainjobs:jobs": [_job("a", "ml")],
    }
    assert _labels(config)["ml"]["enforce"] == "baseline"


@pytest.mark.parametrize("stack", stack_files(), ids=lambda p: p.stem)
def test_every_namespace_of_every_stack_is_labelled(stack: Any) -> None:
    rendering = run(load_path(str(stack)))
    spaces = [o.manifest for o in rendering.objects if o.manifest["kind"] == "Namespace"]
    for ns in spaces:
        assert ns["metadata"]["labels"][f"{PSS}enforce"] in {"baseline", "restricted"}
        assert ns["metadata"]["labels"][f"{PSS}audit"] == "baseline"
