"""What the sandbox installs of trainjobs' own renders: webhook configurations (by URL on
loopback) and the Trainer's ClusterTrainingRuntimes."""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CRD_PREFERRED",
    "MPIJOB_V1_CRD",
    "MPI_OPERATOR_LOCK_NAMESPACE",
    "OPERATOR_GROUPS",
    "TRAINER_NAMESPACE",
    "TRAINING_OPERATOR_NAMESPACE",
    "TRAINING_OPERATOR_SCHEMES",
    "WEBHOOK_CONFIG",
    "WEBHOOK_SECRET",
    "by_url",
    "shipped_runtimes",
    "trainer_webhooks",
    "training_operator_webhooks",
]

TRAINING_OPERATOR_NAMESPACE = "kubeflow"
TRAINING_OPERATOR_SCHEMES = ("tfjob", "pytorchjob", "xgboostjob", "paddlejob", "jaxjob")
"""--enable-scheme of the Training Operator: every v1.9 kind but MPIJob, whose CRD name
(mpijobs.kubeflow.org) the MPI Operator's v2beta1 MPIJob holds in this cluster."""
MPI_OPERATOR_LOCK_NAMESPACE = "mpi-operator"
WEBHOOK_SECRET = "training-operator-webhook-cert"
WEBHOOK_CONFIG = "validator.training-operator.kubeflow.org"
TRAINER_NAMESPACE = "kubeflow-system"
"""Where the Trainer and JobSet installs run (upstream's namespace for both)."""

CRD_PREFERRED = {"mpijobs.kubeflow.org": "mpi-operator-v0.8/kubeflow.org_mpijobs.yaml"}
MPIJOB_V1_CRD = "training-operator-v1.9.4/kubeflow.org_mpijobs.yaml"
"""The Training Operator's MPIJob v1 CRD, served instead when a stack's Training Operator
runs MPIJob v1 (``Operators.mpijob_crd``)."""
"""CRD names that two shipped files declare, and the file installed here. Otherwise the
last file in sorted order wins (training-operator-v1.9.4 over v1.8.1)."""

OPERATOR_GROUPS = (
    "kubeflow.org",
    "trainer.kubeflow.org",
    "jobset.x-k8s.io",
    "scheduling.volcano.sh",
    "scheduling.x-k8s.io",
)
"""The API groups of the CRDs the controllers here watch from their start."""


def training_operator_webhooks(port: int, ca_pem: bytes) -> dict[str, Any]:
    """trainjobs' own ValidatingWebhookConfiguration for the Training Operator, by URL.

    Taken from what trainjobs renders for a ``TrainingOperator`` with the enabled
    schemes (so the rules are the ones trainjobs installs), with each webhook's
    Service reference replaced by ``https://127.0.0.1:<port><path>``.
    """
    from trainjobs.check import run
    from trainjobs.spec import parse_documents

    kinds = {
        "tfjob": "TFJob",
        "pytorchjob": "PyTorchJob",
        "xgboostjob": "XGBoostJob",
        "paddlejob": "PaddleJob",
        "jaxjob": "JAXJob",
    }
    doc = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "TrainingOperator",
        "metadata": {"name": "training-operator", "namespace": TRAINING_OPERATOR_NAMESPACE},
        "spec": {"enabledSchemes": [kinds[s] for s in TRAINING_OPERATOR_SCHEMES]},
    }
    rendering = run(parse_documents([doc], source="<control plane>"))
    (config,) = [m for m in rendering.manifests if m["kind"] == "ValidatingWebhookConfiguration"]
    return by_url(config, port, ca_pem)


def by_url(config: Mapping[str, Any], port: int, ca_pem: bytes) -> dict[str, Any]:
    """A copy of the webhook configuration with each webhook's Service reference replaced
    by ``https://127.0.0.1:<port><path>``: no Service routes to loopback."""
    copied = copy.deepcopy(dict(config))
    for hook in copied["webhooks"]:
        path = hook["clientConfig"]["service"]["path"]
        hook["clientConfig"] = {
            "url": f"https://127.0.0.1:{port}{path}",
            "caBundle": base64.b64encode(ca_pem).decode(),
        }
    return copied


def _trainer_install(install_runtimes: bool) -> list[dict[str, Any]]:
    """What trainjobs renders for a ``Trainer`` install in the control plane's namespace."""
    from trainjobs.check import run
    from trainjobs.spec import parse_documents

    doc = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "Trainer",
        "metadata": {"name": "trainer", "namespace": TRAINER_NAMESPACE},
        "spec": {"installRuntimes": install_runtimes},
    }
    return [dict(m) for m in run(parse_documents([doc], source="<control plane>")).manifests]


def shipped_runtimes() -> list[dict[str, Any]]:
    """The ClusterTrainingRuntimes trainjobs' Trainer install ships."""
    return [m for m in _trainer_install(True) if m["kind"] == "ClusterTrainingRuntime"]


def trainer_webhooks(which: str, port: int, ca_pem: bytes) -> list[dict[str, Any]]:
    """trainjobs' own webhook configurations of the Trainer install — ``which`` is
    ``trainer`` (defaulter/validator.trainer.kubeflow.org) or ``jobset`` (JobSet's) —
    registered by URL (:func:`by_url`)."""
    configs = []
    for manifest in _trainer_install(False):
        if not manifest["kind"].endswith("WebhookConfiguration"):
            continue
        if manifest["metadata"]["name"].startswith("jobset") != (which == "jobset"):
            continue
        configs.append(by_url(manifest, port, ca_pem))
    assert configs, f"the Trainer install renders no webhook configuration of {which}"
    return configs
