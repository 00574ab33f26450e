"""Framework.lifecycle and success_policy: the operators' rules as data."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.pytorch import FRAMEWORK as PYTORCH
from trainjobs.frameworks.pytorch import PyTorchJob
from trainjobs.frameworks.tensorflow import FRAMEWORK as TENSORFLOW
from trainjobs.frameworks.tensorflow import TFJob
from trainjobs.k8s.model import JobResource
from trainjobs.plan import Replica, RunRules, SuccessPolicy


def _template() -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "image": "i"}]}}


def _tfjob(types: dict[str, int], **spec: Any) -> TFJob:
    replicas = {t: {"replicas": n, "template": _template()} for t, n in types.items()}
    job = TFJob.model_validate(
        {
            "metadata": {"name": "mnist", "namespace": "kubeflow"},
            "spec": {"tfReplicaSpecs": replicas, **spec},
        }
    )
    defaulted = TENSORFLOW.default(job)
    assert isinstance(defaulted, TFJob)
    return defaulted


def _lifecycle(job: JobResource, framework: Framework[Any]) -> RunRules:
    lifecycle = framework.run_rules(job)
    assert lifecycle is not None
    return lifecycle


def test_tfjob_replicas_in_expansion_order_with_their_policies() -> None:
    job = _tfjob({"Worker": 2, "PS": 1, "Chief": 1})
    lifecycle = _lifecycle(job, TENSORFLOW)
    assert lifecycle.replicas == (
        Replica("Chief", 0, "mnist-chief-0", "Never", "tensorflow"),
        Replica("PS", 0, "mnist-ps-0", "Never", "tensorflow"),
        Replica("Worker", 0, "mnist-worker-0", "Never", "tensorflow"),
        Replica("Worker", 1, "mnist-worker-1", "Never", "tensorflow"),
    )
    assert lifecycle.success == SuccessPolicy(roles=("Chief",), summary="the Chief succeeds")
    assert lifecycle.backoff_limit is None


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, SuccessPolicy(roles=("Worker",), index=0, summary="Worker 0 succeeds")),
        (
            {"successPolicy": "AllWorkers"},
            SuccessPolicy(roles=("Worker",), summary="every Worker succeeds"),
        ),
        (
            {"enableDynamicWorker": True},
            SuccessPolicy(
                roles=("Worker",), index=0, tolerated=("Worker",), summary="Worker 0 succeeds"
            ),
        ),
    ],
)
def test_tfjob_without_a_chief(spec: dict[str, Any], expected: SuccessPolicy) -> None:
    assert TENSORFLOW.success_policy(_tfjob({"Worker": 2}, **spec)) == expected


def _pytorchjob(**spec: Any) -> PyTorchJob:
    replicas = spec.pop("replicas", {"Master": 1, "Worker": 2})
    job = PyTorchJob.model_validate(
        {
            "metadata": {"name": "ddp"},
            "spec": {
                "pytorchReplicaSpecs": {
                    t: {"replicas": n, "template": _template(), "restartPolicy": "ExitCode"}
                    for t, n in replicas.items()
                },
                **spec,
            },
        }
    )
    defaulted = PYTORCH.default(job)
    assert isinstance(defaulted, PyTorchJob)
    return defaulted


def test_pytorchjob_rules() -> None:
    lifecycle = _lifecycle(
        _pytorchjob(runPolicy={"backoffLimit": 3, "activeDeadlineSeconds": 60}), PYTORCH
    )
    assert [(r.workload, r.restart_policy) for r in lifecycle.replicas] == [
        ("ddp-master-0", "ExitCode"),
        ("ddp-worker-0", "ExitCode"),
        ("ddp-worker-1", "ExitCode"),
    ]
    assert (lifecycle.backoff_limit, lifecycle.active_deadline_seconds) == (3, 60)
    assert lifecycle.success.summary == "the Master succeeds"
    workers_only = _pytorchjob(replicas={"Worker": 2})
    assert PYTORCH.success_policy(workers_only).summary == "every Worker succeeds"
    elastic = _pytorchjob(replicas={"Worker": 2}, elasticPolicy={"maxReplicas": 3})
    assert PYTORCH.success_policy(elastic) == SuccessPolicy(
        roles=("Worker",), need="any", summary="any Worker succeeds"
    )


def test_success_policy_decides() -> None:
    replicas = (Replica("Chief", 0, "c0"), Replica("Worker", 0, "w0"), Replica("Worker", 1, "w1"))
    every = SuccessPolicy()
    assert every.deciding(replicas) == replicas
    assert not every.satisfied(replicas, {"c0", "w0"})
    assert every.satisfied(replicas, {"c0", "w0", "w1"})
    worker0 = SuccessPolicy(roles=("Worker",), index=0)
    assert worker0.deciding(replicas) == (replicas[1],)
    assert worker0.satisfied(replicas, {"w0"})
    any_worker = SuccessPolicy(roles=("Worker",), need="any")
    assert any_worker.satisfied(replicas, {"w1"})
    assert not SuccessPolicy(roles=("Launcher",)).satisfied(replicas, {"c0", "w0", "w1"})


def test_mpijob_launcher_decides_and_workers_serve_ssh() -> None:
    from trainjobs.frameworks.mpi import FRAMEWORK as MPI
    from trainjobs.frameworks.mpi import MPIJob

    template = {"spec": {"containers": [{"name": "m", "image": "i"}]}}
    job = MPI.default(
        MPIJob.model_validate(
            {
                "metadata": {"name": "pi"},
                "spec": {
                    "mpiReplicaSpecs": {
                        "Launcher": {"replicas": 1, "template": template},
                        "Worker": {"replicas": 2, "template": template},
                    }
                },
            }
        )
    )
    lifecycle = _lifecycle(job, MPI)
    assert lifecycle.replicas == (
        Replica("Launcher", 0, "pi-launcher", "OnFailure"),
        Replica("Worker", 0, "pi-worker-0", "Never", remote_shell=True),
        Replica("Worker", 1, "pi-worker-1", "Never", remote_shell=True),
    )
    assert lifecycle.success == SuccessPolicy(roles=("Launcher",), summary="the Launcher succeeds")
    # The launcher's batch/v1 Job has Kubernetes' default backoffLimit when runPolicy sets none.
    assert lifecycle.backoff_limit == 6


def test_mpijob_v1_launcher_is_a_bare_pod_without_an_index() -> None:
    from trainjobs.frameworks.mpi_v1 import FRAMEWORK as MPI_V1
    from trainjobs.frameworks.mpi_v1 import MPIJobV1

    template = {"spec": {"containers": [{"name": "m", "image": "i"}]}}
    job = MPI_V1.default(
        MPIJobV1.model_validate(
            {
                "metadata": {"name": "pi"},
                "spec": {
                    "mpiReplicaSpecs": {
                        "Launcher": {"template": template},
                        "Worker": {"replicas": 1, "template": template},
                    }
                },
            }
        )
    )
    lifecycle = _lifecycle(job, MPI_V1)
    assert lifecycle.replicas == (
        Replica("Launcher", 0, "pi-launcher", "Never"),
        Replica("Worker", 0, "pi-worker-0", "Never", remote_shell=True),
    )
    assert lifecycle.success.roles == ("Launcher",)


def test_caffe2job_every_worker_decides() -> None:
    from trainjobs.frameworks.caffe2 import FRAMEWORK as CAFFE2
    from trainjobs.frameworks.caffe2 import Caffe2Job

    job = CAFFE2.default(
        Caffe2Job.model_validate(
            {
                "apiVersion": "kubeflow.org/v1alpha1",
                "kind": "Caffe2Job",
                "metadata": {"name": "c2"},
                "spec": {
                    "backendSpecs": {"backendType": "redis", "redisHost": "r", "redisPort": 6379},
                    "replicaSpecs": {
                        "replicas": 2,
                        "template": {"spec": {"containers": [{"name": "caffe2", "image": "i"}]}},
                    },
                },
            }
        )
    )
    lifecycle = _lifecycle(job, CAFFE2)
    assert lifecycle.replicas == (
        Replica("Worker", 0, "c2-worker-0", "Never"),
        Replica("Worker", 1, "c2-worker-1", "Never"),
    )
    assert lifecycle.success == SuccessPolicy(roles=("Worker",), summary="every worker succeeds")
