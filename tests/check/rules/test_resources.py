"""Pinned images, device (GPU) requests and limits, cpu and memory requests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.check.rules.helpers import container, paths, pod, violations, workload
from trainjobs.check.rules.resources import image_problem, is_device


@pytest.mark.parametrize(
    ("image", "problem"),
    [
        ("pytorch/pytorch", "has no tag, so the node pulls :latest"),
        ("pytorch/pytorch:latest", "is tagged :latest"),
        ("registry.example.com:5000/team/trainer", "has no tag, so the node pulls :latest"),
        ("registry.example.com:5000/team/trainer:2.1", None),
        ("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", None),
        ("trainer@sha256:" + "a" * 64, None),
        ("trainer:latest@sha256:" + "a" * 64, None),
    ],
)
def test_image_problem(image: str, problem: str | None) -> None:
    assert image_problem(image) == problem


@settings(max_examples=40)
@given(
    repo=st.from_regex(r"[a-z0-9]+(/[a-z0-9]+){0,2}", fullmatch=True),
    tag=st.from_regex(r"[0-9][a-z0-9.-]{0,10}", fullmatch=True),
    port=st.sampled_from(["", "registry.local:5000/"]),
)
def test_a_version_tag_pins_with_or_without_a_registry_port(repo: str, tag: str, port: str) -> None:
    assert image_problem(f"{port}{repo}:{tag}") is None
    assert image_problem(f"{port}{repo}") is not None


def test_unpinned_image_message() -> None:
    manifest = pod(initContainers=[container("init", image="busybox")])
    assert violations("image.unpinned", manifest) == [
        "spec.initContainers[0].image: image of container 'init' has no tag, so the node pulls "
        ":latest: what it runs changes when the tag moves, and replicas pulled at different "
        "times run different code (got 'busybox'); fix: pin a version tag "
        "(repo/trainer:1.4.2) or a digest (repo/trainer@sha256:…)"
    ]


@pytest.mark.parametrize(
    ("resource", "device"),
    [
        ("nvidia.com/gpu", True),
        ("amd.com/gpu", True),
        ("rdma/hca", True),
        ("cpu", False),
        ("hugepages-2Mi", False),
        ("kubernetes.io/batch-cpu", False),
        ("example.kubernetes.io/thing", False),
    ],
)
def test_is_device(resource: str, device: bool) -> None:
    assert is_device(resource) is device


def _gpu(requests: dict[str, object], limits: dict[str, object]) -> dict[str, object]:
    return pod(
        container(resources={"requests": {"cpu": 1, "memory": "1Gi", **requests}, "limits": limits})
    )


def test_gpu_limit_alone_or_equal_request_passes() -> None:
    assert violations("gpu.limits", _gpu({}, {"nvidia.com/gpu": 4})) == []
    assert violations("gpu.limits", _gpu({"nvidia.com/gpu": "4"}, {"nvidia.com/gpu": 4})) == []


def test_gpu_request_without_limit_and_unequal() -> None:
    assert violations("gpu.limits", _gpu({"nvidia.com/gpu": 2}, {})) == [
        "spec.containers[0].resources.limits['nvidia.com/gpu']: container 'trainer' requests "
        "nvidia.com/gpu without a limit; devices are never shared, so Kubernetes refuses the "
        "pod (got 2); fix: set limits.nvidia.com/gpu to 2 (a limit alone is enough: the request "
        "defaults to it)"
    ]
    assert violations("gpu.limits", _gpu({"amd.com/gpu": 1}, {"amd.com/gpu": 2})) == [
        "spec.containers[0].resources.requests['amd.com/gpu']: container 'trainer' requests 1 "
        "amd.com/gpu but is limited to 2; Kubernetes refuses a device request that differs "
        "from its limit (got 1); fix: make requests.amd.com/gpu equal limits.amd.com/gpu (or "
        "set only the limit)"
    ]


def test_requests_count_limits_and_skip_init_containers() -> None:
    bare = {"name": "t", "image": "t:1"}
    limited = {**bare, "name": "l", "resources": {"limits": {"cpu": 2, "memory": "4Gi"}}}
    manifest = pod(bare, limited, initContainers=[bare])
    assert violations("resources.requests", manifest) == [
        "spec.containers[0].resources.requests: container 't' requests no cpu or memory: the "
        "scheduler may pack it onto a full node, and it is evicted first when memory runs "
        "short — a lost replica stalls the whole job (got ['cpu', 'memory']); fix: set "
        "resources.requests.cpu and .memory to what one replica needs"
    ]
    memory_only = {**bare, "resources": {"requests": {"memory": "1Gi"}}}
    assert paths("resources.requests", pod(memory_only)) == [
        "spec.containers[0].resources.requests"
    ]


def test_requests_of_a_workload_that_is_no_training_replica() -> None:
    # An operator's or backend's Deployment: no job stalls, and its kind sets requests.
    deployment = workload("apps/v1", "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0].pop("resources")
    assert violations("resources.requests", deployment) == [
        "spec.template.spec.containers[0].resources.requests: container 'trainer' requests no "
        "cpu or memory: the scheduler may pack it onto a full node, and it is evicted first "
        "when memory runs short (got ['cpu', 'memory']); fix: set requests for cpu and memory "
        "(for a backend or operator of the stack: its spec.resources)"
    ]
