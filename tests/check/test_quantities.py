"""Resource quantities in pod specs, and where pod specs are in rendered objects."""

from __future__ import annotations

from trainjobs.check.quantities import pod_spec_paths, quantity_problems


def test_bad_and_negative_quantities_are_reported_with_their_paths() -> None:
    pod_spec = {
        "containers": [
            {
                "name": "c",
                "resources": {
                    "limits": {"cpu": "4 cores", "nvidia.com/gpu": 1},
                    "requests": {"memory": "-2Gi", "cpu": "500m"},
                },
            }
        ],
        "initContainers": [{"name": "i", "resources": {"limits": {"memory": "1.5.2"}}}],
        "overhead": {"cpu": "x"},
        "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gb"}}],
    }
    assert quantity_problems(pod_spec, "spec") == [
        ("spec.initContainers[0].resources.limits.memory", "is not a Kubernetes quantity", "1.5.2"),
        ("spec.containers[0].resources.limits.cpu", "is not a Kubernetes quantity", "4 cores"),
        (
            "spec.containers[0].resources.requests.memory",
            "a resource quantity must not be negative",
            "-2Gi",
        ),
        ("spec.overhead.cpu", "is not a Kubernetes quantity", "x"),
        ("spec.volumes[0].emptyDir.sizeLimit", "is not a Kubernetes quantity", "1Gb"),
    ]


def test_good_quantities_and_wrong_types_are_left_alone() -> None:
    # A value that is not a string or number is the schema check's to report.
    pod_spec = {
        "containers": [
            {"resources": {"limits": {"cpu": 4, "memory": "16Gi", "x": 1.5, "y": ["1"]}}}
        ]
    }
    assert quantity_problems(pod_spec) == []
    assert quantity_problems("not a pod spec") == []


def test_keys_that_are_not_identifiers_are_quoted() -> None:
    pod_spec = {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "two"}}}]}
    assert quantity_problems(pod_spec)[0][0] == "containers[0].resources.limits['nvidia.com/gpu']"


def test_pod_specs_of_pods_workloads_and_cron_jobs() -> None:
    pod = {"kind": "Pod", "spec": {"containers": []}}
    deployment = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": []}}}}
    cron = {
        "kind": "CronJob",
        "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}},
    }
    service = {"kind": "Service", "spec": {"ports": []}}
    assert [p for p, _ in pod_spec_paths(pod)] == ["spec"]
    assert [p for p, _ in pod_spec_paths(deployment)] == ["spec.template.spec"]
    assert [p for p, _ in pod_spec_paths(cron)] == ["spec.jobTemplate.spec.template.spec"]
    assert list(pod_spec_paths(service)) == []
