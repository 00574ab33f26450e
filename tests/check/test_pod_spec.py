"""The API server's Pod rules the schema lets through (found by tests/cluster/test_accepted.py)."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.check.pod_spec import pod_spec_problems


def _spec(**container: Any) -> dict[str, Any]:
    return {"containers": [{"name": "trainer", "image": "busybox:1.36", **container}]}


@pytest.mark.parametrize(
    ("spec", "path", "fragment"),
    [
        (_spec(name="Trainer_1"), "containers[0].name", "container name"),
        (
            _spec(ports=[{"name": "a" * 16, "containerPort": 1}]),
            "containers[0].ports[0].name",
            "15",
        ),
        (
            _spec(ports=[{"name": "p--q", "containerPort": 1}]),
            "containers[0].ports[0].name",
            "single",
        ),
        (
            _spec(ports=[{"name": "123", "containerPort": 1}]),
            "containers[0].ports[0].name",
            "letter",
        ),
        (
            _spec(ports=[{"name": "p", "containerPort": 1}, {"name": "p", "containerPort": 2}]),
            "containers[0].ports[1].name",
            "share a name",
        ),
        (_spec(ports=[{"containerPort": 70000}]), "containers[0].ports[0].containerPort", "65535"),
        (_spec(env=[{"name": "A=B", "value": "1"}]), "containers[0].env[0].name", "'='"),
        (
            _spec(volumeMounts=[{"name": "data", "mountPath": "/d"}]),
            "containers[0].volumeMounts[0].name",
            "no volume",
        ),
        (
            _spec(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
            "containers[0].resources.requests.cpu",
            "may not exceed",
        ),
        (
            {
                "containers": [{"name": "a", "image": "x"}],
                "initContainers": [{"name": "a", "image": "x"}],
            },
            "containers[0].name",
            "two containers",
        ),
        ({**_spec(), "restartPolicy": "Sometimes"}, "restartPolicy", "Always"),
        # A probe's port written as a string is a port name: "2222" has no letter.
        (
            _spec(readinessProbe={"tcpSocket": {"port": "2222"}}),
            "containers[0].readinessProbe.tcpSocket.port",
            "letter",
        ),
        (
            _spec(lifecycle={"preStop": {"httpGet": {"port": 0, "path": "/stop"}}}),
            "containers[0].lifecycle.preStop.httpGet.port",
            "65535",
        ),
        (
            _spec(livenessProbe={"httpGet": {"port": "Metrics"}}),
            "containers[0].livenessProbe.httpGet.port",
            "lowercase",
        ),
    ],
)
def test_refused_pod_specs(spec: dict[str, Any], path: str, fragment: str) -> None:
    problems = pod_spec_problems(spec)
    assert [p.path for p in problems] == [path], problems
    assert fragment in problems[0].message


def test_valid_pod_spec_has_no_problems() -> None:
    spec = {
        "volumes": [{"name": "data", "emptyDir": {}}],
        "restartPolicy": "OnFailure",
        "containers": [
            {
                "name": "trainer",
                "image": "busybox:1.36",
                "ports": [{"name": "tfjob-port", "containerPort": 2222}],
                "readinessProbe": {"tcpSocket": {"port": 2222}},
                "livenessProbe": {"httpGet": {"port": "tfjob-port", "path": "/"}},
                "env": [{"name": "my.var-1", "value": "x"}],
                "volumeMounts": [{"name": "data", "mountPath": "/d"}],
                "resources": {
                    "requests": {"cpu": "500m", "nvidia.com/gpu": 1},
                    "limits": {"cpu": "1", "nvidia.com/gpu": 1},
                },
            }
        ],
    }
    assert pod_spec_problems(spec, "spec") == []


@pytest.mark.parametrize(
    ("spec", "version", "expected"),
    [
        # The older env-name rule: only that version's server refuses the name.
        (_spec(env=[{"name": "1A", "value": "x"}]), "1.30", [("env[0].name", "api.invalid")]),
        (_spec(env=[{"name": "1A", "value": "x"}]), "1.32", []),
        # Refused by the Pod rule and by the older env-name rule: reported once, as pod.invalid.
        (_spec(env=[{"name": "A=B", "value": "x"}]), "1.30", [("env[0].name", "pod.invalid")]),
        (
            _spec(env=[{"name": "A", "value": "x", "valueFrom": {"fieldRef": {}}}]),
            "1.32",
            [("env[0].valueFrom", "api.invalid")],
        ),
        (
            _spec(ports=[{"containerPort": 80, "hostPort": -1}]),
            "1.32",
            [("ports[0].hostPort", "api.invalid")],
        ),
        (
            _spec(ports=[{"containerPort": 0, "name": "a" * 16}]),
            "1.32",
            [("ports[0].containerPort", "pod.invalid"), ("ports[0].name", "pod.invalid")],
        ),
    ],
)
def test_version_rules_add_one_problem_per_path(
    spec: dict[str, Any], version: str, expected: list[tuple[str, str]]
) -> None:
    problems = pod_spec_problems(spec, "spec", version=version)
    assert [(p.path, p.code) for p in problems] == [
        (f"spec.containers[0].{path}", code) for path, code in expected
    ]
    assert pod_spec_problems(spec, "spec") == [p for p in problems if p.code == "pod.invalid"]
