"""Loopback addresses for replicas and the rewrite of every name that reaches one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import EXAMPLES
from trainjobs.local.hosts import address_of, build_host_map
from trainjobs.plan import Replica
from trainjobs.render import RenderedJob, render
from trainjobs.spec import load_path


def _tf_mnist() -> RenderedJob:
    return render(load_path(EXAMPLES / "tf-mnist" / "tfjob.yaml"), target="pods").jobs[0]


def _tf_host_map(distinct_ports: bool = False) -> Any:
    rendered = _tf_mnist()
    lifecycle = rendered.entry.framework.run_rules(rendered.job)
    assert lifecycle is not None
    manifests = [o.manifest for o in rendered.objects]
    return build_host_map(manifests, lifecycle.replicas, "kubeflow", distinct_ports=distinct_ports)


def test_addresses_follow_the_expansion_order() -> None:
    hosts = _tf_host_map()
    assert dict(hosts.addresses) == {
        "mnist-chief-0": "127.0.0.2",
        "mnist-ps-0": "127.0.0.3",
        "mnist-worker-0": "127.0.0.4",
        "mnist-worker-1": "127.0.0.5",
    }


def test_every_service_form_names_its_replica() -> None:
    hosts = _tf_host_map()
    for name in (
        "mnist-worker-1",
        "mnist-worker-1.kubeflow",
        "mnist-worker-1.kubeflow.svc",
        "mnist-worker-1.kubeflow.svc.cluster.local",
    ):
        assert hosts.names[name] == "mnist-worker-1"


def test_tf_config_of_the_worked_example_is_rewritten() -> None:
    tf_config = (
        '{"cluster":{"chief":["mnist-chief-0.kubeflow.svc:2222"],"ps":["mnist-ps-0.kubeflow.svc:2222"],'
        '"worker":["mnist-worker-0.kubeflow.svc:2222","mnist-worker-1.kubeflow.svc:2222"]},'
        '"task":{"type":"worker","index":1},"environment":"cloud"}'
    )
    assert _tf_host_map().rewrite(tf_config) == (
        '{"cluster":{"chief":["127.0.0.2:2222"],"ps":["127.0.0.3:2222"],'
        '"worker":["127.0.0.4:2222","127.0.0.5:2222"]},'
        '"task":{"type":"worker","index":1},"environment":"cloud"}'
    )


def test_distinct_ports_give_each_replica_its_own_port() -> None:
    hosts = _tf_host_map(distinct_ports=True)
    assert hosts.rewrite("mnist-chief-0.kubeflow.svc:2222,mnist-worker-1:2222") == (
        "127.0.0.2:2222,127.0.0.5:2225"
    )
    assert hosts.port("mnist-ps-0", 2222) == 2223
    # A port the replica does not declare is not moved.
    assert hosts.rewrite("mnist-worker-1:9000") == "127.0.0.5:9000"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mnist-worker-1", "127.0.0.5"),
        ("tcp://mnist-worker-1:2222/x", "tcp://127.0.0.5:2222/x"),
        ("--peer=mnist-worker-1,mnist-worker-0", "--peer=127.0.0.5,127.0.0.4"),
        ("mnist-worker-10", "mnist-worker-10"),  # a longer name
        ("my-mnist-worker-1", "my-mnist-worker-1"),
        ("foo.mnist-worker-1", "foo.mnist-worker-1"),
        ("mnist-worker-1.example.com", "mnist-worker-1.example.com"),  # another domain
        ("end of sentence: mnist-worker-1.", "end of sentence: 127.0.0.5."),
    ],
)
def test_only_whole_names_are_replaced(text: str, expected: str) -> None:
    assert _tf_host_map().rewrite(text) == expected


def _pod(name: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "labels": labels},
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 22}]}], **spec},
    }


def test_pod_hostnames_with_a_subdomain_and_shared_services() -> None:
    manifests = [
        {"kind": "Service", "metadata": {"name": "pi"}, "spec": {"selector": {"job": "pi"}}},
        _pod("pi-worker-0", {"job": "pi"}, hostname="pi-worker-0", subdomain="pi"),
        _pod("pi-worker-1", {"job": "pi"}, hostname="pi-worker-1", subdomain="pi"),
    ]
    replicas = [Replica("Worker", i, f"pi-worker-{i}") for i in range(2)]
    hosts = build_host_map(manifests, replicas, "ns")
    assert hosts.rewrite("pi-worker-1.pi.ns.svc slots=1") == "127.0.0.3 slots=1"
    assert hosts.rewrite("pi-worker-0.pi.ns.svc.cluster.local") == "127.0.0.2"
    assert hosts.rewrite("pi-worker-0.pi") == "127.0.0.2"
    # The headless Service selects both workers, so it names no single address.
    assert hosts.rewrite("pi.ns.svc") == "pi.ns.svc"


def test_address_of_counts_from_127_0_0_2_through_the_loopback_network() -> None:
    assert [address_of(i) for i in (0, 1, 253, 254)] == [
        "127.0.0.2",
        "127.0.0.3",
        "127.0.0.255",
        "127.0.1.0",
    ]
    with pytest.raises(ValueError, match="too many replicas"):
        address_of(2**24 - 3)
