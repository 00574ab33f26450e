"""Restart policies by controller and framework, and clean-up of finished jobs."""

from __future__ import annotations

from typing import Any

from tests.check.rules.helpers import container, paths, pod, violations, workload
from trainjobs.frameworks.mpi import FRAMEWORK as MPI
from trainjobs.frameworks.tensorflow import FRAMEWORK as TF


def _tfjob(restart: str, **spec: Any) -> dict[str, Any]:
    job = TF.model.model_validate(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": "t", "namespace": "training"},
            "spec": {
                "tfReplicaSpecs": {
                    "Worker": {
                        "restartPolicy": restart,
                        "template": {"spec": {"containers": [container("tensorflow")]}},
                    }
                },
                **spec,
            },
        }
    )
    return TF.operator_manifest(TF.default(job))


def test_batch_jobs_need_on_failure_or_never() -> None:
    assert violations("restart.workload", workload("batch/v1", "Job")) == [
        "spec.template.spec.restartPolicy: a Job's pods must have restartPolicy OnFailure or "
        "Never; fix: set restartPolicy: OnFailure"
    ]
    assert violations("restart.workload", workload("batch/v1", "Job", restartPolicy="Never")) == []


def test_deployments_need_always() -> None:
    assert violations("restart.workload", workload("apps/v1", "Deployment")) == []
    bad = workload("apps/v1", "StatefulSet", restartPolicy="Never")
    assert paths("restart.workload", bad) == ["spec.template.spec.restartPolicy"]


def test_bare_pods_are_not_controllers() -> None:
    assert violations("restart.workload", pod(restartPolicy="Never")) == []


def test_always_on_a_training_pod_and_a_replica() -> None:
    assert violations("restart.always", pod(restartPolicy="Always")) == [
        "spec.restartPolicy: restartPolicy Always starts the container again even after it "
        "exits 0, so the replica never completes and the job never succeeds (got 'Always'); "
        "fix: use OnFailure (retry on error) or Never"
    ]
    assert paths("restart.always", _tfjob("Always")) == ["spec.tfReplicaSpecs.Worker.restartPolicy"]
    assert violations("restart.always", _tfjob("ExitCode")) == []
    assert violations("restart.always", workload("apps/v1", "Deployment")) == []


def test_restart_policy_the_operator_accepts() -> None:
    assert violations("restart.framework", _tfjob("ExitCode")) == []
    mpijob = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "m", "namespace": "training"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": "ExitCode",
                    "template": {"spec": {"containers": [container("launcher")]}},
                }
            }
        },
    }
    assert MPI.restart_policies == ("Never", "OnFailure")
    assert violations("restart.framework", mpijob) == [
        "spec.mpiReplicaSpecs.Launcher.restartPolicy: the MPI Operator v0.8 accepts only "
        "restartPolicy Never, OnFailure for MPIJob (got 'ExitCode'); fix: use one of Never, "
        "OnFailure"
    ]


def test_ttl_advice_for_jobs_and_custom_resources_with_a_run_policy() -> None:
    (line,) = violations("ttl.unset", _tfjob("Never"))
    assert line.startswith(
        "spec.runPolicy.ttlSecondsAfterFinished: the TFJob stays in the cluster after it "
        "finishes, until someone deletes it; fix: set runPolicy.ttlSecondsAfterFinished "
        "(e.g. 86400) to let the cluster delete it; with Pulumi, though, the next "
        "`pulumi refresh` then forgets the job and `pulumi up` creates it again"
    )
    assert violations("ttl.unset", _tfjob("Never", runPolicy={"ttlSecondsAfterFinished": 60})) == []
    assert paths("ttl.unset", workload("batch/v1", "Job")) == ["spec.ttlSecondsAfterFinished"]
    assert violations("ttl.unset", pod()) == []
    assert violations("ttl.unset", workload("apps/v1", "Deployment")) == []
