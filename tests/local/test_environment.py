"""A container's env as the kubelet builds it: order, precedence, expansion, valueFrom."""

from __future__ import annotations

import base64
from typing import Any

from trainjobs.k8s.generated import Generated, placeholder
from trainjobs.local.environment import Machine, PodContext, container_env, object_values


def _pod(objects: dict[tuple[str, str], Any] | None = None) -> PodContext:
    return PodContext(
        name="mnist-worker-1",
        namespace="kubeflow",
        address="127.0.0.5",
        labels={"app": "mnist", "tier": "train"},
        annotations={"note": "hi"},
        service_account="trainer",
        objects=objects or {},
        machine=Machine(node_name="box", cpus=8, memory=16 * 2**30),
        generate=lambda g: f"generated-{g.kind}-{g.group}",
    )


def _env(
    container: dict[str, Any], pod: PodContext | None = None
) -> tuple[dict[str, str], list[str]]:
    env, findings = container_env(container, pod or _pod(), lambda s: s.upper(), "c")
    return env, [str(f) for f in findings]


def test_literals_are_rewritten_then_expanded_against_earlier_variables() -> None:
    env, findings = _env(
        {
            "env": [
                {"name": "A", "value": "one"},
                {"name": "B", "value": "$(A)-$(C)"},  # C comes later: left as written
                {"name": "C", "value": "three"},
                {"name": "A", "value": "again"},  # a later entry wins
            ]
        }
    )
    assert findings == []
    assert env == {"A": "AGAIN", "B": "ONE-$(C)", "C": "THREE"}


def test_field_refs_are_data_and_not_rewritten() -> None:
    refs = {
        "NAME": "metadata.name",
        "NS": "metadata.namespace",
        "IP": "status.podIP",
        "HOST_IP": "status.hostIP",
        "NODE": "spec.nodeName",
        "SA": "spec.serviceAccountName",
        "TIER": "metadata.labels['tier']",
        "NOTE": "metadata.annotations['note']",
        "LABELS": "metadata.labels",
    }
    env, findings = _env(
        {
            "env": [
                {"name": k, "valueFrom": {"fieldRef": {"fieldPath": v}}} for k, v in refs.items()
            ]
            + [{"name": "MASTER", "value": "$(IP):36543"}]
        }
    )
    assert findings == []
    assert env == {
        "NAME": "mnist-worker-1",
        "NS": "kubeflow",
        "IP": "127.0.0.5",
        "HOST_IP": "127.0.0.1",
        "NODE": "box",
        "SA": "trainer",
        "TIER": "train",
        "NOTE": "hi",
        "LABELS": 'app="mnist"\ntier="train"',
        "MASTER": "127.0.0.5:36543",
    }


def test_resource_field_refs_use_the_container_or_this_machine() -> None:
    env, findings = _env(
        {
            "resources": {"limits": {"cpu": "1500m", "memory": "2Gi"}},
            "env": [
                {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                {
                    "name": "MEM_MI",
                    "valueFrom": {
                        "resourceFieldRef": {"resource": "requests.memory", "divisor": "1Mi"}
                    },
                },
                {
                    "name": "NODE_CPU",
                    "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu"}},
                },
            ],
        }
    )
    assert findings == []
    # requests.cpu falls back to the limit, as the kubelet does.
    assert env == {"CPU": "2", "MEM_MI": "2048", "NODE_CPU": "2"}
    env, _ = _env(
        {"env": [{"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}]}
    )
    assert env == {"C": "8"}


def test_config_maps_and_secrets_of_the_job_are_read() -> None:
    objects = {
        ("ConfigMap", "cfg"): {"kind": "ConfigMap", "data": {"mode": "fast"}},
        ("Secret", "auth"): {
            "kind": "Secret",
            "data": {"token": base64.b64encode(b"s3cret").decode()},
            "stringData": {"password": placeholder("password", "kubeflow/auth")},
        },
    }
    env, findings = _env(
        {
            "envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}],
            "env": [
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "auth", "key": "token"}}},
                {"name": "PW", "valueFrom": {"secretKeyRef": {"name": "auth", "key": "password"}}},
                {
                    "name": "OPT",
                    "valueFrom": {"configMapKeyRef": {"name": "no", "key": "x", "optional": True}},
                },
            ],
        },
        _pod(objects),
    )
    assert findings == []
    assert env == {
        "CFG_mode": "fast",
        "TOKEN": "s3cret",
        "PW": "generated-password-kubeflow/auth",
    }


def test_unresolvable_references_are_findings() -> None:
    _, findings = _env(
        {
            "env": [
                {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "elsewhere", "key": "k"}}},
                {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "status.phase"}}},
            ]
        }
    )
    assert findings == [
        "error: c.env[0].valueFrom.configMapKeyRef: the ConfigMap 'elsewhere' is not part of "
        "the job, so run-local cannot read it (got 'elsewhere'); fix: render the ConfigMap with "
        "the job, or mark the reference optional",
        "error: c.env[1].valueFrom.fieldRef: run-local cannot resolve this fieldRef (got "
        "'status.phase'); fix: use metadata.name/namespace/uid/labels/annotations, "
        "spec.nodeName, spec.serviceAccountName, status.podIP or status.hostIP",
    ]


def test_object_values_decode_binary_data() -> None:
    values = object_values(
        {
            "kind": "ConfigMap",
            "data": {"a": "x"},
            "binaryData": {"b": base64.b64encode(b"\0").decode()},
        },
        lambda g: "",
    )
    assert values == {"a": b"x", "b": b"\0"}
    assert object_values(
        {"kind": "Secret", "data": {"k": placeholder("ecdsa-p521-private", "ns/pi-ssh")}},
        lambda g: f"{g.kind}:{g.group}",
    ) == {"k": b"ecdsa-p521-private:ns/pi-ssh"}
    assert isinstance(Generated("password", "g"), Generated)
