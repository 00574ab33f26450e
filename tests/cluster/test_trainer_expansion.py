"""Proof 2 for Kubeflow Trainer v2: the jobset and pods targets are what the real
controllers make of a TrainJob.

Each TrainJob goes to the real Trainer v2.3.0 controller manager, with its runtime: the
ClusterTrainingRuntimes trainjobs' ``Trainer`` install ships, or the TrainingRuntime its
file declares. What the Trainer creates — the JobSet, and for MPI the SSH Secret and the
hostfile ConfigMap — is compared with ``render --target jobset``; what the real JobSet
v0.12.0 controller then makes of that JobSet — the Indexed batch Jobs and the headless
Service — with ``render --target pods``. Both sides are compared as the API server stores
them (our render through a server-side dry run, so defaults and the JobSet webhook's
mutation are the same on both sides): every remaining difference is trainjobs'.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from tests.cluster import control_plane
from tests.cluster.control_plane import ControlPlane
from tests.cluster.expansion import (
    Manifest,
    delete_all,
    is_runtime_snapshot,
    render_doc,
    settled_diff,
    stored,
)
from tests.cluster.kube import apply, poll
from tests.cluster.refusals import custom_resource_refused, our_errors, said_at_apply
from tests.frameworks.trainjob.test_worked_example import DOCUMENT
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.cluster

TRAINER_GROUP = "trainer.kubeflow.org"
TRAINER_MAKES = ("JobSet", "Secret", "ConfigMap", "PodGroup")
"""What the Trainer controller creates for a TrainJob (the jobset target's output)."""
JOBSET_MAKES = ("Job", "Service", "PersistentVolumeClaim")
"""What the JobSet controller creates for a JobSet (the pods target adds these)."""

REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
INITIALIZERS = ("dataset-initializer", "model-initializer")
TEST_VOLUME = "trainjobs.dev/test-volume-of"
KWOK_SUCCEED = "trainjobs.dev/kwok-succeed"
"""The annotation our kwok stages finish a running pod on (control_plane.KWOK_STAGES)."""

WORKED_EXAMPLE = DOCUMENT
"""kubeflow-operators.md §7.3: TrainJob tj on torch-distributed, two nodes of two GPUs."""

CASES = {
    "worked-example": None,
    "trainjob-torch-gpu": "trainjob-torch-gpu/trainjob.yaml",
    "trainjob-mpi": "trainjob-mpi/trainjob.yaml",
    "trainjob-dataset": "trainjob-dataset/trainjob.yaml",
    "local-trainjob": "local-trainjob/trainjob.yaml",
}


def _documents(case: str, namespace: str) -> list[dict[str, Any]]:
    """The case's Trainer documents (TrainJob and any runtime it declares), moved to
    ``namespace``, without trainjobs' own options or platform kinds."""
    relative = CASES[case]
    if relative is None:
        docs = [copy.deepcopy(WORKED_EXAMPLE)]
    else:
        docs = [
            d
            for d in yaml.safe_load_all((EXAMPLES / relative).read_text())
            if d and d["apiVersion"].split("/")[0] == TRAINER_GROUP
        ]
    for doc in docs:
        doc.pop("trainjobs", None)
        if doc["kind"] != "ClusterTrainingRuntime":
            doc["metadata"]["namespace"] = namespace
    return docs


def _render(docs: list[dict[str, Any]], target: str, kinds: tuple[str, ...]) -> list[Manifest]:
    return [m for m in render_doc(docs, target) if m["kind"] in kinds]


def _provide_volumes(cluster: ControlPlane, expected: list[Manifest]) -> None:
    """A PersistentVolume for each claim JobSet is to create (no provisioner runs here),
    reserved for it, so the claim binds and the pods that mount it schedule."""
    for claim in (m for m in expected if m["kind"] == "PersistentVolumeClaim"):
        meta = claim["metadata"]
        cluster.client.create(
            "/api/v1/persistentvolumes",
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {
                    "name": f"{meta['namespace']}-{meta['name']}",
                    "labels": {TEST_VOLUME: meta["namespace"]},
                },
                "spec": {
                    "capacity": claim["spec"]["resources"]["requests"],
                    "accessModes": claim["spec"]["accessModes"],
                    "persistentVolumeReclaimPolicy": "Retain",
                    "hostPath": {"path": f"/tmp/{meta['namespace']}-{meta['name']}"},
                    "claimRef": {"namespace": meta["namespace"], "name": meta["name"]},
                },
            },
        )


def _finish_initializers(cluster: ControlPlane, namespace: str, jobs: list[Manifest]) -> None:
    """Let each initializer's pods succeed on kwok (no image runs here), so JobSet creates
    the replicated jobs that depend on it (dependsOn: Complete), as on a real cluster."""
    initializers = {
        m["metadata"]["labels"][REPLICATED_JOB]
        for m in jobs
        if m["kind"] == "Job" and m["metadata"]["labels"][REPLICATED_JOB] in INITIALIZERS
    }
    for name in sorted(initializers):
        selector = f"{REPLICATED_JOB}={name}"

        def pods_of(selector: str = selector) -> list[Manifest] | None:
            pods = cluster.client.items(
                f"/api/v1/namespaces/{namespace}/pods?labelSelector={selector}"
            )
            return pods or None

        for pod in poll(f"the {name} pods in {namespace}", pods_of, 60):
            cluster.kubectl(
                "annotate",
                "-n",
                namespace,
                "pod",
                pod["metadata"]["name"],
                f"{KWOK_SUCCEED}=true",
            )


def _assert_same_runtime(
    cluster: ControlPlane,
    namespace: str,
    docs: list[dict[str, Any]],
    inputs: list[Manifest],
    shipped: list[Manifest],
) -> None:
    """The runtime the Trainer resolved (its runtime snapshot) is the one trainjobs did."""
    (job,) = [d for d in docs if d["kind"] == "TrainJob"]
    name = job["spec"]["runtimeRef"]["name"]
    declared = [m for m in (*inputs, *shipped) if m["kind"].endswith("TrainingRuntime")]
    (runtime,) = [m for m in declared if m["metadata"]["name"] == name]
    snapshots = [
        m
        for m in cluster.client.items(f"/api/v1/namespaces/{namespace}/configmaps")
        if is_runtime_snapshot(m)
    ]
    assert [m["metadata"]["name"] for m in snapshots] == [
        f"{job['metadata']['name']}-runtime-snapshot"
    ]
    theirs = yaml.safe_load(snapshots[0]["data"]["runtime"])
    (ours,) = stored(cluster, [runtime])
    assert (theirs["kind"], _without_empty(theirs["spec"])) == (
        ours["kind"],
        _without_empty(ours["spec"]),
    )


def _without_empty(value: Any) -> Any:
    """The value without empty maps: Go's YAML of a typed object writes its zero-valued
    structs (``metadata: {}``, ``resources: {}``) where the API server's JSON has none."""
    if isinstance(value, dict):
        kept = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v != {}}
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value


@pytest.fixture(scope="module")
def shipped_runtimes(cluster: ControlPlane) -> list[Manifest]:
    """The ClusterTrainingRuntimes trainjobs' Trainer install ships, which the control
    plane installed."""
    runtimes = control_plane.shipped_runtimes()
    path = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"
    assert {r["metadata"]["name"] for r in runtimes} >= {"torch-distributed"}
    assert {r["metadata"]["name"] for r in cluster.client.items(path)} >= {
        r["metadata"]["name"] for r in runtimes
    }
    return runtimes


@pytest.mark.parametrize("case", CASES)
def test_jobset_and_pods_targets_equal_the_controllers(
    cluster: ControlPlane, kwok_node: str, shipped_runtimes: list[Manifest], case: str
) -> None:
    """The Trainer's JobSet (Secret, ConfigMap) is field for field `render --target jobset`,
    and JobSet's Jobs and Service are `render --target pods`.

    Catches any drift between trainjobs' reading of the two controllers and what they do:
    the replicated jobs and their order, a label or annotation either controller adds
    (ancestor step, jobset-name, job-key, restart-attempt, the completion-index rank), an
    env var (PET_*, OMPI_*, STORAGE_URI), resources merged from resourcesPerNode, the
    initializer volume, dependsOn, hostnames and subdomain, the MPI hostfile's lines.
    """
    namespace = "trainer-" + case
    docs = _documents(case, namespace)
    cluster.ensure_namespace(namespace)
    trainer_side = stored(cluster, _render(docs, "jobset", TRAINER_MAKES))
    assert any(m["kind"] == "JobSet" for m in trainer_side)
    pods_side = _render(docs, "pods", JOBSET_MAKES)
    assert {"Job", "Service"} <= {m["kind"] for m in pods_side}
    jobset_side = stored(cluster, pods_side)

    inputs = render_doc(docs, "operator")
    result = apply(cluster, inputs, dry_run=False)
    assert result.ok, f"the operator target's TrainJob was refused:\n{result}"
    try:
        diff = settled_diff(cluster, namespace, trainer_side, "Trainer v2.3.0", TRAINER_MAKES)
        assert not diff, f"{case}: the jobset target differs from the Trainer:\n{diff}"
        _provide_volumes(cluster, jobset_side)
        _finish_initializers(cluster, namespace, jobset_side)
        diff = settled_diff(cluster, namespace, jobset_side, "JobSet v0.12.0", JOBSET_MAKES)
        assert not diff, f"{case}: the pods target differs from JobSet:\n{diff}"
        _assert_same_runtime(cluster, namespace, docs, inputs, shipped_runtimes)
    finally:
        delete_all(cluster, inputs, namespace)
        cluster.kubectl(
            "delete", "pv", "--wait=false", "-l", f"{TEST_VOLUME}={namespace}", check=False
        )


def _trainjob(**spec: Any) -> dict[str, Any]:
    """The worked example with ``spec`` fields replaced (None removes one)."""
    doc = copy.deepcopy(WORKED_EXAMPLE)
    doc["metadata"]["namespace"] = "trainer-refusals"
    for key, value in spec.items():
        if value is None:
            doc["spec"].pop(key, None)
        else:
            doc["spec"][key] = value
    return doc


TRAINER = WORKED_EXAMPLE["spec"]["trainer"]
BAD_TRAINJOBS: list[tuple[str, dict[str, Any]]] = [
    ("numNodes 0", _trainjob(trainer={**TRAINER, "numNodes": 0})),
    (
        "reserved env PET_NNODES",
        _trainjob(trainer={**TRAINER, "env": [{"name": "PET_NNODES", "value": "4"}]}),
    ),
    (
        "reserved env PET_MASTER_ADDR",
        _trainjob(trainer={**TRAINER, "env": [{"name": "PET_MASTER_ADDR", "value": "x"}]}),
    ),
    ("runtime of another kind", _trainjob(runtimeRef={"name": "torch-distributed", "kind": "Foo"})),
    ("runtime unknown", _trainjob(runtimeRef={"name": "no-such-runtime"})),
    (
        "name too long for its pods",
        {**_trainjob(), "metadata": {"name": "t" * 60, "namespace": "trainer-refusals"}},
    ),
    (
        "name not a DNS label",
        {**_trainjob(), "metadata": {"name": "tj.one", "namespace": "trainer-refusals"}},
    ),
    ("unknown spec field", _trainjob(bogus=1)),
    (
        "v2.1 podTemplateOverrides",
        _trainjob(podTemplateOverrides=[{"targetJobs": [{"name": "node"}]}]),
    ),
    ("v2.0 podSpecOverrides", _trainjob(podSpecOverrides=[{"targetJobs": [{"name": "node"}]}])),
    (
        "runtimePatches for a job the runtime lacks",
        _trainjob(
            runtimePatches=[
                {
                    "manager": "me",
                    "trainingRuntimeSpec": {
                        "template": {"spec": {"replicatedJobs": [{"name": "launcher"}]}}
                    },
                }
            ]
        ),
    ),
    (
        "torchtune on 2 nodes",
        _trainjob(
            runtimeRef={"name": "torchtune-llama3.2-1b"},
            trainer={"numNodes": 2, "command": ["tune", "run"]},
        ),
    ),
    ("managedBy of another controller", _trainjob(managedBy="example.com/other")),
    (
        "dataset initializer without one in the runtime",
        _trainjob(initializer={"dataset": {"storageUri": "hf://x/y"}}),
    ),
]
"""TrainJobs the Trainer v2.3.0 webhook, the CRD schema, its controller or JobSet's webhook
refuse, each once; base: the worked example, on the shipped runtimes."""


def test_the_stage_check_names_refuses_the_trainjob(
    cluster: ControlPlane, shipped_runtimes: list[Manifest]
) -> None:
    """Each bad TrainJob's errors name the stage that refuses it: when one is said to be
    refused at apply (the Trainer's webhook, the CRD schema, the API server), the real
    API server refuses the TrainJob; when every error is the controller's (a JobSet that
    JobSet's webhook refuses, pods that cannot be made) or trainjobs' own, it is stored.
    Catches a finding that promises `kubectl apply` fails when it would not, and the
    reverse, and a TrainJob trainjobs passes that the cluster refuses."""
    cluster.ensure_namespace("trainer-refusals")
    base = _trainjob()
    assert not our_errors(base) and not custom_resource_refused(cluster, base)
    wrong = []
    for name, doc in BAD_TRAINJOBS:
        errors = our_errors(doc)
        refused = custom_resource_refused(cluster, doc)
        said = "; ".join(f"{f.code} [{f.rejected_by}]" for f in errors) or "nothing"
        if not errors and not refused:
            wrong.append(f"{name}: nobody refuses it (not a bad input)")
        elif any(said_at_apply(f) for f in errors) != bool(refused):
            wrong.append(f"{name}: trainjobs says {said}; apply: {refused or 'accepted'}")
    assert not wrong, "stages that are not the one refusing:\n" + "\n".join(wrong)
