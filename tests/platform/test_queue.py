"""GpuQueue: Kueue objects, the labels jobs get per target, and the quota check."""

from __future__ import annotations

from typing import Any

import pytest

from tests.platform.pools.docs import placement_only, pool_doc, tfjob
from tests.support.paths import EXAMPLES
from trainjobs.check import crd_schema, run
from trainjobs.errors import SpecError
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import parse_documents


def queue_doc(name: str = "team-a", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "GpuQueue",
        "metadata": {"name": name},
        "spec": {"nodePool": "a100", "namespaces": ["training"], **spec},
    }


def _manifests(*docs: dict[str, Any], target: str | None = None) -> list[dict[str, Any]]:
    return run(parse_documents(list(docs)), target=target).manifests  # type: ignore[arg-type]


def _errors(*docs: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as err:
        run(parse_documents(list(docs)))
    return [f.render() for f in err.value.findings]


def _queue_errors(*docs: dict[str, Any]) -> list[str]:
    """The findings about queues, pools and placement of a stack ``check`` refuses."""
    with pytest.raises(SpecError) as err:
        run(parse_documents(list(docs)))
    return placement_only(err.value.findings)


def test_a_queue_is_a_flavor_a_cluster_queue_and_local_queues() -> None:
    objects = _manifests(pool_doc(), queue_doc(namespaces=["training", "research"], cohort="ml"))
    kueue = [m for m in objects if m["apiVersion"] == "kueue.x-k8s.io/v1beta2"]
    assert [(m["kind"], m["metadata"].get("namespace"), m["metadata"]["name"]) for m in kueue] == [
        ("ResourceFlavor", None, "a100"),
        ("ClusterQueue", None, "team-a"),
        ("LocalQueue", "training", "team-a"),
        ("LocalQueue", "research", "team-a"),
    ]
    flavor, cluster_queue, local, _ = kueue
    assert flavor["spec"] == {
        "nodeLabels": {
            "trainjobs.dev/node-pool": "a100",
            "karpenter.k8s.aws/instance-gpu-name": "a100",
        },
        "nodeTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        # Kueue counts them when it matches a job to the flavor, and adds them to its pods.
        "tolerations": [
            {
                "key": "nvidia.com/gpu",
                "operator": "Equal",
                "value": "present",
                "effect": "NoSchedule",
            }
        ],
    }
    assert cluster_queue["spec"] == {
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "In",
                    "values": ["training", "research"],
                }
            ]
        },
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "a100",
                        # Defaults: 2 nodes of the pool, each 4 GPUs, 46 CPU, 500Gi.
                        "resources": [
                            {"name": "cpu", "nominalQuota": "92"},
                            {"name": "memory", "nominalQuota": "1000Gi"},
                            {"name": "nvidia.com/gpu", "nominalQuota": 16},
                        ],
                    }
                ],
            }
        ],
        "cohortName": "ml",
    }
    assert local["spec"] == {"clusterQueue": "team-a"}
    for manifest in kueue:
        assert crd_schema.problems(manifest) == []


def test_queues_on_one_pool_share_its_flavor() -> None:
    objects = _manifests(pool_doc(), queue_doc(gpus=4), queue_doc("team-b", gpus=4))
    assert [m["metadata"]["name"] for m in objects if m["kind"] == "ResourceFlavor"] == ["a100"]
    assert [m["metadata"]["name"] for m in objects if m["kind"] == "ClusterQueue"] == [
        "team-a",
        "team-b",
    ]


def test_operator_target_labels_the_custom_resource() -> None:
    job = tfjob(options={"nodePool": "a100", "queue": "team-a"})
    (tf,) = [m for m in _manifests(pool_doc(), queue_doc(), job) if m["kind"] == "TFJob"]
    assert tf["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "team-a"}
    template = tf["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    assert "kueue.x-k8s.io/pod-group-name" not in (template["metadata"].get("labels") or {})


def test_pods_target_makes_the_pods_one_kueue_pod_group() -> None:
    job = tfjob(ps=True, options={"nodePool": "a100", "queue": "team-a", "target": "pods"})
    pods = [m for m in _manifests(pool_doc(), queue_doc(), job) if m["kind"] == "Pod"]
    assert len(pods) == 3
    for pod in pods:
        labels, annotations = pod["metadata"]["labels"], pod["metadata"]["annotations"]
        assert labels["kueue.x-k8s.io/queue-name"] == "team-a"
        assert labels["kueue.x-k8s.io/pod-group-name"] == "tf"
        assert annotations["kueue.x-k8s.io/pod-group-total-count"] == "3"


def test_queue_findings() -> None:
    job = tfjob(workers=3, gpus=2, options={"nodePool": "a100", "queue": "team-a"})
    assert _queue_errors(pool_doc(), queue_doc(gpus=4, memory="64Gi"), job) == [
        'error: jobs[0].trainjobs.queue: the job needs 6 GPUs at once, but queue "team-a" has '
        "a quota of 4 nvidia.com/gpu; Kueue would never admit it; fix: raise spec.gpus of queue "
        '"team-a" to 6 or run fewer or smaller replicas',
        'error: jobs[0].trainjobs.queue: the job needs 96Gi memory at once, but queue "team-a" '
        "has a quota of 64Gi memory; Kueue would never admit it; fix: raise spec.memory of "
        'queue "team-a" to 96Gi or run fewer or smaller replicas',
    ]
    elsewhere = tfjob(options={"queue": "team-a"})
    elsewhere["metadata"]["namespace"] = "default"
    assert _queue_errors(pool_doc(), queue_doc(), elsewhere) == [
        "error: jobs[0].trainjobs.queue: queue 'team-a' has LocalQueues in training, but the "
        "job runs in 'default' (got 'team-a'); fix: add 'default' to spec.namespaces of queue "
        "'team-a'"
    ]
    assert _queue_errors(pool_doc(), queue_doc(nodePool="h100")) == [
        "error: queues[0].spec.nodePool: no nodePool named 'h100' in this stack (got 'h100'); "
        "fix: use one of: a100"
    ]


def test_a_kind_kueue_does_not_admit_must_use_the_pods_target() -> None:
    (mxjob,) = load_all((EXAMPLES / "mxnet-legacy" / "mxjob.yaml").read_text())
    mxjob["metadata"]["namespace"] = "training"
    options = {"queue": "team-a", "target": "operator"}
    assert _errors(pool_doc(), queue_doc(), {**mxjob, "trainjobs": options}) == [
        "error: jobs[0].trainjobs.queue: Kueue has no integration for MXJob (kubeflow.org/v1) "
        "objects, so the queue would never hold the job back (got 'team-a'); fix: render the "
        "job with target pods (Kueue "
        "admits its pods as a group) at jobs[0].trainjobs.target",
        "advice: jobs[0].kind: MXJob is deprecated: Training Operator v1.9.0 removed it; fix: "
        "the operator target needs Training Operator v1.8.1 or older; the pods target needs no "
        "operator",
    ]
    options["target"] = "pods"
    pods = [
        m
        for m in _manifests(pool_doc(), queue_doc(), {**mxjob, "trainjobs": options})
        if m["kind"] == "Pod"
    ]
    assert pods and all(
        p["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a" for p in pods
    )


def test_on_the_pods_target_the_launcher_joins_the_workers_pod_group() -> None:
    # The MPI Operator runs the launcher as a batch Job beside bare worker Pods. Labelled
    # for Kueue, that Job would be a workload of its own, admitted apart from the workers'
    # pod group: on a queue too small for the workers the launcher ran alone. Unlabelled,
    # the Job is no Kueue job (FindAncestorJobManagedByKueue needs a queue name), so its
    # pod joins the group through its template: one workload of every pod, all or nothing
    # (tests/cluster/test_kueue_admission.py proves it with Kueue).
    (mpijob,) = load_all((EXAMPLES / "mpi-horovod-benchmarks" / "mpijob.yaml").read_text())
    options = {"queue": "team-a", "target": "pods"}
    objects = _manifests(pool_doc(), queue_doc(gpus=16), {**mpijob, "trainjobs": options})
    (launcher,) = [m for m in objects if m["kind"] == "Job"]
    assert not any(k.startswith("kueue.x-k8s.io/") for k in launcher["metadata"]["labels"])
    assert "suspend" not in launcher["spec"]
    workers = [m for m in objects if m["kind"] == "Pod"]
    assert len(workers) == 4
    members = [launcher["spec"]["template"]["metadata"], *(p["metadata"] for p in workers)]
    for meta in members:
        assert meta["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
        assert meta["labels"]["kueue.x-k8s.io/pod-group-name"] == "horovod-benchmarks"
        assert meta["annotations"]["kueue.x-k8s.io/pod-group-total-count"] == "5"


@pytest.mark.parametrize("target", ["operator", "pods"])
def test_a_kind_no_target_can_queue_is_refused_on_every_target(target: str) -> None:
    # PaddlePaddle EDL: Kueue has no TrainingJob integration, and on the pods target
    # its pods come from ReplicaSets and a Job with no pod template to label; the
    # queue used to be dropped without a word there.
    (edl,) = load_all((EXAMPLES / "paddle-edl-fit-a-line" / "trainingjob.yaml").read_text())
    edl["metadata"]["namespace"] = "training"
    options = {"queue": "team-a", "target": target}
    assert _queue_errors(pool_doc(), queue_doc(), {**edl, "trainjobs": options}) == [
        "error: jobs[0].trainjobs.queue: no target can put a TrainingJob through a queue: "
        "Kueue has no integration for it, and its pods come from objects its operator "
        "makes, not from pod templates trainjobs can label (got 'team-a'); fix: remove "
        "jobs[0].trainjobs.queue"
    ]


def test_a_queue_may_preempt() -> None:
    preemption = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
    objects = _manifests(pool_doc(), queue_doc(cohort="ml", preemption=preemption))
    (cluster_queue,) = [m for m in objects if m["kind"] == "ClusterQueue"]
    assert cluster_queue["spec"]["preemption"] == preemption
    assert cluster_queue["spec"]["cohortName"] == "ml"
    assert crd_schema.problems(cluster_queue) == []


def test_a_preemption_policy_kueue_does_not_have_is_refused() -> None:
    errors = _errors(pool_doc(), queue_doc(preemption={"withinClusterQueue": "Always"}))
    assert any("withinClusterQueue" in e for e in errors), errors


def test_a_resource_the_queue_does_not_cover_is_refused() -> None:
    # An MPIJob v1's launcher on the pods target gets the operator's kubectl-delivery init
    # container, which requests 5Gi of ephemeral storage. Kueue admits no workload asking
    # for a resource its ClusterQueue has no quota for ("resource ephemeral-storage
    # unavailable in ClusterQueue": tests/cluster/test_kueue_admission.py).
    (mpijob,) = load_all((EXAMPLES / "mpi-v1-pi" / "mpijob.yaml").read_text())
    job = {**mpijob, "trainjobs": {"queue": "team-a", "target": "pods"}}
    assert _queue_errors(pool_doc(), queue_doc(), job) == [
        "error: jobs[0].trainjobs.queue: the job's pods request ephemeral-storage (pod "
        'pi-launcher, initContainer kubectl-delivery), which queue "team-a" has no quota '
        "for (it covers cpu, memory, nvidia.com/gpu); Kueue would never admit it; fix: give "
        'queue "team-a" a quota of it: spec.ephemeralStorage'
    ]
    assert _queue_errors(pool_doc(), queue_doc(ephemeralStorage="1Gi"), job) == [
        "error: jobs[0].trainjobs.queue: the job needs 5Gi ephemeral-storage at once, but "
        'queue "team-a" has a quota of 1Gi; Kueue would never admit it; fix: raise '
        'spec.ephemeralStorage of queue "team-a" to 5Gi'
    ]
    objects = _manifests(pool_doc(), queue_doc(ephemeralStorage="100Gi"), job)
    (cluster_queue,) = [m for m in objects if m["kind"] == "ClusterQueue"]
    (group,) = cluster_queue["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"]
    assert group["flavors"][0]["resources"][-1] == {
        "name": "ephemeral-storage",
        "nominalQuota": "100Gi",
    }
