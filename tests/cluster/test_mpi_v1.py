"""MPIJob v1 (kubeflow.org/v1) on the real Training Operator v1.9.4.

The session's control plane serves mpijobs.kubeflow.org as the MPI Operator's v2beta1, so
an MPIJob v1 cannot run there. This module starts its own, from a stack that installs a
TrainingOperator running every v1.9 kind and no MPIOperator: the sandbox then serves
the Training Operator's v1 CRD and runs no MPI Operator, as such a cluster would
(``trainjobs.sandbox.operators``). On it, the example mpi-v1-pi proves what the other
kinds prove on the session's plane:

* the pods target is the operator's expansion (tests/cluster/test_operator_expansion.py):
  the Pods, ConfigMap (hostfile and kubexec.sh), ServiceAccount, Role and RoleBinding the
  Training Operator makes are field for field ``render --target pods``;
* ``trainjobs convert`` of it runs on Trainer + JobSet with pods that agree with the v1
  job's on what the training code sees (tests/cluster/test_convert_expansion.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cluster.control_plane import ControlPlane, running_for_tests
from tests.cluster.test_convert_expansion import assert_v1_and_converted_agree
from tests.cluster.test_operator_expansion import (
    COMPARED_KINDS,
    assert_pods_target_is_the_operators,
)
from trainjobs.sandbox.operators import operators_from
from trainjobs.spec import parse_documents

pytestmark = pytest.mark.cluster

EXAMPLE = "mpi-v1-pi/mpijob.yaml"
TRAINING_OPERATOR = {
    "apiVersion": "trainjobs.dev/v1alpha1",
    "kind": "TrainingOperator",
    "metadata": {"name": "training-operator"},
    "spec": {},
}
"""Every kind of v1.9.4, MPIJob among them (no ``enabledSchemes``: upstream's default)."""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """This module's control plane (it overrides the session's ``cluster``, so the
    ``kwok_node`` fixture puts its node here)."""
    platform = parse_documents([TRAINING_OPERATOR], source="<test_mpi_v1>").platform
    operators = operators_from(platform)
    assert operators.mpi_operator is None, operators
    plane = ControlPlane(tmp_path_factory.mktemp("mpi-v1"), operators=operators)
    with running_for_tests(plane) as running:
        yield running


def test_the_plane_serves_mpijob_v1(cluster: ControlPlane) -> None:
    crd = cluster.client.get(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/mpijobs.kubeflow.org"
    )
    assert crd is not None
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1"]
    assert "mpi-operator" not in {p.name for p in cluster.programs}


def test_pods_target_equals_the_training_operators_mpijob_v1(
    cluster: ControlPlane, kwok_node: str
) -> None:
    rbac = ("ServiceAccount", "Role", "RoleBinding")
    assert_pods_target_is_the_operators(cluster, EXAMPLE, (*COMPARED_KINDS, *rbac))


def test_mpijob_v1_and_its_conversion_agree(cluster: ControlPlane, kwok_node: str) -> None:
    assert_v1_and_converted_agree(cluster, EXAMPLE)
