"""kubeflow-operators.md §7.3's worked example, asserted exactly on each target.

TrainJob ``tj`` in ``default`` on the built-in ``torch-distributed`` runtime, two nodes
of two GPUs: the operator target is the TrainJob as written; the jobset target is the
JobSet the Trainer v2.3.0 controller makes (§7.3); the pods target is what JobSet v0.12.0
makes of it (§7.5), so that ``PET_MASTER_ADDR=tj-node-0-0.tj`` names the first pod.
"""

from __future__ import annotations

import hashlib
from typing import Any

from tests.support.jobset import jobset_manifests
from trainjobs.frameworks.trainjob import TrainJob, resolve_runtime, trainjob_findings
from trainjobs.targets.jobset_pods import jobset_uid, pods_manifests

DOCUMENT: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "tj", "namespace": "default"},
    "spec": {
        "runtimeRef": {"name": "torch-distributed"},
        "trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 2}}},
    },
}
RANK = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
NODE_CONTAINER = {
    "name": "node",
    "image": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
    # The controller writes the merged resources through Go's Quantity: a string.
    "resources": {"limits": {"nvidia.com/gpu": "2"}},
    "env": [
        {"name": "PET_NNODES", "value": "2"},
        {"name": "PET_NPROC_PER_NODE", "value": "auto"},
        {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": RANK}}},
        {"name": "PET_MASTER_ADDR", "value": "tj-node-0-0.tj"},
        {"name": "PET_MASTER_PORT", "value": "29500"},
    ],
    "ports": [{"containerPort": 29500}],
}
ANCESTOR = {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "tj", "namespace": "default"},
    "spec": {
        "replicatedJobs": [
            {
                "name": "node",
                "groupName": "default",
                "replicas": 1,
                "template": {
                    "metadata": {"labels": ANCESTOR},
                    "spec": {
                        "parallelism": 2,
                        "completions": 2,
                        "template": {"spec": {"containers": [NODE_CONTAINER]}},
                    },
                },
            }
        ],
        "suspend": False,
    },
}


def _job() -> TrainJob:
    return TrainJob.model_validate(DOCUMENT)


def test_operator_target_is_the_trainjob_as_written() -> None:
    job = _job()
    assert job.to_manifest() == DOCUMENT


def test_jobset_target_is_what_the_trainer_controller_creates() -> None:
    job = _job()
    runtime, findings = resolve_runtime(job)
    assert runtime is not None and findings == []
    assert trainjob_findings(job, runtime) == []
    objects, findings = jobset_manifests(job, runtime)
    assert findings == []
    assert objects == [JOBSET]


def test_pods_target_is_what_jobset_creates() -> None:
    uid = jobset_uid("default", "tj")
    assert uid == jobset_uid("default", "tj") != jobset_uid("other", "tj")
    keys = {
        "jobset.sigs.k8s.io/jobset-name": "tj",
        "jobset.sigs.k8s.io/jobset-uid": uid,
        "jobset.sigs.k8s.io/replicatedjob-name": "node",
        "jobset.sigs.k8s.io/restart-attempt": "0",
        "jobset.sigs.k8s.io/replicatedjob-replicas": "1",
        "jobset.sigs.k8s.io/global-replicas": "1",
        "jobset.sigs.k8s.io/job-index": "0",
        "jobset.sigs.k8s.io/job-key": hashlib.sha1(b"default/tj-node-0").hexdigest(),
        "jobset.sigs.k8s.io/job-global-index": "0",
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": "1",
        "jobset.sigs.k8s.io/job-group-index": "0",
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "tj", "namespace": "default"},
        "spec": {
            "clusterIP": "None",
            "selector": {"jobset.sigs.k8s.io/jobset-name": "tj"},
            "publishNotReadyAddresses": True,
        },
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "tj-node-0",
            "namespace": "default",
            "labels": {**ANCESTOR, **keys},
            "annotations": keys,
        },
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "completionMode": "Indexed",
            "suspend": False,
            "template": {
                "metadata": {"labels": keys, "annotations": keys},
                "spec": {
                    "containers": [NODE_CONTAINER],
                    "restartPolicy": "OnFailure",
                    # Indexed Job pods are named <job>-<index> as hosts: tj-node-0-0.tj.
                    "subdomain": "tj",
                },
            },
        },
    }
    objects, _ = jobset_manifests(_job(), resolve_runtime(_job())[0])  # type: ignore[arg-type]
    assert pods_manifests(objects[-1]) == [service, job]
