"""Proof 2: the pods target is the operator's expansion, as the real operators make it.

For each kind, the example's custom resource goes to the real Training Operator v1.9.4
(TFJob, PyTorchJob and its elastic form, XGBoostJob, JAXJob, PaddleJob) or MPI Operator
v0.8.0 (MPIJob v2beta1); the Pods, Services (and for MPI the launcher Job, hostfile
ConfigMap and SSH Secret) it creates are read back and compared with
``render --target pods`` of the same job. Both sides are compared as the API server
stores them: our render goes through a server-side dry run first, so defaults and
admission are the same on both sides and every remaining difference is trainjobs'.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.expansion import delete_all, render_doc, settled_diff, stored
from tests.cluster.kube import apply
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.cluster


COMPARED_KINDS = ("Pod", "Service", "ConfigMap", "Secret", "Job")
"""Kinds of the pods target's output that an operator creates. Not compared: the
elastic PyTorchJob's HorizontalPodAutoscaler, which the pods target leaves out on
purpose (it would scale a PyTorchJob that does not exist; README, pods target)."""

EXPANSION_CASES = [
    "tf-mnist/tfjob.yaml",
    "pytorch-ddp/pytorchjob.yaml",
    "pytorch-elastic/pytorchjob.yaml",
    "xgboost-dist/xgboostjob.yaml",
    "jax-simple/jaxjob.yaml",
    "paddle-collective/paddlejob.yaml",
    "mpi-horovod-benchmarks/mpijob.yaml",
]


def _job_doc(relative: str, namespace: str) -> dict[str, Any]:
    (doc,) = [d for d in yaml.safe_load_all((EXAMPLES / relative).read_text()) if d]
    doc = copy.deepcopy(doc)
    doc["metadata"]["namespace"] = namespace
    doc.pop("trainjobs", None)
    return dict(doc)


@pytest.mark.parametrize("relative", EXPANSION_CASES, ids=lambda r: r.split("/")[0])
def test_pods_target_equals_operator_expansion(
    cluster: ControlPlane, kwok_node: str, relative: str
) -> None:
    """The operator's Pods and Services are field for field what `render --target pods` emits.

    Catches any drift between trainjobs' reading of the operators and what they do:
    a replica name, a label or annotation the controller adds or copies, an env var's
    value or order (TF_CONFIG, MASTER_ADDR, WORLD_SIZE, PET_*, PADDLE_*, the MPI
    hostfile), a port, hostname/subdomain, restartPolicy, an init container.
    """
    assert_pods_target_is_the_operators(cluster, relative)


def assert_pods_target_is_the_operators(
    cluster: ControlPlane, relative: str, kinds: tuple[str, ...] = COMPARED_KINDS
) -> None:
    """The example's pods-target render (of ``kinds``) equals what its operator makes on
    ``cluster``, both as the API server stores them."""
    namespace = "expansion-" + relative.split("/")[0]
    doc = _job_doc(relative, namespace)
    expected_objects = [m for m in render_doc(doc, "pods") if m["kind"] in kinds]
    cluster.ensure_namespace(namespace)
    expected = stored(cluster, expected_objects)

    custom_resources = [m for m in render_doc(doc, "operator") if m["kind"] == doc["kind"]]
    result = apply(cluster, custom_resources, dry_run=False)
    assert result.ok, f"the operator target's {doc['kind']} was refused:\n{result}"
    try:
        diff = settled_diff(cluster, namespace, expected, "operator")
        assert not diff, f"{relative}: the pods target differs from the operator:\n{diff}"
    finally:
        delete_all(cluster, custom_resources, namespace)
