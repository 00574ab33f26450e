"""An Indexed Job's pods as the Job controller makes them: index, hostname, env; and the
env, addresses and names run-local derives from them."""

from __future__ import annotations

from typing import Any

from trainjobs.local.environment import Machine, PodContext, container_env
from trainjobs.local.hosts import build_host_map
from trainjobs.local.indexed import indexed_pods, pod_of
from trainjobs.plan import Replica

RANK = {
    "name": "PET_NODE_RANK",
    "valueFrom": {
        "fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        }
    },
}


def _job(name: str, pods: int, **pod_spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": pods,
            "template": {
                "metadata": {"labels": {"jobset.sigs.k8s.io/jobset-name": "tj"}},
                "spec": {
                    "subdomain": "tj",
                    "containers": [{"name": "node", "env": [RANK]}],
                    **pod_spec,
                },
            },
        },
    }


def test_pod_k_gets_its_index_hostname_and_env() -> None:
    pod = pod_of(_job("tj-node-0", 2, initContainers=[{"name": "wait"}]), 1)
    index = {"batch.kubernetes.io/job-completion-index": "1"}
    assert pod["metadata"] == {
        "name": "tj-node-0-1",
        "labels": {"jobset.sigs.k8s.io/jobset-name": "tj", **index},
        "annotations": index,
        "namespace": "ml",
    }
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("tj-node-0-1", "tj")
    added = {"name": "JOB_COMPLETION_INDEX", "valueFrom": RANK["valueFrom"]}
    # Appended last, to containers and init containers alike.
    assert pod["spec"]["containers"][0]["env"] == [RANK, added]
    assert pod["spec"]["initContainers"][0]["env"] == [added]


def test_a_hostname_or_index_env_of_the_template_is_kept() -> None:
    job = _job("tj-node-0", 1, hostname="fixed")
    own = {"name": "JOB_COMPLETION_INDEX", "value": "mine"}
    job["spec"]["template"]["spec"]["containers"][0]["env"] = [own]
    pod = pod_of(job, 0)
    assert pod["spec"]["hostname"] == "fixed"
    assert pod["spec"]["containers"][0]["env"] == [own]
    # The Job itself is untouched.
    assert "hostname" not in _job("tj-node-0", 1)["spec"]["template"]["spec"]


def test_only_indexed_jobs_have_pods_and_existing_objects_win() -> None:
    plain = _job("launcher", 1)
    del plain["spec"]["completionMode"]
    existing = {"kind": "Pod", "metadata": {"name": "tj-node-0-1"}}
    pods = list(indexed_pods([plain, _job("tj-node-0", 3), existing]))
    assert [p["metadata"]["name"] for p in pods] == ["tj-node-0-0", "tj-node-0-2"]


def test_the_completion_index_field_ref_resolves_to_the_pods_index() -> None:
    for index in (0, 1, 2):
        pod = pod_of(_job("tj-node-0", 3), index)
        context = PodContext(
            name=pod["metadata"]["name"],
            namespace="ml",
            address="127.0.0.9",
            labels=pod["metadata"]["labels"],
            annotations=pod["metadata"]["annotations"],
            service_account="default",
            objects={},
            machine=Machine(),
            generate=lambda g: "x",
        )
        container = pod["spec"]["containers"][0]
        env, findings = container_env(container, context, lambda s: s, "c")
        assert findings == []
        assert env == {"PET_NODE_RANK": str(index), "JOB_COMPLETION_INDEX": str(index)}


def test_every_pod_hostname_in_the_subdomain_reaches_its_own_address() -> None:
    jobs = [_job("tj-init-0", 1), _job("tj-node-0", 2)]
    pods = list(indexed_pods(jobs))
    service = {
        "kind": "Service",
        "metadata": {"name": "tj", "namespace": "ml"},
        "spec": {"clusterIP": "None", "selector": {"jobset.sigs.k8s.io/jobset-name": "tj"}},
    }
    replicas = [
        Replica("init", 0, "tj-init-0-0"),
        Replica("node", 0, "tj-node-0-0"),
        Replica("node", 1, "tj-node-0-1"),
    ]
    hosts = build_host_map([*jobs, *pods, service], replicas, "ml")
    assert dict(hosts.addresses) == {
        "tj-init-0-0": "127.0.0.2",
        "tj-node-0-0": "127.0.0.3",
        "tj-node-0-1": "127.0.0.4",
    }
    for name in ("tj-node-0-1", "tj-node-0-1.tj", "tj-node-0-1.tj.ml.svc.cluster.local"):
        assert hosts.names[name] == "tj-node-0-1"
    # The headless Service selects every pod: it names no single address.
    assert "tj" not in hosts.names
    assert (
        hosts.rewrite("tj-node-0-0.tj:29500 tj-node-0-10.tj") == "127.0.0.3:29500 tj-node-0-10.tj"
    )
