"""Which v1 kinds become a TrainJob, how, and why the others cannot.

One :class:`Convertible` line per kind a Trainer v2.3 runtime can run: the framework
that reads it (from the registry), the replica types that become the runtime's nodes,
the runtime policy, and the ClusterTrainingRuntime Trainer ships for it (used when the
job's pod template holds nothing a TrainJob cannot set itself). One :class:`Refused`
line per kind no runtime can run: Trainer v2.3's runtimes write only torchrun's
``PET_*``, JAX's coordinator, XGBoost's tracker and the MPI hostfile; a framework whose
processes read a per-pod config of their own (TensorFlow's ``TF_CONFIG``, PaddlePaddle's
``PADDLE_*``, MXNet's ``DMLC_*``, the seed operators') gets none of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["CONVERTIBLE", "REFUSED", "TRAINJOB", "Convertible", "Refused"]

TRAINJOB: Final = ("trainer.kubeflow.org/v1alpha1", "TrainJob")


@dataclass(frozen=True)
class Convertible:
    """How a v1 kind becomes a TrainJob.

    Attributes:
        framework: the registry name of the framework that parses it.
        policy: the runtime's ``mlPolicy`` key and ``trainer.kubeflow.org/framework``
            label (``torch``, ``jax``, ``xgboost``, ``mpi``).
        node_roles: the replica types whose pods are the runtime's nodes, in rank order
            (a PyTorchJob's Master is node 0).
        launcher: the replica type that becomes the ``launcher`` job (MPI); "" for none.
        shipped: the ClusterTrainingRuntime Trainer v2.3 ships for the policy; "" when
            it ships none (MPI: a TrainingRuntime is always written).
    """

    framework: str
    policy: str
    node_roles: tuple[str, ...]
    launcher: str = ""
    shipped: str = ""


CONVERTIBLE: Final[dict[tuple[str, str], Convertible]] = {
    ("kubeflow.org/v1", "PyTorchJob"): Convertible(
        "pytorch", "torch", ("Master", "Worker"), shipped="torch-distributed"
    ),
    ("kubeflow.org/v1", "JAXJob"): Convertible(
        "jax", "jax", ("Worker",), shipped="jax-distributed"
    ),
    ("kubeflow.org/v1", "XGBoostJob"): Convertible(
        "xgboost", "xgboost", ("Master", "Worker"), shipped="xgboost-distributed"
    ),
    ("kubeflow.org/v2beta1", "MPIJob"): Convertible("mpi", "mpi", ("Worker",), "Launcher"),
    ("kubeflow.org/v1", "MPIJob"): Convertible("mpi-v1", "mpi", ("Worker",), "Launcher"),
}


@dataclass(frozen=True)
class Refused:
    """Why a kind cannot become a TrainJob, and what to do instead."""

    why: str
    fix: str


_OPERATOR = (
    "keep it on its operator (trainjobs render --target operator) or run it without one "
    "(--target pods); a TrainJob needs a runtime that writes that config"
)
_SEED = (
    "run it with --target pods: trainjobs makes the pods and Services its operator made, "
    "config included"
)

REFUSED: Final[dict[str, Refused]] = {
    "TFJob": Refused(
        "TensorFlow reads TF_CONFIG, a per-pod cluster spec naming every chief, ps and "
        "worker and the pod's own role; no Trainer v2.3 runtime writes it, nor runs "
        "parameter servers",
        _OPERATOR,
    ),
    "PaddleJob": Refused(
        "PaddlePaddle reads PADDLE_* per pod (its trainer endpoints and the pod's role "
        "and rank); no Trainer v2.3 runtime writes them",
        _OPERATOR,
    ),
    "MXJob": Refused(
        "MXNet reads DMLC_ROLE and DMLC_PS_* per pod (scheduler, server, worker); no "
        "Trainer v2.3 runtime writes them",
        _SEED,
    ),
    "Caffe2Job": Refused(
        "Caffe2 reads CAFFE2_CONFIG and its rendezvous backend per pod; no Trainer v2.3 "
        "runtime writes them",
        _SEED,
    ),
    "MSJob": Refused(
        "MindSpore reads its scheduler address and the pod's role (MS_ROLE, MS_SCHED_*) "
        "per pod; no Trainer v2.3 runtime writes them",
        _SEED,
    ),
    "TrainingJob": Refused(
        "PaddlePaddle EDL's controller scales its trainers and writes their endpoints at "
        "run time; a TrainJob has a fixed node count and no such controller",
        "keep it on the EDL controller (trainjobs render --target operator)",
    ),
}
