"""Typed components for the operator installs."""

from __future__ import annotations

from trainjobs.components.platform import PlatformComponent

__all__ = ["JobSet", "MPIOperator", "Trainer", "TrainingOperator"]


class TrainingOperator(PlatformComponent):
    """The Kubeflow Training Operator v1 (standalone install): CRDs, RBAC, Deployment,
    Service and validating webhooks.

    ``spec`` is a ``trainjobs.platform.training_operator.TrainingOperatorSpec``
    (``version``, ``enabledSchemes``, ``gangScheduler``, ``image`` …). Its CRDs are kept
    when the stack is destroyed; jobs of the kinds it runs are created after it.
    """

    kind = "TrainingOperator"


class MPIOperator(PlatformComponent):
    """The Kubeflow MPI Operator v0.8 (MPIJob ``kubeflow.org/v2beta1``).

    ``spec`` is a ``trainjobs.platform.mpi_operator.MPIOperatorSpec`` (``rbac``,
    ``gangScheduler``, ``image`` …).
    """

    kind = "MPIOperator"


class Trainer(PlatformComponent):
    """Kubeflow Trainer v2.3.0 (TrainJob, ClusterTrainingRuntime), with JobSet unless
    ``installJobSet: false``.

    ``spec`` is a ``trainjobs.platform.trainer.TrainerSpec``.
    """

    kind = "Trainer"


class JobSet(PlatformComponent):
    """The JobSet v0.12.0 controller on its own (namespace ``jobset-system``).

    ``spec`` is a ``trainjobs.platform.jobset.JobSetSpec``.
    """

    kind = "JobSet"
